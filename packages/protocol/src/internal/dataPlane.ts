import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import {
  chunkFrameOverhead,
  type ChunkPieces,
  decodeWith,
  encodeChunkFrame,
  encodeFrame,
  encodeWith
} from "../Codec.js"
import type * as Api from "../DataPlane.js"
import type { DataEnvelope } from "../Envelope.js"
import {
  BlockCorrupted,
  BlockNotFound,
  ConnectionLost,
  FetchFailure,
  type RpcError,
  type TransferError,
  TransferFailed,
  TransferRefused
} from "../Errors.js"
import { key as addressKey, type RpcAddress } from "../RpcAddress.js"
import type { Connection } from "../Transport.js"
import { concat } from "./bytes.js"
import { crc32 } from "./crc32.js"

export class PrefixAlreadyServed extends Data.TaggedError("PrefixAlreadyServed")<{ readonly prefix: string }> {
  override get message(): string {
    return `Blocks with the prefix ${this.prefix} are already served`
  }
}

export class Crc32 extends Context.Reference<Crc32>()("@kindling/protocol/DataPlane/Crc32", {
  defaultValue: (): (data: Uint8Array, value?: number) => number => crc32
}) {}

export const fromBytes = (bytes: Uint8Array): Api.BlockSource => ({
  size: bytes.length,
  read: (offset, length) => Effect.succeed(bytes.subarray(offset, offset + length))
})

/** One authenticated data connection, as the RpcEnv hands it to the data plane. */
export interface Link {
  /** "out": this node dialled it and fetches on it; "in": this node serves on it. */
  readonly direction: "in" | "out"
  readonly peer: RpcAddress
  readonly connection: Connection
  readonly isOpen: () => boolean
  readonly close: (reason: string) => void
}

/** What the data plane needs from its RpcEnv. */
export interface Host {
  readonly address: () => RpcAddress | undefined
  readonly maxFrameSize: number
  /** Opens an authenticated data connection to the node. */
  readonly connect: (target: RpcAddress) => Effect.Effect<Link, RpcError>
  readonly warn: (message: string, annotations: Record<string, unknown>) => void
}

export interface DataPlane {
  readonly api: Api.DataPlane
  readonly received: (link: Link, envelope: DataEnvelope) => void
  /** A chunk read without joining its pieces (see `Codec.decodeChunkPieces`). */
  readonly receivedChunk: (link: Link, chunk: ChunkPieces) => void
  readonly closed: (link: Link, error: RpcError) => void
  readonly stop: Effect.Effect<void>
}

const KiB = 1024
const MiB = 1024 * KiB

// A window or a send buffer larger than it takes to keep the consumer busy only queues bytes in socket buffers,
// where they delay everything behind them, asks included: on loopback, a 1 MiB window keeps a fetcher as busy as
// a 4 MiB one, and a 512 KiB buffer lets the server see the node's other I/O between every two chunks.
export const defaults = {
  chunkSize: 256 * KiB,
  window: MiB,
  maxInFlight: 48 * MiB,
  maxInFlightPerConnection: 16 * MiB,
  maxBuffered: 16 * MiB,
  maxBufferedPerConnection: 512 * KiB,
  maxRetries: 3,
  retryWait: Duration.seconds(1),
  idleTimeout: Duration.seconds(120)
} as const

type Envelope<Tag extends DataEnvelope["_tag"]> = Extract<DataEnvelope, { readonly _tag: Tag }>

// ---- serving ----------------------------------------------------------------------------------------------

interface Registration {
  readonly resolve: (
    blockId: string,
    requester: RpcAddress
  ) => Effect.Effect<Api.BlockSource, FetchFailure, Scope.Scope>
  readonly streams: Set<Serving>
}

interface ServerLink {
  readonly link: Link
  readonly streams: Map<number, Serving>
  drainArmed: boolean
}

interface Serving {
  readonly id: number
  readonly blockId: string
  readonly server: ServerLink
  readonly registration: Registration | undefined
  credit: number
  wake: (() => void) | undefined
  fiber: Fiber.RuntimeFiber<void> | undefined
}

// ---- fetching ---------------------------------------------------------------------------------------------

/** What ends one attempt of a fetch without ending the fetch. */
type AttemptError = BlockCorrupted | RpcError

type TransferState =
  | { readonly _tag: "idle" }
  | { readonly _tag: "active"; readonly link: FetchLink; readonly id: number }
  | { readonly _tag: "broken"; readonly error: AttemptError }
  | { readonly _tag: "ended" }
  | { readonly _tag: "failed"; readonly error: TransferError }

/** The fetcher's bytes in flight from one node, over its streams and whichever connection carries them. */
interface Route {
  readonly key: string
  used: number
  transfers: number
}

interface Transfer {
  readonly from: RpcAddress
  readonly blockId: string
  readonly route: Route
  state: TransferState
  /** Where the verified bytes end. */
  offset: number
  /** Verified bytes the consumer has not taken. */
  ready: Array<Uint8Array>
  readyBytes: number
  /** Credit granted on the current attempt and not used yet. */
  granted: number
  attempts: number
  /** Attempts in a row that got no further. */
  failures: number
  attemptOffset: number
  wake: (() => void) | undefined
}

interface FetchLink {
  readonly link: Link
  readonly key: string
  readonly sessions: Map<number, Transfer>
  /** When bytes last moved on the connection, or it last had its streams change. */
  lastActive: number
  watch: Fiber.RuntimeFiber<void> | undefined
}

// A failed handshake fails the same way every time.
const isFinal = (error: AttemptError) =>
  error._tag === "AuthenticationFailed" || error._tag === "ProtocolVersionMismatch"

const checkOffset = (blockId: string, offset: number, size: number): Effect.Effect<void, TransferRefused> =>
  offset <= size
    ? Effect.void
    : Effect.fail(new TransferRefused({ blockId, reason: `offset ${offset} is beyond the block's ${size} bytes` }))

const readExactly = (source: Api.BlockSource, blockId: string, offset: number, length: number) =>
  Effect.flatMap(source.read(offset, length), (data) =>
    data.length === length
      ? Effect.succeed(data)
      : Effect.fail(
        new TransferRefused({
          blockId,
          reason: `reading ${length} bytes at offset ${offset} gave ${data.length}`
        })
      ))

export const make = (options: Api.Options, host: Host): Effect.Effect<DataPlane> =>
  Effect.gen(function*() {
    const runFork = Runtime.runFork(yield* Effect.runtime<never>())
    const clock = yield* Effect.clock
    const checksum = yield* Crc32
    const chunkSize = Math.max(
      1,
      Math.min(options.chunkSize ?? defaults.chunkSize, host.maxFrameSize - chunkFrameOverhead)
    )
    const streamWindow = Math.max(1, options.window ?? defaults.window)
    // Credit goes out in whole chunks, so a starved stream is not fed in slivers, and in batches of half a window
    // when the bounds allow: each credit frame is a write on a socket that is busy receiving, which costs.
    const quantum = Math.min(chunkSize, streamWindow)
    const creditBatch = Math.max(quantum, Math.floor(streamWindow / 2))
    const maxInFlight = Math.max(quantum, options.maxInFlight ?? defaults.maxInFlight)
    const maxInFlightPerConnection = Math.max(
      quantum,
      options.maxInFlightPerConnection ?? defaults.maxInFlightPerConnection
    )
    const maxBuffered = options.maxBuffered ?? defaults.maxBuffered
    const maxBufferedPerConnection = options.maxBufferedPerConnection ?? defaults.maxBufferedPerConnection
    const maxRetries = options.maxRetries ?? defaults.maxRetries
    const retryWait = Duration.toMillis(options.retryWait ?? defaults.retryWait)
    const idleTimeout = Duration.toMillis(options.idleTimeout ?? defaults.idleTimeout)

    let stopped = false
    let bytesServed = 0
    let bytesFetched = 0
    let retries = 0
    let peakBuffered = 0
    let peakBufferedPerConnection = 0
    let inFlight = 0
    let peakInFlight = 0
    let peakInFlightPerConnection = 0

    const send = (link: Link, envelope: DataEnvelope) =>
      link.connection.write(Either.getOrThrow(encodeFrame(envelope, host.maxFrameSize)))

    const violation = (link: Link, reason: string) => {
      host.warn(`closing a data connection: ${reason}`, { peer: link.peer.hostPort })
      link.close(reason)
    }

    // ---- serving ------------------------------------------------------------------------------------------

    const registrations = new Map<string, Registration>()
    const serverLinks = new Map<Link, ServerLink>()
    const roomWaiters = new Set<() => void>()

    const registrationOf = (blockId: string): Registration | undefined => {
      let best: string | undefined
      for (const prefix of registrations.keys()) {
        if (blockId.startsWith(prefix) && (best === undefined || prefix.length > best.length)) best = prefix
      }
      return best === undefined ? undefined : registrations.get(best)
    }

    const bufferedOnNode = () => {
      let total = 0
      for (const server of serverLinks.values()) total += server.link.connection.bufferedBytes()
      return total
    }

    // Whether `bytes` more fit under both bounds; a connection (or node) with nothing buffered takes any one frame,
    // so a frame larger than a bound still goes out.
    const hasRoom = (server: ServerLink, bytes: number) => {
      const own = server.link.connection.bufferedBytes()
      if (own > 0 && own + bytes > maxBufferedPerConnection) return false
      const total = bufferedOnNode()
      return total === 0 || total + bytes <= maxBuffered
    }

    const wakeRoomWaiters = () => {
      const waiters = [...roomWaiters]
      roomWaiters.clear()
      for (const waiter of waiters) waiter()
    }

    // The node's bound is over every connection, so a writer waits for any of them to drain and looks again.
    const armDrains = () => {
      for (const server of serverLinks.values()) {
        if (server.drainArmed || server.link.connection.bufferedBytes() === 0) continue
        server.drainArmed = true
        server.link.connection.onDrain(() => {
          server.drainArmed = false
          wakeRoomWaiters()
        })
      }
    }

    const awaitRoom = (server: ServerLink, bytes: number): Effect.Effect<void> =>
      Effect.suspend(() =>
        hasRoom(server, bytes) ? Effect.void : Effect.async<void>((resume) => {
          const waiter = () => resume(awaitRoom(server, bytes))
          roomWaiters.add(waiter)
          armDrains()
          return Effect.sync(() => {
            roomWaiters.delete(waiter)
          })
        })
      )

    // The check and the write happen in one step: no other stream can fill the buffer in between.
    const write = (server: ServerLink, [header, data]: readonly [Uint8Array, Uint8Array]): Effect.Effect<void> =>
      Effect.suspend(() => {
        const size = header.length + data.length
        if (!hasRoom(server, size)) return Effect.zipRight(awaitRoom(server, size), write(server, [header, data]))
        server.link.connection.write(header)
        server.link.connection.write(data)
        peakBufferedPerConnection = Math.max(peakBufferedPerConnection, server.link.connection.bufferedBytes())
        peakBuffered = Math.max(peakBuffered, bufferedOnNode())
        return Effect.void
      })

    const awaitCredit = (serving: Serving): Effect.Effect<number> =>
      Effect.suspend(() =>
        serving.credit > 0 ? Effect.succeed(serving.credit) : Effect.async<number>((resume) => {
          serving.wake = () => {
            serving.wake = undefined
            resume(awaitCredit(serving))
          }
          return Effect.sync(() => {
            serving.wake = undefined
          })
        })
      )

    const stream = (serving: Serving, registration: Registration, offset: number) =>
      Effect.gen(function*() {
        const { blockId, id, server } = serving
        const source = yield* registration.resolve(blockId, server.link.peer)
        yield* checkOffset(blockId, offset, source.size)
        let position = offset
        while (position < source.size) {
          const credit = yield* awaitCredit(serving)
          const length = Math.min(chunkSize, credit, source.size - position)
          // Read only when the bytes can go out soon, so a stream holds at most one chunk outside the buffer.
          yield* awaitRoom(server, length + chunkFrameOverhead)
          const data = yield* readExactly(source, blockId, position, length)
          yield* write(server, encodeChunkFrame({ id, offset: position, crc: checksum(data), data }))
          serving.credit -= length
          position += length
          bytesServed += length
        }
        send(server.link, { _tag: "end", id, size: source.size })
      }).pipe(Effect.scoped)

    const isServing = (serving: Serving) => serving.server.streams.get(serving.id) === serving

    const forget = (serving: Serving) => {
      if (isServing(serving)) serving.server.streams.delete(serving.id)
      serving.registration?.streams.delete(serving)
    }

    const answerFailure = (serving: Serving, cause: Cause.Cause<FetchFailure>) =>
      Effect.suspend(() => {
        if (Cause.isInterruptedOnly(cause) || !isServing(serving)) return Effect.void
        const failure = Cause.failureOption(cause)
        const error = Option.getOrElse(
          failure,
          () => new TransferRefused({ blockId: serving.blockId, reason: "the server failed while serving it" })
        )
        send(serving.server.link, {
          _tag: "fetchFailed",
          id: serving.id,
          error: Either.getOrThrow(encodeWith(FetchFailure, error))
        })
        return Option.isSome(failure) ? Effect.void : Effect.logError(`serving ${serving.blockId} failed`, cause)
      })

    const onFetch = (server: ServerLink, { block, id, offset, window }: Envelope<"fetch">) => {
      if (server.streams.has(id)) return violation(server.link, `stream ${id} opened twice`)
      const registration = registrationOf(block)
      const serving: Serving = {
        id,
        blockId: block,
        server,
        registration,
        credit: window,
        wake: undefined,
        fiber: undefined
      }
      server.streams.set(id, serving)
      registration?.streams.add(serving)
      const program = registration === undefined
        ? Effect.fail(new BlockNotFound({ blockId: block }))
        : stream(serving, registration, offset)
      const fiber = runFork(Effect.catchAllCause(program, (cause) => answerFailure(serving, cause)))
      serving.fiber = fiber
      fiber.addObserver(() => forget(serving))
    }

    const onCredit = (server: ServerLink, { bytes, id }: Envelope<"credit">) => {
      const serving = server.streams.get(id)
      if (serving === undefined) return
      serving.credit += bytes
      serving.wake?.()
    }

    const stopServing = (serving: Serving) => {
      forget(serving)
      serving.fiber?.unsafeInterruptAsFork(FiberId.none)
    }

    const onCancel = (server: ServerLink, { id }: Envelope<"cancel">) => {
      const serving = server.streams.get(id)
      if (serving !== undefined) stopServing(serving)
    }

    const serve = <R>(prefix: string, resolve: Api.Resolver<R>) =>
      Effect.gen(function*() {
        const context = yield* Effect.context<Exclude<R, Scope.Scope>>()
        const registration: Registration = {
          resolve: (blockId, requester) =>
            Effect.provide(resolve(blockId, requester), context) as Effect.Effect<
              Api.BlockSource,
              FetchFailure,
              Scope.Scope
            >,
          streams: new Set()
        }
        yield* Effect.acquireRelease(
          Effect.suspend(() => {
            if (registrations.has(prefix)) return Effect.fail(new PrefixAlreadyServed({ prefix }))
            registrations.set(prefix, registration)
            return Effect.void
          }),
          () =>
            Effect.sync(() => {
              registrations.delete(prefix)
              for (const serving of [...registration.streams]) {
                if (isServing(serving)) {
                  send(serving.server.link, {
                    _tag: "fetchFailed",
                    id: serving.id,
                    error: Either.getOrThrow(encodeWith(FetchFailure, new BlockNotFound({ blockId: serving.blockId })))
                  })
                }
                stopServing(serving)
              }
            })
        )
      })

    // ---- fetching -----------------------------------------------------------------------------------------

    const transfers = new Set<Transfer>()
    const routes = new Map<string, Route>()
    const fetchLinks = new Map<string, FetchLink>()
    const fetchLinkOf = new Map<Link, FetchLink>()
    const dialing = new Map<string, Deferred.Deferred<FetchLink, RpcError>>()
    // Streams that want credit the bounds do not allow yet, served in the order they started waiting.
    const starved = new Set<Transfer>()
    let nextStreamId = 0

    // Takes the credit a stream lacks, as far as both bounds allow, and says how much.
    const claim = (transfer: Transfer): number => {
      const want = transfer.state._tag === "active"
        ? streamWindow - transfer.granted - transfer.readyBytes
        : 0
      if (want < creditBatch) {
        starved.delete(transfer)
        return 0
      }
      const grant = Math.min(want, maxInFlight - inFlight, maxInFlightPerConnection - transfer.route.used)
      if (grant < quantum) {
        starved.add(transfer)
        return 0
      }
      transfer.granted += grant
      inFlight += grant
      transfer.route.used += grant
      peakInFlight = Math.max(peakInFlight, inFlight)
      peakInFlightPerConnection = Math.max(peakInFlightPerConnection, transfer.route.used)
      if (want - grant >= creditBatch) starved.add(transfer)
      else starved.delete(transfer)
      return grant
    }

    const grantCredit = (transfer: Transfer) => {
      const bytes = claim(transfer)
      if (bytes > 0 && transfer.state._tag === "active") {
        touch(transfer.state.link)
        send(transfer.state.link.link, { _tag: "credit", id: transfer.state.id, bytes })
      }
    }

    const release = (route: Route, bytes: number) => {
      if (bytes === 0) return
      inFlight -= bytes
      route.used -= bytes
      for (const transfer of [...starved]) grantCredit(transfer)
    }

    const wake = (transfer: Transfer) => {
      const resume = transfer.wake
      transfer.wake = undefined
      resume?.()
    }

    const touch = (link: FetchLink) => {
      link.lastActive = clock.unsafeCurrentTimeMillis()
    }

    // A connection on which nothing has moved for the idle timeout is closed: an idle one because it is not needed,
    // and one whose server owes bytes because the server has stalled, which the fetches then treat as a lost
    // connection. Streams that only wait for their consumers keep it open.
    const watch = (link: FetchLink): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (!link.link.isOpen()) return Effect.void
        const quiet = clock.unsafeCurrentTimeMillis() - link.lastActive
        let owed = false
        for (const transfer of link.sessions.values()) owed ||= transfer.granted > 0
        const watched = link.sessions.size === 0 || owed
        if (watched && quiet >= idleTimeout) {
          link.watch = undefined
          link.link.close(link.sessions.size === 0 ? "idle" : `the server sent nothing for ${idleTimeout} ms`)
          return Effect.void
        }
        return Effect.zipRight(clock.sleep(Duration.millis(watched ? idleTimeout - quiet : idleTimeout)), watch(link))
      })

    // Ends the current attempt, if one is running: the credit granted on it is void.
    const endAttempt = (transfer: Transfer, next: TransferState, cancel: boolean) => {
      if (transfer.state._tag === "active") {
        const { id, link } = transfer.state
        link.sessions.delete(id)
        touch(link)
        if (cancel && link.link.isOpen()) send(link.link, { _tag: "cancel", id })
      }
      transfer.state = next
      const granted = transfer.granted
      transfer.granted = 0
      starved.delete(transfer)
      release(transfer.route, granted)
      wake(transfer)
    }

    const corrupted = (transfer: Transfer, reason: string) =>
      endAttempt(transfer, {
        _tag: "broken",
        error: new BlockCorrupted({ blockId: transfer.blockId, offset: transfer.offset, reason })
      }, true)

    const onChunk = (link: FetchLink, { crc, data, id, offset }: ChunkPieces) => {
      // Chunks of a stream that was cancelled or restarted may still arrive; they are dropped.
      const transfer = link.sessions.get(id)
      if (transfer === undefined) return
      let size = 0
      for (const piece of data) size += piece.length
      if (offset !== transfer.offset) {
        return corrupted(transfer, `a chunk at offset ${offset} where ${transfer.offset} was expected`)
      }
      if (size > transfer.granted) {
        return corrupted(transfer, `a chunk of ${size} bytes beyond the ${transfer.granted} bytes of credit`)
      }
      let sum = 0
      for (const piece of data) sum = checksum(piece, sum)
      if (sum !== crc) return corrupted(transfer, "a chunk's checksum does not match its bytes")
      transfer.offset += size
      transfer.granted -= size
      transfer.readyBytes += size
      bytesFetched += size
      for (const piece of data) if (piece.length > 0) transfer.ready.push(piece)
      wake(transfer)
    }

    const onEnd = (link: FetchLink, { id, size }: Envelope<"end">) => {
      const transfer = link.sessions.get(id)
      if (transfer === undefined) return
      if (size !== transfer.offset) {
        return corrupted(transfer, `the stream ended at ${size} bytes after ${transfer.offset} arrived`)
      }
      endAttempt(transfer, { _tag: "ended" }, false)
    }

    const onFetchFailed = (link: FetchLink, { error, id }: Envelope<"fetchFailed">) => {
      const transfer = link.sessions.get(id)
      if (transfer === undefined) return
      const decoded = decodeWith(FetchFailure, error)
      endAttempt(
        transfer,
        Either.isRight(decoded) ? { _tag: "failed", error: decoded.right } : { _tag: "broken", error: decoded.left },
        false
      )
    }

    const linkTo = (target: RpcAddress): Effect.Effect<FetchLink, RpcError> =>
      Effect.suspend(() => {
        const key = addressKey(target)
        const existing = fetchLinks.get(key)
        if (existing !== undefined && existing.link.isOpen()) return Effect.succeed(existing)
        const pending = dialing.get(key)
        if (pending !== undefined) return Deferred.await(pending)
        // The dial goes on by itself, whoever waits for it: a fetch interrupted while it waits (its task killed,
        // its job cancelled) stops waiting at once — a connection attempt to an unreachable host can take minutes —
        // and leaves the dial to the fetches still waiting, and its outcome to the next.
        const deferred = Deferred.unsafeMake<FetchLink, RpcError>(FiberId.none)
        dialing.set(key, deferred)
        runFork(
          Effect.exit(Effect.map(host.connect(target), (link) => {
            const fetchLink: FetchLink = {
              link,
              key,
              sessions: new Map(),
              lastActive: clock.unsafeCurrentTimeMillis(),
              watch: undefined
            }
            fetchLinks.set(key, fetchLink)
            fetchLinkOf.set(link, fetchLink)
            fetchLink.watch = runFork(watch(fetchLink))
            return fetchLink
          })).pipe(
            Effect.flatMap((outcome) =>
              Effect.suspend(() => {
                dialing.delete(key)
                return Deferred.done(deferred, outcome)
              })
            )
          )
        )
        return Deferred.await(deferred)
      })

    const start = (transfer: Transfer): Effect.Effect<void> =>
      Effect.suspend(() => {
        transfer.attempts++
        transfer.attemptOffset = transfer.offset
        return Effect.match(linkTo(transfer.from), {
          onFailure: (error) => {
            transfer.state = { _tag: "broken", error }
          },
          onSuccess: (link) => {
            if (!link.link.isOpen()) {
              transfer.state = {
                _tag: "broken",
                error: new ConnectionLost({ peer: transfer.from.hostPort, reason: "closed" })
              }
              return
            }
            const id = nextStreamId++
            link.sessions.set(id, transfer)
            touch(link)
            transfer.state = { _tag: "active", link, id }
            send(link.link, {
              _tag: "fetch",
              id,
              block: transfer.blockId,
              offset: transfer.offset,
              window: claim(transfer)
            })
          }
        })
      })

    // Progress resets the count: a long transfer survives any number of blips that each let it get further.
    const retry = (transfer: Transfer, error: AttemptError): Effect.Effect<void> =>
      Effect.suspend(() => {
        transfer.failures = transfer.offset > transfer.attemptOffset ? 1 : transfer.failures + 1
        if (isFinal(error) || transfer.failures > maxRetries) {
          transfer.state = {
            _tag: "failed",
            error: new TransferFailed({
              blockId: transfer.blockId,
              peer: transfer.from.hostPort,
              attempts: transfer.attempts,
              lastError: error
            })
          }
          return Effect.void
        }
        retries++
        return Effect.zipRight(
          clock.sleep(Duration.millis(retryWait * 2 ** (transfer.failures - 1))),
          Effect.sync(() => {
            if (transfer.state._tag === "broken") transfer.state = { _tag: "idle" }
          })
        )
      })

    const take = (transfer: Transfer): Chunk.Chunk<Uint8Array> => {
      const chunks = transfer.ready
      const bytes = transfer.readyBytes
      transfer.ready = []
      transfer.readyBytes = 0
      release(transfer.route, bytes)
      grantCredit(transfer)
      return Chunk.unsafeFromArray(chunks)
    }

    const pull = (transfer: Transfer): Effect.Effect<Chunk.Chunk<Uint8Array>, Option.Option<TransferError>> =>
      Effect.suspend(() => {
        if (transfer.ready.length > 0) return Effect.succeed(take(transfer))
        const state = transfer.state
        switch (state._tag) {
          case "ended":
            return Effect.fail(Option.none())
          case "failed":
            return Effect.fail(Option.some(state.error))
          case "idle":
            return Effect.zipRight(start(transfer), pull(transfer))
          case "broken":
            return Effect.zipRight(retry(transfer, state.error), pull(transfer))
          case "active":
            return Effect.async<Chunk.Chunk<Uint8Array>, Option.Option<TransferError>>((resume) => {
              transfer.wake = () => resume(pull(transfer))
              return Effect.sync(() => {
                transfer.wake = undefined
              })
            })
        }
      })

    const nodeStopped = (transfer: Transfer) =>
      new TransferFailed({
        blockId: transfer.blockId,
        peer: transfer.from.hostPort,
        attempts: transfer.attempts,
        lastError: new ConnectionLost({ peer: transfer.from.hostPort, reason: "node stopped" })
      })

    const open = (from: RpcAddress, blockId: string, offset: number): Transfer => {
      const key = addressKey(from)
      let route = routes.get(key)
      if (route === undefined) {
        route = { key, used: 0, transfers: 0 }
        routes.set(key, route)
      }
      route.transfers++
      const transfer: Transfer = {
        from,
        blockId,
        route,
        state: { _tag: "idle" },
        offset,
        ready: [],
        readyBytes: 0,
        granted: 0,
        attempts: 0,
        failures: 0,
        attemptOffset: offset,
        wake: undefined
      }
      if (stopped) transfer.state = { _tag: "failed", error: nodeStopped(transfer) }
      transfers.add(transfer)
      return transfer
    }

    const close = (transfer: Transfer) => {
      endAttempt(transfer, { _tag: "ended" }, true)
      const bytes = transfer.readyBytes
      transfer.ready = []
      transfer.readyBytes = 0
      release(transfer.route, bytes)
      transfers.delete(transfer)
      if (--transfer.route.transfers === 0) routes.delete(transfer.route.key)
    }

    const fetchRemote = (from: RpcAddress, blockId: string, offset: number) =>
      Stream.unwrapScoped(
        Effect.map(
          Effect.acquireRelease(
            Effect.sync(() => open(from, blockId, offset)),
            (transfer) => Effect.sync(() => close(transfer))
          ),
          (transfer) => Stream.repeatEffectChunkOption(pull(transfer))
        )
      )

    // A node's own blocks are read straight from their source.
    const fetchLocal = (self: RpcAddress, blockId: string, offset: number) =>
      Stream.unwrapScoped(Effect.gen(function*() {
        const registration = registrationOf(blockId)
        if (registration === undefined) return yield* new BlockNotFound({ blockId })
        const source = yield* registration.resolve(blockId, self)
        yield* checkOffset(blockId, offset, source.size)
        return Stream.unfoldEffect(offset, (position) => {
          const length = Math.min(chunkSize, source.size - position)
          return length <= 0
            ? Effect.succeedNone
            : Effect.map(
              readExactly(source, blockId, position, length),
              (data) => Option.some([data, position + length] as const)
            )
        })
      }))

    const fetch = (from: RpcAddress, blockId: string, fetchOptions?: Api.FetchOptions) => {
      const offset = fetchOptions?.offset ?? 0
      if (!Number.isSafeInteger(offset) || offset < 0) {
        return Stream.fail(new TransferRefused({ blockId, reason: `offset ${offset} is not a byte position` }))
      }
      const self = host.address()
      return self !== undefined && addressKey(self) === addressKey(from)
        ? fetchLocal(self, blockId, offset)
        : fetchRemote(from, blockId, offset)
    }

    // ---- connections --------------------------------------------------------------------------------------

    const received = (link: Link, envelope: DataEnvelope) => {
      if (link.direction === "in") {
        let server = serverLinks.get(link)
        if (server === undefined) {
          server = { link, streams: new Map(), drainArmed: false }
          serverLinks.set(link, server)
        }
        switch (envelope._tag) {
          case "fetch":
            return onFetch(server, envelope)
          case "credit":
            return onCredit(server, envelope)
          case "cancel":
            return onCancel(server, envelope)
        }
      } else {
        const fetchLink = fetchLinkOf.get(link)
        if (fetchLink !== undefined) {
          touch(fetchLink)
          switch (envelope._tag) {
            case "chunk":
              return onChunk(fetchLink, { ...envelope, data: [envelope.data] })
            case "end":
              return onEnd(fetchLink, envelope)
            case "fetchFailed":
              return onFetchFailed(fetchLink, envelope)
          }
        }
      }
      violation(link, `${envelope._tag} sent the wrong way`)
    }

    const receivedChunk = (link: Link, chunk: ChunkPieces) => {
      const fetchLink = fetchLinkOf.get(link)
      if (fetchLink === undefined) return violation(link, "chunk sent the wrong way")
      touch(fetchLink)
      onChunk(fetchLink, chunk)
    }

    const closed = (link: Link, error: RpcError) => {
      const fetchLink = fetchLinkOf.get(link)
      if (fetchLink !== undefined) {
        fetchLinkOf.delete(link)
        if (fetchLinks.get(fetchLink.key) === fetchLink) fetchLinks.delete(fetchLink.key)
        fetchLink.watch?.unsafeInterruptAsFork(FiberId.none)
        for (const transfer of [...fetchLink.sessions.values()]) endAttempt(transfer, { _tag: "broken", error }, false)
      }
      const server = serverLinks.get(link)
      if (server !== undefined) {
        serverLinks.delete(link)
        for (const serving of [...server.streams.values()]) stopServing(serving)
        wakeRoomWaiters()
      }
    }

    const stop = Effect.sync(() => {
      stopped = true
      for (const transfer of transfers) {
        if (transfer.state._tag === "ended" || transfer.state._tag === "failed") continue
        endAttempt(transfer, { _tag: "failed", error: nodeStopped(transfer) }, true)
      }
      for (const fetchLink of fetchLinks.values()) fetchLink.watch?.unsafeInterruptAsFork(FiberId.none)
      for (const server of serverLinks.values()) {
        for (const serving of [...server.streams.values()]) stopServing(serving)
      }
    })

    const stats = Effect.sync((): Api.Stats => {
      let serving = 0
      for (const server of serverLinks.values()) serving += server.streams.size
      return {
        connections: fetchLinks.size + serverLinks.size,
        serving,
        buffered: bufferedOnNode(),
        peakBuffered,
        peakBufferedPerConnection,
        fetching: transfers.size,
        inFlight,
        peakInFlight,
        peakInFlightPerConnection,
        bytesServed,
        bytesFetched,
        retries
      }
    })

    const api: Api.DataPlane = {
      serve,
      fetch,
      fetchBytes: (from, blockId, fetchOptions) =>
        Effect.map(Stream.runCollect(fetch(from, blockId, fetchOptions)), concat),
      stats
    }
    return { api, received, receivedChunk, closed, stop }
  })
