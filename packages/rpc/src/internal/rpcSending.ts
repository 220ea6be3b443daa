// Sending and asking: a message to an endpoint of this node is delivered in place, as it is; one to another node
// goes on the open control connection to it, dialled if there is none — encoded in a frame, or handed over as it is
// when that node runs in this process (`Peer.handOver`). An ask waits for its reply in the ask table, with its
// deadline.
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
import { handedReply } from "./rpcReplies.js"

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
  /** Hands an envelope whose body is the message itself to a peer that takes values. */
  readonly handOver: (peer: Peer, envelope: Envelope.Envelope) => void
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

  // In place and as it is, as if handed over by a peer in this process.
  const deliverLocally = (
    to: RpcAddress.RpcEndpointRef,
    message: Codec.Message,
    reply: ((exit: Exit.Exit<unknown, unknown>) => void) | undefined
  ): Either.Either<void, Errors.RpcError> => {
    const endpoint = context.endpoints.get(to.name)
    if (endpoint === undefined) return Either.left(new Errors.EndpointNotFound({ endpoint: to.toString() }))
    if (!endpoint.accepts(message)) return Either.left(endpoint.refusal(message))
    endpoint.deliver({
      _tag: "message",
      message,
      context: { sender: context.address(), peer: context.address()!, connection: 0 },
      reply
    })
    return Either.void
  }

  // Written without Effect: this is the hot path of every message a core sends. Undefined when the connection
  // the message must go on is still to be dialled.
  const sendOn = (peer: Peer | undefined, to: RpcAddress.RpcEndpointRef, message: Codec.Message) => {
    if (peer === undefined) return deliverLocally(to, message, undefined)
    const from = context.address() ?? null
    if (peer.handOver !== undefined) {
      context.handOver(peer, { _tag: "send", from, to: to.name, body: message })
      return Either.void
    }
    const body = Codec.encodeMessage(message)
    if (Either.isLeft(body)) return Either.left(body.left)
    return context.write(peer, { _tag: "send", from, to: to.name, body: body.right })
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
    const await_ = (peer: Peer | undefined) =>
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
        const failed = (error: Errors.RpcError) => {
          forget()
          resume(Effect.fail(error))
        }
        context.ensureSweeper()
        if (peer === undefined) {
          const delivered = deliverLocally(to, message, (exit) =>
            context.asks.answer(handedReply(id, to.name, message, exit), true))
          if (Either.isLeft(delivered)) {
            return failed(delivered.left)
          }
          return Effect.sync(forget)
        }
        if (peer.phase !== "open") {
          return failed(new Errors.ConnectionLost({ peer: to.address.hostPort, reason: "closed" }))
        }
        const from = context.address() ?? null
        if (peer.handOver !== undefined) {
          peer.asks.add(id)
          context.handOver(peer, { _tag: "ask", id, from, to: to.name, body: message })
          return Effect.sync(forget)
        }
        const body = Codec.encodeMessage(message)
        const frame = Either.flatMap(
          body,
          (body) =>
            Codec.encodeFrame({ _tag: "ask", id, from, to: to.name, body }, context.maxFrameSize)
        )
        if (Either.isLeft(frame)) {
          return failed(frame.left)
        }
        peer.asks.add(id)
        peer.connection.write(frame.right)
        return Effect.sync(forget)
      })
    // Written without Effect.gen: this is the hot path of every ask.
    return Effect.suspend(() => {
      if (isLocal(to.address)) return await_(undefined)
      const existing = context.openPeer(to.address)
      if (existing !== undefined) return await_(existing)
      return context.peerFor(to.address).pipe(
        Effect.timeoutFail({
          duration: timeoutMillis,
          onTimeout: () => new Errors.AskTimeout({ endpoint: to.toString(), request: message._tag, timeoutMillis })
        }),
        Effect.flatMap(await_)
      )
    }) as Effect.Effect<Api.ReplyOf<M>, Api.FailureOf<M> | Errors.RpcError>
  }

  return { send, sendNow, ask }
}
