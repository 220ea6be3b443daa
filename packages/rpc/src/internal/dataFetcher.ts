// The fetching side of the data plane: each fetch a stream of verified bytes from one block, over a connection per
// node (dialled once, closed when idle or when its server stalls), credit granted within the bounds on bytes in
// flight per connection and per node, an attempt broken by a lost connection or a corrupt chunk resumed from the
// last verified byte, with backoff, and a node's own blocks read straight from their source.
import { Codec, type Envelope, Errors, RpcAddress } from "@kindling/protocol"
import * as Chunk from "effect/Chunk"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import type * as Api from "../DataPlane.js"
import * as FetchRetries from "../FetchRetries.js"
import type { Registration } from "./dataServer.js"
import { checkOffset, type DataMessage, type Link, readExactly, type Shared } from "./dataShared.js"
import { makeSharedDials } from "./sharedDials.js"

/** What ends one attempt of a fetch without ending the fetch. */
type AttemptError = Errors.BlockCorrupted | Errors.RpcError

type TransferState =
  | { readonly _tag: "idle" }
  | { readonly _tag: "active"; readonly link: FetchLink; readonly id: number }
  | { readonly _tag: "broken"; readonly error: AttemptError }
  | { readonly _tag: "ended" }
  | { readonly _tag: "failed"; readonly error: Errors.TransferError }

/** The fetcher's bytes in flight from one node, over its streams and whichever connection carries them. */
interface Route {
  readonly key: string
  used: number
  transfers: number
}

interface Transfer {
  readonly from: RpcAddress.RpcAddress
  readonly blockId: string
  readonly route: Route
  /** Whether its chunks come with their CRC-32, checked here; false when the consumer checks the bytes itself. */
  readonly checksums: boolean
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
  /** When the server last sent anything on it: only its frames show that it still serves. */
  lastHeard: number
  /** When this node first asked for bytes (a fetch, credit) after the server last sent anything, if it has. */
  askedSince: number | undefined
  watch: Fiber.RuntimeFiber<void> | undefined
}

// A failed handshake fails the same way every time.
const isFinal = (error: AttemptError) =>
  error._tag === "AuthenticationFailed" || error._tag === "ProtocolVersionMismatch"

export interface Fetcher {
  readonly fetch: Api.DataPlane["fetch"]
  /** Takes what a server sent on a connection this node fetches on; false if it is not the fetcher's to take. */
  readonly received: (link: Link, envelope: Envelope.DataEnvelope) => boolean
  /** A chunk read without joining its pieces; false if the connection is not one this node fetches on. */
  readonly receivedChunk: (link: Link, chunk: Codec.ChunkPieces) => boolean
  readonly closed: (link: Link, error: Errors.RpcError) => void
  readonly forget: Api.DataPlane["forget"]
  readonly stop: () => void
  readonly stats: () =>
    & Pick<
      Api.Stats,
      "fetching" | "inFlight" | "peakInFlight" | "peakInFlightPerConnection" | "bytesFetched" | "retries"
    >
    & { readonly connections: number }
}

export const makeFetcher = (
  shared: Shared,
  registrationOf: (blockId: string) => Registration | undefined
): Fetcher => {
  const { checksum, clock, host, runFork, send } = shared
  const {
    chunkSize,
    creditBatch,
    idleTimeout,
    maxInFlight,
    maxInFlightPerConnection,
    maxRetries,
    quantum,
    retryWait,
    streamWindow
  } = shared.settings
  let stopped = false
  let bytesFetched = 0
  let retries = 0
  let inFlight = 0
  let peakInFlight = 0
  let peakInFlightPerConnection = 0

  const transfers = new Set<Transfer>()
  // Nodes told lost (`forget`), with why: no fetch from them is tried again.
  const forgotten = new Map<string, string>()
  const routes = new Map<string, Route>()
  const fetchLinks = new Map<string, FetchLink>()
  const fetchLinkOf = new Map<Link, FetchLink>()
  const dials = makeSharedDials<FetchLink>(
    runFork,
    (key) => new Errors.ConnectionLost({ peer: key, reason: "node stopped" })
  )
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
      ask(transfer.state.link, { _tag: "credit", id: transfer.state.id, bytes })
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

  const heard = (link: FetchLink) => {
    touch(link)
    link.lastHeard = link.lastActive
    link.askedSince = undefined
  }

  // A fetch or credit: with the bytes it grants, the server owes an answer from now on.
  const ask = (link: FetchLink, message: DataMessage<"fetch"> | DataMessage<"credit">) => {
    touch(link)
    if ((message._tag === "fetch" ? message.window : message.bytes) > 0) link.askedSince ??= link.lastActive
    send(link.link, message)
  }

  // A connection is closed after the idle timeout: an idle one (no stream uses it) when nothing has moved on it,
  // because it is not needed; one whose server owes bytes when the server has sent no frame since it was first
  // asked for bytes after its last one, because the server has stalled (or what it sends no longer makes frames),
  // which the fetches then treat as a lost connection. Only the server's frames restart that wait: fetches opened
  // or cancelled meanwhile do not, or a connection that kept getting new fetches (its tasks killed and launched
  // again) would never be given up on. Streams that only wait for their consumers keep it open.
  const watch = (link: FetchLink): Effect.Effect<void> =>
    Effect.suspend(() => {
      if (!link.link.isOpen()) return Effect.void
      let owed = false
      for (const transfer of link.sessions.values()) owed ||= transfer.granted > 0
      const since = link.sessions.size === 0
        ? link.lastActive
        : owed
        ? link.askedSince ?? link.lastHeard
        : undefined
      const quiet = since === undefined ? 0 : clock.unsafeCurrentTimeMillis() - since
      if (since !== undefined && quiet >= idleTimeout) {
        link.watch = undefined
        link.link.close(link.sessions.size === 0 ? "idle" : `the server sent nothing for ${idleTimeout} ms`)
        return Effect.void
      }
      return Effect.zipRight(clock.sleep(Duration.millis(idleTimeout - quiet)), watch(link))
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
      error: new Errors.BlockCorrupted({ blockId: transfer.blockId, offset: transfer.offset, reason })
    }, true)

  const onChunk = (link: FetchLink, { crc, data, id, offset }: Codec.ChunkPieces) => {
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
    if (crc === undefined && transfer.checksums) return corrupted(transfer, "a chunk without its checksum")
    if (crc !== undefined) {
      let sum = 0
      for (const piece of data) sum = checksum(piece, sum)
      if (sum !== crc) return corrupted(transfer, "a chunk's checksum does not match its bytes")
    }
    transfer.offset += size
    transfer.granted -= size
    transfer.readyBytes += size
    bytesFetched += size
    for (const piece of data) if (piece.length > 0) transfer.ready.push(piece)
    wake(transfer)
  }

  const onEnd = (link: FetchLink, { id, size }: DataMessage<"end">) => {
    const transfer = link.sessions.get(id)
    if (transfer === undefined) return
    if (size !== transfer.offset) {
      return corrupted(transfer, `the stream ended at ${size} bytes after ${transfer.offset} arrived`)
    }
    endAttempt(transfer, { _tag: "ended" }, false)
  }

  const onFetchFailed = (link: FetchLink, { error, id }: DataMessage<"fetchFailed">) => {
    const transfer = link.sessions.get(id)
    if (transfer === undefined) return
    const decoded = Codec.decodeWith(Errors.FetchFailure, error)
    endAttempt(
      transfer,
      Either.isRight(decoded) ? { _tag: "failed", error: decoded.right } : { _tag: "broken", error: decoded.left },
      false
    )
  }

  const linkTo = (target: RpcAddress.RpcAddress): Effect.Effect<FetchLink, Errors.RpcError> =>
    Effect.suspend(() => {
      const key = RpcAddress.key(target)
      const existing = fetchLinks.get(key)
      if (existing !== undefined && existing.link.isOpen()) return Effect.succeed(existing)
      // A fetch interrupted while it waits (its task killed, its job cancelled) stops waiting at once.
      return dials.dial(
        key,
        Effect.map(host.connect(target), (link) => {
          const fetchLink: FetchLink = {
            link,
            key,
            sessions: new Map(),
            lastActive: clock.unsafeCurrentTimeMillis(),
            lastHeard: clock.unsafeCurrentTimeMillis(),
            askedSince: undefined,
            watch: undefined
          }
          fetchLinks.set(key, fetchLink)
          fetchLinkOf.set(link, fetchLink)
          fetchLink.watch = runFork(watch(fetchLink))
          return fetchLink
        })
      )
    })

  const lostPeer = (transfer: Transfer, reason: string) =>
    new Errors.TransferFailed({
      blockId: transfer.blockId,
      peer: transfer.from.hostPort,
      attempts: transfer.attempts,
      lastError: new Errors.ConnectionLost({ peer: transfer.from.hostPort, reason })
    })

  const forget: Api.DataPlane["forget"] = (from, reason) =>
    Effect.sync(() => {
      const key = RpcAddress.key(from)
      forgotten.set(key, reason)
      for (const transfer of transfers) {
        if (transfer.route.key !== key || transfer.state._tag === "ended" || transfer.state._tag === "failed") continue
        endAttempt(transfer, { _tag: "failed", error: lostPeer(transfer, reason) }, true)
      }
      fetchLinks.get(key)?.link.close(reason)
    })

  const start = (transfer: Transfer): Effect.Effect<void> =>
    Effect.suspend(() => {
      const lost = forgotten.get(transfer.route.key)
      if (lost !== undefined) {
        transfer.state = { _tag: "failed", error: lostPeer(transfer, lost) }
        return Effect.void
      }
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
              error: new Errors.ConnectionLost({ peer: transfer.from.hostPort, reason: "closed" })
            }
            return
          }
          const id = nextStreamId++
          link.sessions.set(id, transfer)
          transfer.state = { _tag: "active", link, id }
          ask(link, {
            _tag: "fetch",
            id,
            block: transfer.blockId,
            offset: transfer.offset,
            window: claim(transfer),
            ...(transfer.checksums ? {} : { checksums: false })
          })
        }
      })
    })

  // When to try again, and when to give up, is `FetchRetries`'s to say; this carries it out.
  const retry = (transfer: Transfer, error: AttemptError): Effect.Effect<void> =>
    Effect.suspend(() => {
      const decision = FetchRetries.afterBroken(
        { maxRetries, retryWaitMillis: retryWait },
        transfer.failures,
        transfer.offset > transfer.attemptOffset,
        isFinal(error)
      )
      transfer.failures = decision.failures
      if (decision._tag === "GiveUp") {
        transfer.state = {
          _tag: "failed",
          error: new Errors.TransferFailed({
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
        clock.sleep(Duration.millis(decision.waitMillis)),
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

  const pull = (transfer: Transfer): Effect.Effect<Chunk.Chunk<Uint8Array>, Option.Option<Errors.TransferError>> =>
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
          return Effect.async<Chunk.Chunk<Uint8Array>, Option.Option<Errors.TransferError>>((resume) => {
            transfer.wake = () => resume(pull(transfer))
            return Effect.sync(() => {
              transfer.wake = undefined
            })
          })
      }
    })

  const nodeStopped = (transfer: Transfer) =>
    new Errors.TransferFailed({
      blockId: transfer.blockId,
      peer: transfer.from.hostPort,
      attempts: transfer.attempts,
      lastError: new Errors.ConnectionLost({ peer: transfer.from.hostPort, reason: "node stopped" })
    })

  const open = (from: RpcAddress.RpcAddress, blockId: string, offset: number, checksums: boolean): Transfer => {
    const key = RpcAddress.key(from)
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
      checksums,
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

  const fetchRemote = (from: RpcAddress.RpcAddress, blockId: string, offset: number, checksums: boolean) =>
    Stream.unwrapScoped(
      Effect.map(
        Effect.acquireRelease(
          Effect.sync(() => open(from, blockId, offset, checksums)),
          (transfer) => Effect.sync(() => close(transfer))
        ),
        (transfer) => Stream.repeatEffectChunkOption(pull(transfer))
      )
    )

  // A node's own blocks are read straight from their source.
  const fetchLocal = (self: RpcAddress.RpcAddress, blockId: string, offset: number) =>
    Stream.unwrapScoped(Effect.gen(function*() {
      const registration = registrationOf(blockId)
      if (registration === undefined) return yield* new Errors.BlockNotFound({ blockId })
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

  const fetch = (from: RpcAddress.RpcAddress, blockId: string, fetchOptions?: Api.FetchOptions) => {
    const offset = fetchOptions?.offset ?? 0
    if (!Number.isSafeInteger(offset) || offset < 0) {
      return Stream.fail(new Errors.TransferRefused({ blockId, reason: `offset ${offset} is not a byte position` }))
    }
    const self = host.address()
    return self !== undefined && RpcAddress.key(self) === RpcAddress.key(from)
      ? fetchLocal(self, blockId, offset)
      : fetchRemote(from, blockId, offset, fetchOptions?.checksums ?? true)
  }

  const received = (link: Link, envelope: Envelope.DataEnvelope): boolean => {
    const fetchLink = fetchLinkOf.get(link)
    if (fetchLink === undefined) return false
    heard(fetchLink)
    switch (envelope._tag) {
      case "chunk":
        onChunk(fetchLink, { id: envelope.id, offset: envelope.offset, crc: envelope.crc, data: [envelope.data] })
        return true
      case "end":
        onEnd(fetchLink, envelope)
        return true
      case "fetchFailed":
        onFetchFailed(fetchLink, envelope)
        return true
      default:
        return false
    }
  }

  const receivedChunk = (link: Link, chunk: Codec.ChunkPieces): boolean => {
    const fetchLink = fetchLinkOf.get(link)
    if (fetchLink === undefined) return false
    heard(fetchLink)
    onChunk(fetchLink, chunk)
    return true
  }

  const closed = (link: Link, error: Errors.RpcError) => {
    const fetchLink = fetchLinkOf.get(link)
    if (fetchLink === undefined) return
    fetchLinkOf.delete(link)
    if (fetchLinks.get(fetchLink.key) === fetchLink) fetchLinks.delete(fetchLink.key)
    fetchLink.watch?.unsafeInterruptAsFork(FiberId.none)
    for (const transfer of [...fetchLink.sessions.values()]) endAttempt(transfer, { _tag: "broken", error }, false)
  }

  const stop = () => {
    stopped = true
    for (const transfer of transfers) {
      if (transfer.state._tag === "ended" || transfer.state._tag === "failed") continue
      endAttempt(transfer, { _tag: "failed", error: nodeStopped(transfer) }, true)
    }
    for (const fetchLink of fetchLinks.values()) fetchLink.watch?.unsafeInterruptAsFork(FiberId.none)
    runFork(dials.stop)
  }

  const stats = () => ({
    connections: fetchLinks.size,
    fetching: transfers.size,
    inFlight,
    peakInFlight,
    peakInFlightPerConnection,
    bytesFetched,
    retries
  })

  return { fetch, received, receivedChunk, closed, forget, stop, stats }
}
