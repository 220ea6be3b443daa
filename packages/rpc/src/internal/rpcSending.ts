// Sending and asking: a message to an endpoint of this node is delivered in place (decoded as it would be from the
// wire); one to another node goes on the open control connection to it, dialled if there is none. An ask waits for
// its reply in the ask table, with its deadline.
import { Codec, type Envelope, Errors, RpcAddress } from "@kindling/protocol"
import type * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Exit from "effect/Exit"
import type * as Schema from "effect/Schema"
import type * as Api from "../RpcEnv.js"
import type { AskTable } from "./rpcAsks.js"
import type { Registry } from "./rpcEndpoints.js"
import type { Peer } from "./rpcPeer.js"
import { replyEnvelope } from "./rpcReplies.js"

/** What sending and asking need of their node. */
export interface SendingContext {
  /** The node's own address, once it listens. */
  readonly address: () => RpcAddress.RpcAddress | undefined
  readonly endpoints: Registry
  readonly asks: AskTable
  readonly maxFrameSize: number
  readonly askTimeout: Duration.Duration
  readonly clock: Clock.Clock
  /** The open control connection to a node, if there is one already. */
  readonly openPeer: (target: RpcAddress.RpcAddress) => Peer | undefined
  /** The open control connection to a node, dialled if there is none. */
  readonly peerFor: (target: RpcAddress.RpcAddress) => Effect.Effect<Peer, Errors.RpcError>
  /** A connection by its number. */
  readonly connection: (id: number) => Peer | undefined
  readonly write: (
    peer: Peer,
    envelope: Envelope.Envelope
  ) => Either.Either<void, Errors.MalformedFrame | Errors.FrameTooLarge>
  /** Makes sure the deadlines of the asks are watched. */
  readonly ensureSweeper: () => void
}

export const makeSending = (
  context: SendingContext
): Pick<Api.RpcEnv, "send" | "sendNow" | "ask"> => {
  const isLocal = (target: RpcAddress.RpcAddress) => {
    const address = context.address()
    return address !== undefined && RpcAddress.key(target) === RpcAddress.key(address)
  }

  const deliverLocally = (
    to: RpcAddress.RpcEndpointRef,
    body: unknown,
    reply: ((exit: Exit.Exit<unknown, unknown>) => void) | undefined
  ): Either.Either<void, Errors.RpcError> => {
    const endpoint = context.endpoints.get(to.name)
    if (endpoint === undefined) return Either.left(new Errors.EndpointNotFound({ endpoint: to.toString() }))
    const decoded = Codec.decodeWith(endpoint.inbound, body)
    if (Either.isLeft(decoded)) return Either.left(decoded.left)
    endpoint.deliver({
      _tag: "message",
      message: decoded.right as Codec.Message,
      context: { sender: context.address(), peer: context.address()!, connection: 0 },
      reply
    })
    return Either.void
  }

  // Written without Effect: this is the hot path of every message a core sends. Undefined when the connection
  // the message must go on is still to be dialled.
  const sendOn = (peer: Peer | undefined, to: RpcAddress.RpcEndpointRef, message: Codec.Message) => {
    const body = Codec.encodeMessage(message)
    if (Either.isLeft(body)) return Either.left(body.left)
    if (peer === undefined) return deliverLocally(to, body.right, undefined)
    return context.write(peer, { _tag: "send", from: context.address() ?? null, to: to.name, body: body.right })
  }

  // Written without Effect: this is the hot path of every message a core sends.
  const sendNow: Api.RpcEnv["sendNow"] = (to, message, sendOptions) => {
    if (isLocal(to.address)) return sendOn(undefined, to, message)
    const via = sendOptions?.via === undefined ? undefined : context.connection(sendOptions.via)
    const peer = via !== undefined && via.phase === "open" && via.purpose === "control"
      ? via
      : context.openPeer(to.address)
    return peer === undefined ? undefined : sendOn(peer, to, message)
  }

  const send: Api.RpcEnv["send"] = (to, message, sendOptions) =>
    Effect.suspend(() =>
      sendNow(to, message, sendOptions) ??
        Effect.flatMap(context.peerFor(to.address), (peer) => sendOn(peer, to, message))
    )

  const ask = <M extends Codec.Message & Schema.WithResult.All>(
    to: RpcAddress.RpcEndpointRef,
    message: M,
    askOptions?: { readonly timeout?: Duration.DurationInput }
  ): Effect.Effect<Api.ReplyOf<M>, Api.FailureOf<M> | Errors.RpcError> => {
    const timeoutMillis = Math.round(
      Duration.toMillis(askOptions?.timeout === undefined ? context.askTimeout : Duration.decode(askOptions.timeout))
    )
    const await_ = (peer: Peer | undefined, body: unknown) =>
      Effect.async<unknown, unknown>((resume) => {
        // Registered before the message goes out: a local handler may answer before deliver returns.
        const id = context.asks.add({
          waitingOn: peer?.asks,
          request: message,
          endpoint: to.toString(),
          timeoutMillis,
          deadline: context.clock.unsafeCurrentTimeMillis() + timeoutMillis,
          resume
        })
        const forget = () => context.asks.forget(id)
        context.ensureSweeper()
        if (peer === undefined) {
          const delivered = deliverLocally(to, body, (exit) =>
            context.asks.answer(replyEnvelope(id, to.name, message, exit)))
          if (Either.isLeft(delivered)) {
            forget()
            resume(Effect.fail(delivered.left))
          }
          return Effect.sync(forget)
        }
        const frame = Codec.encodeFrame(
          { _tag: "ask", id, from: context.address() ?? null, to: to.name, body },
          context.maxFrameSize
        )
        if (Either.isLeft(frame) || peer.phase !== "open") {
          forget()
          resume(Effect.fail(
            Either.isLeft(frame)
              ? frame.left
              : new Errors.ConnectionLost({ peer: to.address.hostPort, reason: "closed" })
          ))
          return
        }
        peer.asks.add(id)
        peer.connection.write(frame.right)
        return Effect.sync(forget)
      })
    // Written without Effect.gen: this is the hot path of every ask.
    return Effect.suspend(() => {
      const body = Codec.encodeMessage(message)
      if (Either.isLeft(body)) return Effect.fail(body.left)
      if (isLocal(to.address)) return await_(undefined, body.right)
      const existing = context.openPeer(to.address)
      if (existing !== undefined) return await_(existing, body.right)
      return context.peerFor(to.address).pipe(
        Effect.timeoutFail({
          duration: timeoutMillis,
          onTimeout: () => new Errors.AskTimeout({ endpoint: to.toString(), request: message._tag, timeoutMillis })
        }),
        Effect.flatMap((peer) => await_(peer, body.right))
      )
    }) as Effect.Effect<Api.ReplyOf<M>, Api.FailureOf<M> | Errors.RpcError>
  }

  return { send, sendNow, ask }
}
