import * as Cause from "effect/Cause"
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Runtime from "effect/Runtime"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import {
  askIdOf,
  decodeChunkPieces,
  decodeEnvelope,
  decodeWith,
  encodeFrame,
  encodeMessage,
  encodeWith,
  FrameDecoder,
  type Message,
  unpackPayload
} from "../Codec.js"
import { defaultMaxFrameSize, type Envelope, protocolVersion, type Purpose } from "../Envelope.js"
import type { FrameTooLarge, MalformedFrame } from "../Errors.js"
import {
  AskTimeout,
  AuthenticationFailed,
  ConnectionLost,
  EndpointNotFound,
  ProtocolVersionMismatch,
  RemoteHandlerError,
  RpcError
} from "../Errors.js"
import { key as addressKey, RpcAddress, type RpcEndpointRef } from "../RpcAddress.js"
import type * as Api from "../RpcEnv.js"
import { type Connection, type ConnectionHandler, type ListenFailed, Transport } from "../Transport.js"
import { concat } from "./bytes.js"
import * as DataPlane from "./dataPlane.js"
import * as Handshake from "./handshake.js"

export class EndpointAlreadyRegistered extends Data.TaggedError("EndpointAlreadyRegistered")<{
  readonly name: string
}> {
  override get message(): string {
    return `An endpoint named ${this.name} is already registered`
  }
}

type Delivery =
  | {
    readonly _tag: "message"
    readonly message: Message
    readonly context: Api.MessageContext
    readonly reply: ((exit: Exit.Exit<unknown, unknown>) => void) | undefined
  }
  | { readonly _tag: "connected" | "disconnected"; readonly peer: RpcAddress; readonly connection: number }

interface EndpointRuntime {
  readonly name: string
  readonly inbound: Schema.Schema<any, any, never>
  readonly deliver: (delivery: Delivery) => void
}

type Phase = "awaitHello" | "verifying" | "awaitProof" | "awaitChallenge" | "awaitWelcome" | "open" | "closed"

interface Peer {
  /** This connection's number, for as long as the node runs. */
  readonly id: number
  readonly connection: Connection
  readonly direction: "in" | "out"
  readonly decoder: FrameDecoder
  readonly asks: Set<number>
  /** The ids of the peer's recent asks on this connection, oldest first: an id seen again is a replay. */
  readonly answered: RecentIds
  /** Who the peer is: the address it advertised or was dialled at, else its socket's address. */
  identity: RpcAddress
  /** A listener learns it from the dialler's hello. */
  purpose: Purpose
  /** The data plane's handle on an open data connection. */
  link: DataPlane.Link | undefined
  phase: Phase
  wasOpen: boolean
  /** What the peer (or this node) refused the connection with, reported to everything waiting on it. */
  refusal: RpcError | undefined
  clientNonce: Uint8Array | undefined
  serverNonce: Uint8Array | undefined
  ready: Deferred.Deferred<Peer, RpcError> | undefined
  handshakeDeadline: number
  /** When a frame last arrived, and when this node last wrote: for idle connections and keepalive pings. */
  lastReceived: number
  lastSent: number
  /** When the frame now arriving began, while one is incomplete: a frame dribbled forever is cut off. */
  frameStartedAt: number | undefined
  /** Messages it brought to endpoints: a connection that carries none may make room for a new one. */
  delivered: number
  /** Malformed frames seen on it; only the first few are logged. */
  malformed: number
  /** Whether anything has arrived on it yet. */
  heard: boolean
}

// Handshake frames are small (an address, a nonce, a proof, an error); before a connection is authenticated
// nothing larger is read, so an unknown peer cannot make a node hold megabytes for it.
const handshakeFrameLimit = 8 * 1024

// Logged values are cut to this length: bad input must not turn into unbounded log lines.
const logLimit = 500

// Malformed frames logged per connection before the rest are only counted.
const malformedLogged = 3

// What a refused connection's bytes go to.
const ignored: ConnectionHandler = { onData: () => {}, onClose: () => {} }

// An HTTP server answers a connection with a status line; a Kindling node with a frame header.
const looksLikeHttp = (bytes: Uint8Array) =>
  bytes.length >= 5 && bytes[0] === 0x48 && bytes[1] === 0x54 && bytes[2] === 0x54 && bytes[3] === 0x50 &&
  bytes[4] === 0x2f

const bounded = (text: string) => (text.length > logLimit ? `${text.slice(0, logLimit)}… (${text.length} chars)` : text)

// Ask ids are unique per connection; remembering the recent ones lets a node carry out each ask at most once
// even if a frame is delivered twice. The bound keeps a long-lived connection's memory flat.
const recentAskIds = 4096

class RecentIds {
  private readonly ids = new Set<number>()
  private readonly order: Array<number> = []

  /** Notes `id`; false if it was already there. */
  add(id: number): boolean {
    if (this.ids.has(id)) return false
    this.ids.add(id)
    this.order.push(id)
    if (this.order.length > recentAskIds) this.ids.delete(this.order.shift()!)
    return true
  }
}

interface PendingAsk {
  readonly peer: Peer | undefined
  readonly request: Message
  readonly endpoint: string
  readonly deadline: number
  readonly timeoutMillis: number
  readonly resume: (effect: Effect.Effect<unknown, unknown>) => void
}

// Ask and handshake deadlines are checked by one sweeper fiber per node rather than a timer per ask: a timer
// per ask (Effect.timeout) costs more than the rest of a loopback round trip. The sweeper runs on the node's
// Clock, so it follows TestClock in tests, and only while something is waiting.
const sweepInterval = Duration.millis(10)

type ResultSchemas = {
  readonly success: Schema.Schema<any, any, never>
  readonly failure: Schema.Schema<any, any, never>
}

const resultSchemas = (message: Message): ResultSchemas | undefined =>
  Schema.symbolWithResult in message
    ? (message as unknown as Schema.WithResult.Any)[Schema.symbolWithResult] as unknown as ResultSchemas
    : undefined

// The failure side of a reply may be one of the request's errors or one of the RpcEnv's own.
const failureUnions = new WeakMap<object, Schema.Schema<any, any, never>>()
const failureUnionOf = (schemas: ResultSchemas | undefined): Schema.Schema<any, any, never> => {
  if (schemas === undefined) return RpcError
  let union = failureUnions.get(schemas.failure)
  if (union === undefined) {
    union = Schema.Union(schemas.failure, RpcError)
    failureUnions.set(schemas.failure, union)
  }
  return union
}

const isRpcError = Schema.is(RpcError)

type ReplyEnvelope = Extract<Envelope, { readonly _tag: "reply" | "failure" }>

const describeCause = (cause: Cause.Cause<unknown>): string => {
  const text = Cause.pretty(cause)
  return text.length > 2000 ? `${text.slice(0, 2000)}…` : text
}

// A handler's outcome, as the reply or failure envelope the asker will receive.
const replyEnvelope = (
  id: number,
  endpoint: string,
  request: Message,
  exit: Exit.Exit<unknown, unknown>
): ReplyEnvelope => {
  const schemas = resultSchemas(request)
  const failure = (error: unknown): ReplyEnvelope => {
    if (schemas !== undefined && Schema.is(schemas.failure)(error)) {
      const encoded = encodeWith(schemas.failure, error)
      if (Either.isRight(encoded)) return { _tag: "failure", id, error: encoded.right }
    }
    const typed = isRpcError(error)
      ? error
      : new RemoteHandlerError({ endpoint, request: request._tag, reason: String(error) })
    return { _tag: "failure", id, error: Either.getOrThrow(encodeWith(RpcError, typed)) }
  }
  if (Exit.isSuccess(exit)) {
    if (schemas === undefined) return { _tag: "reply", id, body: null }
    const encoded = encodeWith(schemas.success, exit.value)
    return Either.isRight(encoded) ? { _tag: "reply", id, body: encoded.right } : failure(encoded.left)
  }
  const error = Cause.failureOption(exit.cause)
  return error._tag === "Some"
    ? failure(error.value)
    : failure(new RemoteHandlerError({ endpoint, request: request._tag, reason: describeCause(exit.cause) }))
}

// The asker's side: the envelope back to the typed outcome.
const replyEffect = (request: Message, envelope: ReplyEnvelope): Effect.Effect<unknown, unknown> => {
  const schemas = resultSchemas(request)
  if (envelope._tag === "reply") {
    if (schemas === undefined) return Effect.void
    const decoded = decodeWith(schemas.success, envelope.body)
    return Either.isRight(decoded) ? Effect.succeed(decoded.right) : Effect.fail(decoded.left)
  }
  const decoded = decodeWith(failureUnionOf(schemas), envelope.error)
  return Effect.fail(Either.isRight(decoded) ? decoded.right : decoded.left)
}

export const make = (options: Api.Options): Effect.Effect<Api.RpcEnv, ListenFailed, Transport | Scope.Scope> =>
  Effect.gen(function*() {
    const transport = yield* Transport
    const runtime = yield* Effect.runtime<never>()
    const runFork = Runtime.runFork(runtime)
    const clock = yield* Effect.clock
    const maxFrameSize = options.maxFrameSize ?? defaultMaxFrameSize
    const askTimeout = Duration.decode(options.askTimeout ?? "120 seconds")
    const handshakeTimeout = Duration.decode(options.handshakeTimeout ?? "10 seconds")
    const idleMillis = Duration.toMillis(Duration.decode(options.idleTimeout ?? "120 seconds"))
    const maxConnections = options.maxConnections ?? 4096
    const maxHandshakes = options.maxHandshakes ?? 64
    const secretKey = options.secret === undefined
      ? undefined
      : yield* Effect.promise(() => Handshake.importSecret(options.secret!))

    const endpoints = new Map<string, EndpointRuntime>()
    const peers = new Map<string, Peer>()
    const dialing = new Map<string, Deferred.Deferred<Peer, RpcError>>()
    const pending = new Map<number, PendingAsk>()
    const live = new Set<Peer>()
    const byId = new Map<number, Peer>()
    const handshaking = new Set<Peer>()
    let nextAskId = 0
    let nextConnectionId = 1
    let sweeper: Fiber.RuntimeFiber<void> | undefined
    let keepalive: Fiber.RuntimeFiber<void> | undefined
    let address: RpcAddress | undefined

    const warn = (message: string, annotations: Record<string, unknown> = {}) => {
      runFork(Effect.logWarning(bounded(message)).pipe(Effect.annotateLogs(annotations)))
    }

    const data = yield* DataPlane.make(options.dataPlane ?? {}, {
      address: () => address,
      maxFrameSize,
      connect: (target) => Effect.map(dial(target, "data"), (peer) => peer.link!),
      warn
    })

    const notify = (delivery: Delivery) => {
      for (const endpoint of endpoints.values()) endpoint.deliver(delivery)
    }

    // ---- connections ------------------------------------------------------------------------------------

    const write = (peer: Peer, envelope: Envelope): Either.Either<void, MalformedFrame | FrameTooLarge> => {
      const frame = encodeFrame(envelope, maxFrameSize)
      if (Either.isLeft(frame)) return Either.left(frame.left)
      peer.lastSent = clock.unsafeCurrentTimeMillis()
      peer.connection.write(frame.right)
      return Either.void
    }

    const sweep = Effect.gen(function*() {
      while (pending.size > 0 || handshaking.size > 0) {
        yield* Effect.sleep(sweepInterval)
        const now = clock.unsafeCurrentTimeMillis()
        for (const [id, ask] of pending) {
          if (ask.deadline > now) continue
          pending.delete(id)
          ask.peer?.asks.delete(id)
          ask.resume(Effect.fail(
            new AskTimeout({ endpoint: ask.endpoint, request: ask.request._tag, timeoutMillis: ask.timeoutMillis })
          ))
        }
        for (const peer of handshaking) {
          if (peer.handshakeDeadline <= now) handshakeTimedOut(peer)
        }
      }
    }).pipe(Effect.ensuring(Effect.sync(() => {
      sweeper = undefined
    })))

    const ensureSweeper = () => {
      if (sweeper === undefined) sweeper = runFork(sweep)
    }

    // A peer that never finished its handshake gave no answer; with a secret, that is a failed authentication.
    const handshakeTimedOut = (peer: Peer) => {
      if (secretKey !== undefined) return authFailed(peer, "handshake timed out")
      const silent = peer.direction === "out" ? `no answer from ${peer.identity.hostPort}` : "no hello in time"
      peer.refusal = new ConnectionLost({ peer: peer.identity.hostPort, reason: silent })
      if (peer.direction === "out") warn(peer.refusal.message, { peer: peer.identity.hostPort })
      else write(peer, { _tag: "reject", error: Either.getOrThrow(encodeWith(RpcError, peer.refusal)) })
      close(peer, peer.refusal.message)
    }

    // Keeps control connections honest while any is open: pings the quiet ones, closes idle ones and ones on
    // which a frame stopped half-way. It ticks a few times per idle timeout, on the node's Clock.
    const keepaliveTick = Math.max(100, Math.min(1000, Math.floor(idleMillis / 8)))
    const watch = Effect.gen(function*() {
      while (live.size > 0) {
        yield* Effect.sleep(keepaliveTick)
        const now = clock.unsafeCurrentTimeMillis()
        for (const peer of [...live]) {
          if (peer.purpose === "data") continue
          if (peer.frameStartedAt !== undefined && now - peer.frameStartedAt >= idleMillis) {
            close(peer, `a frame did not complete within ${idleMillis} ms`)
          } else if (peer.phase !== "open") {
            continue
          } else if (now - peer.lastReceived >= idleMillis && peer.asks.size === 0) {
            close(peer, `idle for ${idleMillis} ms`)
          } else if (now - peer.lastSent >= idleMillis / 4) {
            write(peer, { _tag: "ping" })
          }
        }
      }
    }).pipe(Effect.ensuring(Effect.sync(() => {
      keepalive = undefined
    })))

    const ensureKeepalive = () => {
      if (keepalive === undefined) keepalive = runFork(watch)
    }

    // The connection that goes when a new one needs room: one still in its handshake, else one that never
    // brought a message and waits for nothing, the quietest first.
    const evictionCandidate = (): Peer | undefined => {
      let best: Peer | undefined
      for (const peer of live) {
        if (peer.purpose === "data") continue
        const unused = peer.phase !== "open" || (peer.delivered === 0 && peer.asks.size === 0)
        if (!unused) continue
        if (best === undefined || peer.lastReceived < best.lastReceived) best = peer
      }
      return best
    }

    let refusedLogged = 0
    const refuseConnection = (connection: Connection, why: string) => {
      if (refusedLogged++ % 1000 === 0) {
        warn(`refusing connections (${refusedLogged} so far): ${why}`, { peer: connection.remote.host })
      }
      connection.close()
    }

    const inboundHandshakes = () => {
      let count = 0
      for (const peer of handshaking) if (peer.direction === "in") count++
      return count
    }

    const finish = (peer: Peer, reason: string) => {
      handshaking.delete(peer)
      if (!live.delete(peer)) return
      byId.delete(peer.id)
      peer.phase = "closed"
      if (peers.get(addressKey(peer.identity)) === peer) peers.delete(addressKey(peer.identity))
      const error = peer.refusal ?? new ConnectionLost({ peer: peer.identity.hostPort, reason })
      if (peer.link !== undefined) data.closed(peer.link, error)
      for (const id of peer.asks) {
        const ask = pending.get(id)
        pending.delete(id)
        ask?.resume(Effect.fail(error))
      }
      peer.asks.clear()
      if (peer.ready !== undefined) Deferred.unsafeDone(peer.ready, Exit.fail(error))
      if (peer.wasOpen) notify({ _tag: "disconnected", peer: peer.identity, connection: peer.id })
    }

    const close = (peer: Peer, reason: string) => {
      finish(peer, reason)
      peer.connection.close()
    }

    // Refuses the connection: tells the peer why (best effort), reports locally, and closes.
    const refuse = (peer: Peer, error: AuthenticationFailed | ProtocolVersionMismatch | FrameTooLarge) => {
      warn(`refusing connection: ${error.message}`, { peer: peer.identity.hostPort })
      peer.refusal = error
      write(peer, { _tag: "reject", error: Either.getOrThrow(encodeWith(RpcError, error)) })
      close(peer, error.message)
    }

    const authFailed = (peer: Peer, reason: string) =>
      refuse(peer, new AuthenticationFailed({ peer: peer.identity.hostPort, reason }))

    // A data connection belongs to the data plane: it makes no peer and is never notified to endpoints.
    const open = (peer: Peer) => {
      handshaking.delete(peer)
      peer.phase = "open"
      peer.decoder.maxFrameSize = maxFrameSize
      if (peer.purpose === "data") {
        peer.link = {
          direction: peer.direction,
          peer: peer.identity,
          connection: peer.connection,
          isOpen: () => peer.phase === "open",
          close: (reason) => close(peer, reason)
        }
        if (peer.ready !== undefined) Deferred.unsafeDone(peer.ready, Exit.succeed(peer))
        return
      }
      peer.wasOpen = true
      const key = addressKey(peer.identity)
      const current = peers.get(key)
      if (current === undefined || current.phase !== "open") peers.set(key, peer)
      notify({ _tag: "connected", peer: peer.identity, connection: peer.id })
      if (peer.ready !== undefined) Deferred.unsafeDone(peer.ready, Exit.succeed(peer))
    }

    const welcome = (peer: Peer) => {
      open(peer)
      write(peer, { _tag: "welcome", version: protocolVersion, address: address ?? null })
    }

    const onHandshake = (
      peer: Peer,
      envelope: Extract<Envelope, { _tag: "hello" | "challenge" | "proof" | "welcome" }>
    ) => {
      switch (envelope._tag) {
        case "hello": {
          if (peer.direction !== "in" || peer.phase !== "awaitHello") return authFailed(peer, "unexpected hello")
          if (envelope.address !== null) peer.identity = envelope.address
          peer.purpose = envelope.purpose ?? "control"
          if (envelope.version !== protocolVersion) {
            return refuse(
              peer,
              new ProtocolVersionMismatch({
                peer: peer.identity.hostPort,
                local: protocolVersion,
                remote: envelope.version
              })
            )
          }
          if (secretKey === undefined) {
            if (envelope.nonce !== null) {
              return authFailed(peer, "the peer expects a shared secret but this node has none")
            }
            return welcome(peer)
          }
          if (envelope.nonce === null) {
            return authFailed(peer, "this node requires a shared secret but the peer offered none")
          }
          const clientNonce = envelope.nonce
          const serverNonce = Handshake.makeNonce()
          peer.clientNonce = clientNonce
          peer.serverNonce = serverNonce
          peer.phase = "verifying"
          Handshake.serverProof(secretKey, clientNonce, serverNonce).then((proof) => {
            if (peer.phase !== "verifying") return
            peer.phase = "awaitProof"
            write(peer, { _tag: "challenge", nonce: serverNonce, proof })
          }, (error) => authFailed(peer, `cannot compute proof: ${String(error)}`))
          return
        }
        case "proof": {
          if (peer.direction !== "in" || peer.phase !== "awaitProof" || secretKey === undefined) {
            return authFailed(peer, "unexpected proof")
          }
          peer.phase = "verifying"
          Handshake.clientProof(secretKey, peer.clientNonce!, peer.serverNonce!).then((expected) => {
            if (peer.phase !== "verifying") return
            if (Handshake.sameBytes(expected, envelope.proof)) welcome(peer)
            else authFailed(peer, "the peer's proof does not match the shared secret")
          }, (error) => authFailed(peer, `cannot verify proof: ${String(error)}`))
          return
        }
        case "challenge": {
          if (peer.direction !== "out" || peer.phase !== "awaitChallenge" || secretKey === undefined) {
            return authFailed(peer, "unexpected challenge")
          }
          const serverNonce = envelope.nonce
          peer.phase = "verifying"
          Promise.all([
            Handshake.serverProof(secretKey, peer.clientNonce!, serverNonce),
            Handshake.clientProof(secretKey, peer.clientNonce!, serverNonce)
          ]).then(([expected, proof]) => {
            if (peer.phase !== "verifying") return
            if (!Handshake.sameBytes(expected, envelope.proof)) {
              return authFailed(peer, "the peer's proof does not match the shared secret")
            }
            peer.phase = "awaitWelcome"
            write(peer, { _tag: "proof", proof })
          }, (error) => authFailed(peer, `cannot verify proof: ${String(error)}`))
          return
        }
        case "welcome": {
          const expected = secretKey === undefined ? "awaitChallenge" : "awaitWelcome"
          if (peer.direction !== "out" || peer.phase !== expected) {
            return authFailed(
              peer,
              secretKey !== undefined && peer.phase === "awaitChallenge"
                ? "the peer did not authenticate itself"
                : "unexpected welcome"
            )
          }
          if (envelope.version !== protocolVersion) {
            return refuse(
              peer,
              new ProtocolVersionMismatch({
                peer: peer.identity.hostPort,
                local: protocolVersion,
                remote: envelope.version
              })
            )
          }
          return open(peer)
        }
      }
    }

    const onReject = (peer: Peer, error: unknown) => {
      const decoded = decodeWith(RpcError, error)
      peer.refusal = Either.isRight(decoded)
        ? decoded.right
        : new ConnectionLost({ peer: peer.identity.hostPort, reason: "refused by the peer" })
      warn(`connection refused by the peer: ${peer.refusal.message}`, { peer: peer.identity.hostPort })
      close(peer, peer.refusal.message)
    }

    const onInbound = (peer: Peer, envelope: Extract<Envelope, { _tag: "send" | "ask" }>) => {
      const id = envelope._tag === "ask" ? envelope.id : undefined
      const fail = (error: RpcError, request: string) => {
        if (id === undefined) {
          return warn(`dropped a message: ${error.message}`, { peer: peer.identity.hostPort, request })
        }
        write(peer, { _tag: "failure", id, error: Either.getOrThrow(encodeWith(RpcError, error)) })
      }
      const tag = typeof (envelope.body as { _tag?: unknown } | null)?._tag === "string"
        ? (envelope.body as { _tag: string })._tag
        : "?"
      if (id !== undefined && !peer.answered.add(id)) {
        return warn(`ignored a repeated ask (id ${id})`, { peer: peer.identity.hostPort, request: tag })
      }
      const endpoint = endpoints.get(envelope.to)
      if (endpoint === undefined) return fail(new EndpointNotFound({ endpoint: envelope.to }), tag)
      const decoded = decodeWith(endpoint.inbound, envelope.body)
      if (Either.isLeft(decoded)) return fail(decoded.left, tag)
      const message = decoded.right as Message
      const reply = id === undefined ? undefined : (exit: Exit.Exit<unknown, unknown>) => {
        if (peer.phase !== "open") return
        const envelope = replyEnvelope(id, endpoint.name, message, exit)
        const written = write(peer, envelope)
        if (Either.isLeft(written)) fail(written.left, message._tag)
      }
      peer.delivered++
      endpoint.deliver({
        _tag: "message",
        message,
        context: { sender: envelope.from ?? undefined, peer: peer.identity, connection: peer.id },
        reply
      })
    }

    const onReply = (envelope: ReplyEnvelope) => {
      const ask = pending.get(envelope.id)
      if (ask === undefined) return // the asker gave up (timeout or interruption) before the reply came
      pending.delete(envelope.id)
      ask.peer?.asks.delete(envelope.id)
      ask.resume(replyEffect(ask.request, envelope))
    }

    const onFrame = (peer: Peer, payload: Uint8Array) => {
      const value = unpackPayload(payload)
      const decoded = Either.flatMap(value, decodeEnvelope)
      if (Either.isLeft(decoded)) {
        if (peer.phase !== "open") return authFailed(peer, `malformed handshake: ${bounded(decoded.left.reason)}`)
        // An ask whose id can be read is answered, so that its asker learns why instead of waiting for its
        // timeout; the ask is not carried out.
        const askId = Either.isRight(value) && peer.link === undefined ? askIdOf(value.right) : undefined
        if (askId !== undefined && peer.answered.add(askId)) {
          write(peer, { _tag: "failure", id: askId, error: Either.getOrThrow(encodeWith(RpcError, decoded.left)) })
        }
        peer.malformed++
        if (peer.malformed <= malformedLogged) return warn(decoded.left.message, { peer: peer.identity.hostPort })
        if (peer.malformed === malformedLogged + 1) {
          warn(`further malformed frames from ${peer.identity.hostPort} are counted, not logged`)
        }
        return
      }
      const envelope = decoded.right
      switch (envelope._tag) {
        case "hello":
        case "challenge":
        case "proof":
        case "welcome":
          return onHandshake(peer, envelope)
        case "reject":
          return onReject(peer, envelope.error)
        case "ping":
          return
        case "send":
        case "ask":
          // Nothing is delivered on a connection that has not completed its handshake.
          if (peer.phase !== "open") return authFailed(peer, `${envelope._tag} before the handshake completed`)
          if (peer.link !== undefined) return misplaced(peer, envelope._tag)
          return onInbound(peer, envelope)
        case "reply":
        case "failure":
          if (peer.phase !== "open") return authFailed(peer, `${envelope._tag} before the handshake completed`)
          if (peer.link !== undefined) return misplaced(peer, envelope._tag)
          return onReply(envelope)
        default:
          if (peer.phase !== "open") return authFailed(peer, `${envelope._tag} before the handshake completed`)
          if (peer.link === undefined) return misplaced(peer, envelope._tag)
          return data.received(peer.link, envelope)
      }
    }

    const misplaced = (peer: Peer, tag: Envelope["_tag"]) =>
      warn(`dropped ${tag} on a ${peer.purpose} connection`, { peer: peer.identity.hostPort })

    const attach = (
      connection: Connection,
      direction: Peer["direction"],
      identity: RpcAddress,
      purpose: Purpose
    ): { readonly peer: Peer; readonly handler: ConnectionHandler } => {
      const now = clock.unsafeCurrentTimeMillis()
      const peer: Peer = {
        id: nextConnectionId++,
        connection,
        direction,
        identity,
        purpose,
        link: undefined,
        // A node it dialled itself is trusted with full frames; an incoming one first proves itself.
        decoder: new FrameDecoder(direction === "in" ? handshakeFrameLimit : maxFrameSize),
        asks: new Set(),
        answered: new RecentIds(),
        phase: direction === "in" ? "awaitHello" : "awaitChallenge",
        wasOpen: false,
        refusal: undefined,
        clientNonce: undefined,
        serverNonce: undefined,
        ready: undefined,
        handshakeDeadline: now + Duration.toMillis(handshakeTimeout),
        lastReceived: now,
        lastSent: now,
        frameStartedAt: undefined,
        delivered: 0,
        malformed: 0,
        heard: false
      }
      live.add(peer)
      byId.set(peer.id, peer)
      handshaking.add(peer)
      ensureSweeper()
      ensureKeepalive()
      const handler: ConnectionHandler = {
        onData: (bytes) => {
          if (peer.phase === "closed") return
          const now = clock.unsafeCurrentTimeMillis()
          if (peer.direction === "out" && !peer.heard && looksLikeHttp(bytes)) {
            return notKindling(peer, "it answered like an HTTP server")
          }
          peer.heard = true
          peer.lastReceived = now
          // On a data connection this node fetches on, chunks are read where they arrived, never copied.
          if (peer.purpose === "data" && peer.direction === "out") {
            const frames = peer.decoder.pushPieces(bytes)
            if (Either.isLeft(frames)) return refuse(peer, frames.left)
            return handleEach(peer, frames.right, onPieces)
          }
          const frames = peer.decoder.push(bytes)
          if (Either.isLeft(frames)) {
            return peer.phase !== "open" && peer.direction === "out"
              ? notKindling(peer, `it sent a frame of ${frames.left.size} bytes before its handshake`)
              : refuse(peer, frames.left)
          }
          if (peer.decoder.pending === 0) peer.frameStartedAt = undefined
          else peer.frameStartedAt ??= now
          handleEach(peer, frames.right, onFrame)
        },
        onClose: (reason) => finish(peer, reason)
      }
      return { peer, handler }
    }

    // A node dialled something that is not a Kindling node: say so, not that a frame was too large.
    const notKindling = (peer: Peer, how: string) => {
      const reason = `the peer at ${peer.identity.hostPort} does not speak the Kindling protocol (${how})`
      peer.refusal = new ConnectionLost({ peer: peer.identity.hostPort, reason })
      warn(reason, { peer: peer.identity.hostPort })
      close(peer, reason)
    }

    const handleEach = <P>(peer: Peer, payloads: ReadonlyArray<P>, handle: (peer: Peer, payload: P) => void) => {
      for (const payload of payloads) {
        if (peer.phase === "closed") return
        try {
          handle(peer, payload)
        } catch (error) {
          warn(`error while handling a frame: ${String(error)}`, { peer: peer.identity.hostPort })
        }
      }
    }

    const onPieces = (peer: Peer, pieces: ReadonlyArray<Uint8Array>) => {
      const chunk = peer.link === undefined ? undefined : decodeChunkPieces(pieces)
      if (chunk === undefined) return onFrame(peer, concat(pieces))
      data.receivedChunk(peer.link!, chunk)
    }

    const dial = (target: RpcAddress, purpose: Purpose): Effect.Effect<Peer, RpcError> =>
      Effect.gen(function*() {
        let peer: Peer | undefined
        const connection = yield* transport.connect(target.host, target.port, (connection) => {
          const attached = attach(connection, "out", target, purpose)
          peer = attached.peer
          return attached.handler
        }).pipe(Effect.mapError((error) => new ConnectionLost({ peer: target.hostPort, reason: error.reason })))
        const dialled = peer!
        const ready = yield* Deferred.make<Peer, RpcError>()
        dialled.ready = ready
        if ((dialled.phase as Phase) === "closed") {
          return yield* Effect.fail(dialled.refusal ?? new ConnectionLost({ peer: target.hostPort, reason: "closed" }))
        }
        if (secretKey !== undefined) dialled.clientNonce = Handshake.makeNonce()
        // A control connection's hello has no purpose: it is what nodes without a data plane send.
        write(dialled, {
          _tag: "hello",
          version: protocolVersion,
          address: address ?? null,
          nonce: dialled.clientNonce ?? null,
          ...(purpose === "data" ? { purpose } : {})
        })
        return yield* Deferred.await(ready).pipe(Effect.tapError(() => Effect.sync(() => connection.close())))
      })

    const peerFor = (target: RpcAddress): Effect.Effect<Peer, RpcError> =>
      Effect.suspend(() => {
        const key = addressKey(target)
        const existing = peers.get(key)
        if (existing !== undefined && existing.phase === "open") return Effect.succeed(existing)
        const inFlight = dialing.get(key)
        if (inFlight !== undefined) return Deferred.await(inFlight)
        return Effect.uninterruptibleMask((restore) =>
          Effect.gen(function*() {
            const deferred = yield* Deferred.make<Peer, RpcError>()
            dialing.set(key, deferred)
            const outcome = yield* Effect.exit(dial(target, "control"))
            dialing.delete(key)
            yield* Deferred.done(deferred, outcome)
            return yield* restore(outcome)
          })
        )
      })

    const isLocal = (target: RpcAddress) => address !== undefined && addressKey(target) === addressKey(address)

    // ---- sending and asking --------------------------------------------------------------------------------

    const deliverLocally = (
      to: RpcEndpointRef,
      body: unknown,
      reply: ((exit: Exit.Exit<unknown, unknown>) => void) | undefined
    ): Either.Either<void, RpcError> => {
      const endpoint = endpoints.get(to.name)
      if (endpoint === undefined) return Either.left(new EndpointNotFound({ endpoint: to.toString() }))
      const decoded = decodeWith(endpoint.inbound, body)
      if (Either.isLeft(decoded)) return Either.left(decoded.left)
      endpoint.deliver({
        _tag: "message",
        message: decoded.right as Message,
        context: { sender: address, peer: address!, connection: 0 },
        reply
      })
      return Either.void
    }

    const send: Api.RpcEnv["send"] = (to, message, sendOptions) =>
      Effect.gen(function*() {
        const body = yield* encodeMessage(message)
        if (isLocal(to.address)) return yield* deliverLocally(to, body, undefined)
        const via = sendOptions?.via === undefined ? undefined : byId.get(sendOptions.via)
        const peer = via !== undefined && via.phase === "open" && via.purpose === "control"
          ? via
          : yield* peerFor(to.address)
        yield* write(peer, { _tag: "send", from: address ?? null, to: to.name, body })
      })

    const ask = <M extends Message & Schema.WithResult.All>(
      to: RpcEndpointRef,
      message: M,
      askOptions?: { readonly timeout?: Duration.DurationInput }
    ): Effect.Effect<Api.ReplyOf<M>, Api.FailureOf<M> | RpcError> => {
      const timeoutMillis = Math.round(
        Duration.toMillis(askOptions?.timeout === undefined ? askTimeout : Duration.decode(askOptions.timeout))
      )
      const await_ = (peer: Peer | undefined, body: unknown) =>
        Effect.async<unknown, unknown>((resume) => {
          const id = nextAskId++
          const forget = () => {
            pending.delete(id)
            peer?.asks.delete(id)
          }
          // Registered before the message goes out: a local handler may answer before deliver returns.
          pending.set(id, {
            peer,
            request: message,
            endpoint: to.toString(),
            timeoutMillis,
            deadline: clock.unsafeCurrentTimeMillis() + timeoutMillis,
            resume
          })
          ensureSweeper()
          if (peer === undefined) {
            const delivered = deliverLocally(to, body, (exit) => onReply(replyEnvelope(id, to.name, message, exit)))
            if (Either.isLeft(delivered)) {
              forget()
              resume(Effect.fail(delivered.left))
            }
            return Effect.sync(forget)
          }
          const frame = encodeFrame({ _tag: "ask", id, from: address ?? null, to: to.name, body }, maxFrameSize)
          if (Either.isLeft(frame) || peer.phase !== "open") {
            forget()
            resume(Effect.fail(
              Either.isLeft(frame) ? frame.left : new ConnectionLost({ peer: to.address.hostPort, reason: "closed" })
            ))
            return
          }
          peer.asks.add(id)
          peer.connection.write(frame.right)
          return Effect.sync(forget)
        })
      // Written without Effect.gen: this is the hot path of every ask.
      return Effect.suspend(() => {
        const body = encodeMessage(message)
        if (Either.isLeft(body)) return Effect.fail(body.left)
        if (isLocal(to.address)) return await_(undefined, body.right)
        const existing = peers.get(addressKey(to.address))
        if (existing !== undefined && existing.phase === "open") return await_(existing, body.right)
        return peerFor(to.address).pipe(
          Effect.timeoutFail({
            duration: timeoutMillis,
            onTimeout: () => new AskTimeout({ endpoint: to.toString(), request: message._tag, timeoutMillis })
          }),
          Effect.flatMap((peer) => await_(peer, body.right))
        )
      }) as Effect.Effect<Api.ReplyOf<M>, Api.FailureOf<M> | RpcError>
    }

    // ---- endpoints ---------------------------------------------------------------------------------------

    const register = <A extends Message, R>(name: string, endpoint: Api.Endpoint<A, Api.Handlers<A, R>, R>) =>
      Effect.gen(function*() {
        if (endpoints.has(name)) return yield* Effect.fail(new EndpointAlreadyRegistered({ name }))
        const endpointRuntime = yield* Effect.runtime<R>()
        const runEndpointFork = Runtime.runFork(endpointRuntime)
        const handlers = endpoint.handlers as unknown as Record<string, Api.Handler<Message, R>>
        const running = new Set<Fiber.RuntimeFiber<void>>()

        const handle = (delivery: Delivery): Effect.Effect<void, never, R> => {
          if (delivery._tag !== "message") {
            const hook = delivery._tag === "connected" ? endpoint.onConnected : endpoint.onDisconnected
            return hook === undefined
              ? Effect.void
              : Effect.catchAllCause(
                hook(delivery.peer, delivery.connection),
                (cause) => Effect.logError(`endpoint ${name}: ${delivery._tag} hook failed`, cause)
              )
          }
          return run(
            delivery,
            Effect.suspend(() => handlers[delivery.message._tag]!(delivery.message, delivery.context))
          )
        }

        type MessageDelivery = Extract<Delivery, { _tag: "message" }>

        const isReported = (delivery: MessageDelivery, exit: Exit.Exit<unknown, unknown>) =>
          Exit.isSuccess(exit) || (Cause.isFailType(exit.cause) && delivery.reply !== undefined)

        const failed = (delivery: MessageDelivery, exit: Exit.Failure<unknown, unknown>) =>
          Effect.logError(`endpoint ${name} failed to handle ${delivery.message._tag}`, exit.cause)

        // Runs a handler's effect and answers with its outcome. A declared failure of an ask is the asker's to
        // report; anything else that goes wrong is logged here.
        const run = (delivery: MessageDelivery, effect: Effect.Effect<unknown, unknown, R>) =>
          Effect.flatMap(Effect.exit(effect), (exit) => {
            delivery.reply?.(exit)
            return isReported(delivery, exit) ? Effect.void : failed(delivery, exit as Exit.Failure<unknown, unknown>)
          })

        // A handler that answers with a value it already has (Effect.succeed, Effect.fail: an Exit) needs no
        // fiber; when the endpoint is idle its answer goes out at once.
        const build = (delivery: MessageDelivery): Effect.Effect<unknown, unknown, R> => {
          try {
            return handlers[delivery.message._tag]!(delivery.message, delivery.context)
          } catch (error) {
            return Exit.die(error)
          }
        }

        const runNow = (delivery: MessageDelivery): boolean => {
          const effect = build(delivery)
          if (!Exit.isExit(effect)) {
            track(runEndpointFork(sequential ? Effect.zipRight(run(delivery, effect), drain) : run(delivery, effect)))
            return false
          }
          delivery.reply?.(effect)
          if (!isReported(delivery, effect)) runEndpointFork(failed(delivery, effect as Exit.Failure<unknown, unknown>))
          return true
        }

        // Sequential endpoints drain their backlog in one fiber, started synchronously when a delivery finds the
        // endpoint idle, so a handler that does not suspend answers within the socket callback.
        const sequential = endpoint.concurrency !== "unbounded"
        const backlog: Array<Delivery> = []
        let draining = false
        const drain: Effect.Effect<void, never, R> = Effect.suspend(() => {
          const next = backlog.shift()
          if (next === undefined) {
            draining = false
            return Effect.void
          }
          return Effect.zipRight(handle(next), drain)
        })
        const track = (fiber: Fiber.RuntimeFiber<void>) => {
          running.add(fiber)
          fiber.addObserver(() => running.delete(fiber))
        }
        const deliver = (delivery: Delivery) => {
          if (!sequential) {
            if (delivery._tag === "message") runNow(delivery)
            else track(runEndpointFork(handle(delivery)))
            return
          }
          if (draining) {
            backlog.push(delivery)
            return
          }
          draining = true
          if (delivery._tag === "message") {
            if (runNow(delivery)) draining = false
            return
          }
          backlog.push(delivery)
          track(runEndpointFork(drain))
        }

        yield* Effect.acquireRelease(
          Effect.sync(() => endpoints.set(name, { name, inbound: endpoint.inbound, deliver })),
          () =>
            Effect.gen(function*() {
              endpoints.delete(name)
              for (const delivery of backlog.splice(0)) {
                if (delivery._tag === "message") delivery.reply?.(Exit.fail(new EndpointNotFound({ endpoint: name })))
              }
              yield* Fiber.interruptAll(running)
            })
        )
      })

    // ---- lifecycle ---------------------------------------------------------------------------------------

    if (options.host !== undefined && options.port !== undefined) {
      const listener = yield* transport.listen(options.host, options.port, (connection) => {
        if (inboundHandshakes() >= maxHandshakes) {
          refuseConnection(connection, `${maxHandshakes} connections are already in their handshake`)
          return ignored
        }
        if (live.size >= maxConnections) {
          const victim = evictionCandidate()
          if (victim === undefined) {
            refuseConnection(connection, `${maxConnections} connections are open and all in use`)
            return ignored
          }
          close(victim, "closed to make room for a new connection")
        }
        const identity = new RpcAddress({ host: connection.remote.host || "unknown", port: connection.remote.port })
        return attach(connection, "in", identity, "control").handler
      })
      address = new RpcAddress({ host: options.advertisedHost ?? options.host, port: listener.port })
    }

    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        yield* data.stop
        for (const peer of [...live]) close(peer, "node stopped")
        for (const [id, ask] of pending) {
          pending.delete(id)
          ask.resume(Effect.fail(new ConnectionLost({ peer: ask.endpoint, reason: "node stopped" })))
        }
        if (sweeper !== undefined) yield* Fiber.interrupt(sweeper)
        if (keepalive !== undefined) yield* Fiber.interrupt(keepalive)
      })
    )

    return {
      address,
      maxFrameSize,
      register: register as Api.RpcEnv["register"],
      send,
      ask,
      peers: Effect.sync(() =>
        [...peers.values()].filter((peer) => peer.phase === "open").map((peer) => peer.identity)
      ),
      data: data.api
    } satisfies Api.RpcEnv
  })
