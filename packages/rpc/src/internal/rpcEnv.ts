/**
 * The RpcEnv of one node: its connections (accepted and dialled, control and data), their handshakes, frames and
 * keepalive, and the node's lifecycle. What each connection holds is `rpcPeer.ts`, its handshake
 * `rpcHandshake.ts`, sending and asking `rpcSending.ts`, the asks waiting on answers `rpcAsks.ts`, replies
 * `rpcReplies.ts`, the endpoints `rpcEndpoints.ts`, and data connections the data plane's (`dataPlane.ts`).
 */
import { Codec, Envelope, Errors, RpcAddress } from "@kindling/protocol"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Runtime from "effect/Runtime"
import type * as Scope from "effect/Scope"
import type * as Api from "../RpcEnv.js"
import { type Connection, type ConnectionHandler, type ListenFailed, Transport } from "../Transport.js"
import { concat } from "./bytes.js"
import * as DataPlane from "./dataPlane.js"
import * as EncryptionGreeting from "./encryptionGreeting.js"
import * as Handshake from "./handshake.js"
import { AskTable } from "./rpcAsks.js"
import { makeRegistry } from "./rpcEndpoints.js"
import { type HandshakeActions, onHandshake } from "./rpcHandshake.js"
import { evictionCandidate, handshakeToEvict, makePeer, type Peer, type Phase } from "./rpcPeer.js"
import { handedReply, replyEnvelope } from "./rpcReplies.js"
import { makeSending } from "./rpcSending.js"
import { makeSharedDials } from "./sharedDials.js"

export { EndpointAlreadyRegistered } from "./rpcEndpoints.js"

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

// Ask and handshake deadlines are checked by one sweeper fiber per node rather than a timer per ask: a timer
// per ask (Effect.timeout) costs more than the rest of a loopback round trip. The sweeper runs on the node's
// Clock, so it follows TestClock in tests, and only while something is waiting.
const sweepInterval = Duration.millis(10)

export const make = (options: Api.Options): Effect.Effect<Api.RpcEnv, ListenFailed, Transport | Scope.Scope> =>
  Effect.gen(function*() {
    const transport = yield* Transport
    const runtime = yield* Effect.runtime<never>()
    const runFork = Runtime.runFork(runtime)
    const clock = yield* Effect.clock
    const maxFrameSize = options.maxFrameSize ?? Envelope.defaultMaxFrameSize
    const askTimeout = Duration.decode(options.askTimeout ?? "120 seconds")
    const handshakeTimeout = Duration.decode(options.handshakeTimeout ?? "10 seconds")
    const lookupTimeout = Duration.decode(options.lookupTimeout ?? "2 seconds")
    const idleMillis = Duration.toMillis(Duration.decode(options.idleTimeout ?? "120 seconds"))
    const maxConnections = options.maxConnections ?? 4096
    const handshakeLimits = {
      total: options.maxHandshakes ?? 64,
      perAddress: options.maxHandshakesPerAddress ?? 32
    }
    const secretKey = options.secret === undefined
      ? undefined
      : yield* Effect.promise(() => Handshake.importSecret(options.secret!))

    const endpoints = makeRegistry()
    const peers = new Map<string, Peer>()
    const dials = makeSharedDials<Peer>(
      runFork,
      (key) => new Errors.ConnectionLost({ peer: key, reason: "node stopped" })
    )
    const asks = new AskTable()
    const live = new Set<Peer>()
    const byId = new Map<number, Peer>()
    const handshaking = new Set<Peer>()
    let nextConnectionId = 1
    let sweeper: Fiber.RuntimeFiber<void> | undefined
    let keepalive: Fiber.RuntimeFiber<void> | undefined
    let address: RpcAddress.RpcAddress | undefined

    const warn = (message: string, annotations: Record<string, unknown> = {}) => {
      runFork(Effect.logWarning(bounded(message)).pipe(Effect.annotateLogs(annotations)))
    }

    const data = yield* DataPlane.make(options.dataPlane ?? {}, {
      address: () => address,
      maxFrameSize,
      connect: (target) => Effect.map(dial(target, "data"), (peer) => peer.link!),
      warn
    })

    // ---- connections ------------------------------------------------------------------------------------

    const write = (
      peer: Peer,
      envelope: Envelope.Envelope
    ): Either.Either<void, Errors.MalformedFrame | Errors.FrameTooLarge> => {
      const frame = Codec.encodeFrame(envelope, maxFrameSize)
      if (Either.isLeft(frame)) return Either.left(frame.left)
      peer.lastSent = clock.unsafeCurrentTimeMillis()
      peer.connection.write(frame.right)
      return Either.void
    }

    // The value-passing twin of `write`, for the envelopes of messages and replies (see `Peer.handOver`).
    const handOver = (peer: Peer, envelope: Envelope.Envelope) => {
      peer.lastSent = clock.unsafeCurrentTimeMillis()
      peer.handOver!(envelope)
    }

    const sweep = Effect.gen(function*() {
      while (asks.size > 0 || handshaking.size > 0) {
        yield* Effect.sleep(sweepInterval)
        const now = clock.unsafeCurrentTimeMillis()
        asks.expire(now)
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

    // A peer that never finished its handshake gave no answer; with a secret, that is a failed authentication. One
    // that never said anything is what a flood is made of: it is told why, closed, and counted with the others.
    const handshakeTimedOut = (peer: Peer) => {
      if (peer.direction === "in" && !peer.heard) {
        peer.refusal = secretKey !== undefined
          ? new Errors.AuthenticationFailed({ peer: peer.identity.hostPort, reason: "handshake timed out" })
          : new Errors.ConnectionLost({ peer: peer.identity.hostPort, reason: "no hello in time" })
        write(peer, { _tag: "reject", error: Either.getOrThrow(Codec.encodeWith(Errors.RpcError, peer.refusal)) })
        return dropUnproven(peer, "at the handshake timeout", peer.refusal.message)
      }
      if (secretKey !== undefined) return authFailed(peer, "handshake timed out")
      const silent = peer.direction === "out" ? `no answer from ${peer.identity.hostPort}` : "no hello in time"
      peer.refusal = new Errors.ConnectionLost({ peer: peer.identity.hostPort, reason: silent })
      if (peer.direction === "out") warn(peer.refusal.message, { peer: peer.identity.hostPort })
      else write(peer, { _tag: "reject", error: Either.getOrThrow(Codec.encodeWith(Errors.RpcError, peer.refusal)) })
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

    let refusedLogged = 0
    const refuseConnection = (connection: Connection, why: string) => {
      if (refusedLogged++ % 1000 === 0) {
        warn(`refusing connections (${refusedLogged} so far): ${why}`, { peer: connection.remote.host })
      }
      connection.close()
    }

    // Connections closed in their handshake having said (or proved) nothing — for a newcomer, or at the handshake
    // timeout — are what a flood of them costs the node: named now and then, not one log line each.
    let dropped = 0
    const dropUnproven = (peer: Peer, when: string, reason: string) => {
      if (dropped++ % 1000 === 0) {
        warn(
          `closed ${dropped} connection(s) that ${peer.heard ? "proved" : "said"} nothing in their handshake so far ` +
            `(the latest from ${peer.connection.remote.host}, ${when})`,
          { peer: peer.connection.remote.host }
        )
      }
      close(peer, reason)
    }

    const finish = (peer: Peer, reason: string) => {
      handshaking.delete(peer)
      if (!live.delete(peer)) return
      byId.delete(peer.id)
      peer.phase = "closed"
      if (peers.get(RpcAddress.key(peer.identity)) === peer) peers.delete(RpcAddress.key(peer.identity))
      const error = peer.refusal ?? new Errors.ConnectionLost({ peer: peer.identity.hostPort, reason })
      if (peer.link !== undefined) data.closed(peer.link, error)
      asks.failWaiting(peer.asks, error)
      if (peer.ready !== undefined) Deferred.unsafeDone(peer.ready, Exit.fail(error))
      if (peer.wasOpen) endpoints.notify({ _tag: "disconnected", peer: peer.identity, connection: peer.id })
    }

    const close = (peer: Peer, reason: string) => {
      finish(peer, reason)
      peer.connection.close()
    }

    // Refuses the connection: tells the peer why (best effort), reports locally, and closes.
    const refuse = (
      peer: Peer,
      error: Errors.AuthenticationFailed | Errors.ProtocolVersionMismatch | Errors.FrameTooLarge
    ) => {
      warn(`refusing connection: ${error.message}`, { peer: peer.identity.hostPort })
      peer.refusal = error
      write(peer, { _tag: "reject", error: Either.getOrThrow(Codec.encodeWith(Errors.RpcError, error)) })
      close(peer, error.message)
    }

    const authFailed = (peer: Peer, reason: string) =>
      refuse(peer, new Errors.AuthenticationFailed({ peer: peer.identity.hostPort, reason }))

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
      peer.handOver = peer.connection.valueSink?.()
      const key = RpcAddress.key(peer.identity)
      const current = peers.get(key)
      if (current === undefined || current.phase !== "open") peers.set(key, peer)
      endpoints.notify({ _tag: "connected", peer: peer.identity, connection: peer.id })
      if (peer.ready !== undefined) Deferred.unsafeDone(peer.ready, Exit.succeed(peer))
    }

    const welcome = (peer: Peer) => {
      open(peer)
      write(peer, { _tag: "welcome", version: Envelope.protocolVersion, address: address ?? null })
    }

    const handshakeActions: HandshakeActions = { secretKey, write, open, welcome, refuse, authFailed }

    const onReject = (peer: Peer, error: unknown) => {
      const decoded = Codec.decodeWith(Errors.RpcError, error)
      peer.refusal = Either.isRight(decoded)
        ? decoded.right
        : new Errors.ConnectionLost({ peer: peer.identity.hostPort, reason: "refused by the peer" })
      warn(`connection refused by the peer: ${peer.refusal.message}`, { peer: peer.identity.hostPort })
      close(peer, peer.refusal.message)
    }

    // A message for an endpoint of this node, from a frame (`body` encoded) or handed over (`body` the message).
    const onInbound = (
      peer: Peer,
      envelope: Extract<Envelope.Envelope, { _tag: "send" | "ask" }>,
      handed: boolean
    ) => {
      const id = envelope._tag === "ask" ? envelope.id : undefined
      const fail = (error: Errors.RpcError, request: string) => {
        if (id === undefined) {
          return warn(`dropped a message: ${error.message}`, { peer: peer.identity.hostPort, request })
        }
        if (handed) return handOver(peer, { _tag: "failure", id, error })
        write(peer, { _tag: "failure", id, error: Either.getOrThrow(Codec.encodeWith(Errors.RpcError, error)) })
      }
      const tag = typeof (envelope.body as { _tag?: unknown } | null)?._tag === "string"
        ? (envelope.body as { _tag: string })._tag
        : "?"
      if (id !== undefined && !peer.answered.add(id)) {
        return warn(`ignored a repeated ask (id ${id})`, { peer: peer.identity.hostPort, request: tag })
      }
      const endpoint = endpoints.get(envelope.to)
      if (endpoint === undefined) return fail(new Errors.EndpointNotFound({ endpoint: envelope.to }), tag)
      let message: Codec.Message
      if (handed) {
        message = envelope.body as Codec.Message
        if (!endpoint.accepts(message)) return fail(endpoint.refusal(message), tag)
      } else {
        const decoded = Codec.decodeWith(endpoint.inbound, envelope.body)
        if (Either.isLeft(decoded)) return fail(decoded.left, tag)
        message = decoded.right as Codec.Message
      }
      const reply = id === undefined ? undefined : (exit: Exit.Exit<unknown, unknown>) => {
        if (peer.phase !== "open") return
        if (handed) return handOver(peer, handedReply(id, endpoint.name, message, exit))
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

    // An envelope a node of this process handed over: only messages and replies come so, on an open control
    // connection, and only ever from `handOver`.
    const onHanded = (peer: Peer, envelope: Envelope.Envelope) => {
      peer.lastReceived = clock.unsafeCurrentTimeMillis()
      switch (envelope._tag) {
        case "send":
        case "ask":
          return onInbound(peer, envelope, true)
        case "reply":
        case "failure":
          return asks.answer(envelope, true)
        default:
          return misplaced(peer, envelope._tag)
      }
    }

    const onFrame = (peer: Peer, payload: Uint8Array) => {
      const value = Codec.unpackPayload(payload)
      const decoded = Either.flatMap(value, Codec.decodeEnvelope)
      if (Either.isLeft(decoded)) {
        if (peer.phase !== "open") return authFailed(peer, `malformed handshake: ${bounded(decoded.left.reason)}`)
        // An ask whose id can be read is answered, so that its asker learns why instead of waiting for its
        // timeout; the ask is not carried out.
        const askId = Either.isRight(value) && peer.link === undefined ? Codec.askIdOf(value.right) : undefined
        if (askId !== undefined && peer.answered.add(askId)) {
          write(peer, {
            _tag: "failure",
            id: askId,
            error: Either.getOrThrow(Codec.encodeWith(Errors.RpcError, decoded.left))
          })
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
          return onHandshake(handshakeActions, peer, envelope)
        case "reject":
          return onReject(peer, envelope.error)
        case "ping":
          return
        case "send":
        case "ask":
          // Nothing is delivered on a connection that has not completed its handshake.
          if (peer.phase !== "open") return authFailed(peer, `${envelope._tag} before the handshake completed`)
          if (peer.link !== undefined) return misplaced(peer, envelope._tag)
          return onInbound(peer, envelope, false)
        case "reply":
        case "failure":
          if (peer.phase !== "open") return authFailed(peer, `${envelope._tag} before the handshake completed`)
          if (peer.link !== undefined) return misplaced(peer, envelope._tag)
          return asks.answer(envelope)
        default:
          if (peer.phase !== "open") return authFailed(peer, `${envelope._tag} before the handshake completed`)
          if (peer.link === undefined) return misplaced(peer, envelope._tag)
          return data.received(peer.link, envelope)
      }
    }

    const misplaced = (peer: Peer, tag: Envelope.Envelope["_tag"]) =>
      warn(`dropped ${tag} on a ${peer.purpose} connection`, { peer: peer.identity.hostPort })

    const attach = (
      connection: Connection,
      direction: Peer["direction"],
      identity: RpcAddress.RpcAddress,
      purpose: Envelope.Purpose
    ): { readonly peer: Peer; readonly handler: ConnectionHandler } => {
      const now = clock.unsafeCurrentTimeMillis()
      const peer = makePeer({
        id: nextConnectionId++,
        connection,
        direction,
        identity,
        purpose,
        now,
        handshakeTimeoutMillis: Duration.toMillis(handshakeTimeout),
        maxFrameSize
      })
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
          if (peer.direction === "in" && !peer.heard && EncryptionGreeting.startsLikeGreeting(bytes)) {
            peer.heard = true
            return authFailed(
              peer,
              "the peer encrypts its connections (kindling.network.crypto.enabled) and this node does not"
            )
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
        onClose: (reason) => finish(peer, reason),
        onValue: (value) => {
          if (peer.phase !== "open" || peer.handOver === undefined) return
          try {
            onHanded(peer, value as Envelope.Envelope)
          } catch (error) {
            warn(`error while handling a message: ${String(error)}`, { peer: peer.identity.hostPort })
          }
        }
      }
      return { peer, handler }
    }

    // A node dialled something that is not a Kindling node: say so, not that a frame was too large.
    const notKindling = (peer: Peer, how: string) => {
      const reason = `the peer at ${peer.identity.hostPort} does not speak the Kindling protocol (${how})`
      peer.refusal = new Errors.ConnectionLost({ peer: peer.identity.hostPort, reason })
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
      const chunk = peer.link === undefined ? undefined : Codec.decodeChunkPieces(pieces)
      if (chunk === undefined) return onFrame(peer, concat(pieces))
      data.receivedChunk(peer.link!, chunk)
    }

    // Connecting and the handshake together must finish within the lookup timeout: a host that is down or cut off
    // drops the SYNs, and the kernel would otherwise keep trying for two minutes while every asker waits.
    const dial = (target: RpcAddress.RpcAddress, purpose: Envelope.Purpose): Effect.Effect<Peer, Errors.RpcError> =>
      Effect.gen(function*() {
        let peer: Peer | undefined
        yield* transport.connect(target.host, target.port, (connection) => {
          const attached = attach(connection, "out", target, purpose)
          peer = attached.peer
          return attached.handler
        }).pipe(Effect.mapError((error) => new Errors.ConnectFailed({ peer: target.hostPort, reason: error.reason })))
        const dialled = peer!
        const ready = yield* Deferred.make<Peer, Errors.RpcError>()
        dialled.ready = ready
        if ((dialled.phase as Phase) === "closed") {
          return yield* Effect.fail(
            dialled.refusal ?? new Errors.ConnectionLost({ peer: target.hostPort, reason: "closed" })
          )
        }
        if (secretKey !== undefined) dialled.clientNonce = Handshake.makeNonce()
        // A control connection's hello has no purpose: it is what nodes without a data plane send.
        write(dialled, {
          _tag: "hello",
          version: Envelope.protocolVersion,
          address: address ?? null,
          nonce: dialled.clientNonce ?? null,
          ...(purpose === "data" ? { purpose } : {})
        })
        return yield* Deferred.await(ready).pipe(
          Effect.onError(() => Effect.sync(() => close(dialled, `no handshake with ${target.hostPort}`)))
        )
      }).pipe(Effect.timeoutFail({
        duration: lookupTimeout,
        onTimeout: () =>
          new Errors.ConnectFailed({
            peer: target.hostPort,
            reason: `no answer within ${Duration.format(lookupTimeout)} (kindling.rpc.lookupTimeout)`
          })
      }))

    const peerFor = (target: RpcAddress.RpcAddress): Effect.Effect<Peer, Errors.RpcError> =>
      Effect.suspend(() => {
        const key = RpcAddress.key(target)
        const existing = peers.get(key)
        if (existing !== undefined && existing.phase === "open") return Effect.succeed(existing)
        return dials.dial(key, dial(target, "control"))
      })

    const { ask, send, sendNow } = makeSending({
      address: () => address,
      endpoints,
      asks,
      maxFrameSize,
      askTimeout,
      clock,
      openPeer: (target) => {
        const existing = peers.get(RpcAddress.key(target))
        return existing !== undefined && existing.phase === "open" ? existing : undefined
      },
      peerFor,
      connection: (id) => byId.get(id),
      write,
      handOver,
      ensureSweeper
    })

    // ---- endpoints ---------------------------------------------------------------------------------------

    // ---- lifecycle ---------------------------------------------------------------------------------------

    if (options.host !== undefined && options.port !== undefined) {
      const listener = yield* transport.listen(options.host, options.port, (connection) => {
        const room = handshakeToEvict(
          handshaking,
          connection.remote.host,
          handshakeLimits,
          clock.unsafeCurrentTimeMillis()
        )
        if (room !== undefined) {
          dropUnproven(room, "to make room for a new connection", "closed in its handshake to make room for another")
        }
        if (live.size >= maxConnections) {
          const victim = evictionCandidate(live)
          if (victim === undefined) {
            refuseConnection(connection, `${maxConnections} connections are open and all in use`)
            return ignored
          }
          close(victim, "closed to make room for a new connection")
        }
        const identity = new RpcAddress.RpcAddress({
          host: connection.remote.host || "unknown",
          port: connection.remote.port
        })
        return attach(connection, "in", identity, "control").handler
      })
      address = new RpcAddress.RpcAddress({ host: options.advertisedHost ?? options.host, port: listener.port })
    }

    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        yield* data.stop
        yield* dials.stop
        for (const peer of [...live]) close(peer, "node stopped")
        asks.stop()
        if (sweeper !== undefined) yield* Fiber.interrupt(sweeper)
        if (keepalive !== undefined) yield* Fiber.interrupt(keepalive)
      })
    )

    return {
      address,
      maxFrameSize,
      register: endpoints.register as Api.RpcEnv["register"],
      send,
      sendNow,
      ask,
      peers: Effect.sync(() =>
        [...peers.values()].filter((peer) => peer.phase === "open").map((peer) => peer.identity)
      ),
      refusesConnections: (target) =>
        transport.connect(target.host, target.port, () => ({ onData: () => {}, onClose: () => {} })).pipe(
          Effect.map((connection) => {
            connection.close()
            return false
          }),
          Effect.timeoutTo({ duration: lookupTimeout, onSuccess: (refused) => refused, onTimeout: () => false }),
          Effect.catchAll((failed) => Effect.succeed(failed.refused === true))
        ),
      data: data.api
    } satisfies Api.RpcEnv
  })
