/**
 * The data plane of a node: blocks served by prefix and fetched as streams over data connections of their own,
 * with credit-based flow control, bounds on the bytes buffered and in flight, checksummed chunks and resumption.
 * Serving is `dataServer.ts`, fetching `dataFetcher.ts`; this module sets them up and routes what arrives.
 */
import { Codec, type Envelope, type Errors } from "@kindling/protocol"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Runtime from "effect/Runtime"
import * as Stream from "effect/Stream"
import type * as Api from "../DataPlane.js"
import { concat } from "./bytes.js"
import { crc32 } from "./crc32.js"
import { makeFetcher } from "./dataFetcher.js"
import { makeServer } from "./dataServer.js"
import type { Host, Link, Settings, Shared } from "./dataShared.js"

export { PrefixAlreadyServed } from "./dataShared.js"
export type { Host, Link } from "./dataShared.js"

export class Crc32 extends Context.Reference<Crc32>()("@kindling/protocol/DataPlane/Crc32", {
  defaultValue: (): (data: Uint8Array, value?: number) => number => crc32
}) {}

export const fromBytes = (bytes: Uint8Array): Api.BlockSource => ({
  size: bytes.length,
  read: (offset, length) => Effect.succeed(bytes.subarray(offset, offset + length))
})

export interface DataPlane {
  readonly api: Api.DataPlane
  readonly received: (link: Link, envelope: Envelope.DataEnvelope) => void
  /** A chunk read without joining its pieces (see `Codec.decodeChunkPieces`). */
  readonly receivedChunk: (link: Link, chunk: Codec.ChunkPieces) => void
  readonly closed: (link: Link, error: Errors.RpcError) => void
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

export const make = (options: Api.Options, host: Host): Effect.Effect<DataPlane> =>
  Effect.gen(function*() {
    const runFork = Runtime.runFork(yield* Effect.runtime<never>())
    const clock = yield* Effect.clock
    const checksum = yield* Crc32
    const chunkSize = Math.max(
      1,
      Math.min(options.chunkSize ?? defaults.chunkSize, host.maxFrameSize - Codec.chunkFrameOverhead)
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

    const settings: Settings = {
      chunkSize,
      streamWindow,
      quantum,
      creditBatch,
      maxInFlight,
      maxInFlightPerConnection,
      maxBuffered,
      maxBufferedPerConnection,
      maxRetries,
      retryWait,
      idleTimeout
    }
    const shared: Shared = {
      host,
      settings,
      runFork,
      clock,
      checksum,
      send: (link, envelope) =>
        link.connection.write(Either.getOrThrow(Codec.encodeFrame(envelope, host.maxFrameSize))),
      violation: (link, reason) => {
        host.warn(`closing a data connection: ${reason}`, { peer: link.peer.hostPort })
        link.close(reason)
      }
    }
    const server = makeServer(shared)
    const fetcher = makeFetcher(shared, server.registrationOf)

    const received = (link: Link, envelope: Envelope.DataEnvelope) => {
      const taken = link.direction === "in" ? server.received(link, envelope) : fetcher.received(link, envelope)
      if (!taken) shared.violation(link, `${envelope._tag} sent the wrong way`)
    }

    const receivedChunk = (link: Link, chunk: Codec.ChunkPieces) => {
      if (!fetcher.receivedChunk(link, chunk)) shared.violation(link, "chunk sent the wrong way")
    }

    const closed = (link: Link, error: Errors.RpcError) => {
      fetcher.closed(link, error)
      server.closed(link)
    }

    const stop = Effect.sync(() => {
      fetcher.stop()
      server.stop()
    })

    const stats = Effect.sync((): Api.Stats => {
      const served = server.stats()
      const fetched = fetcher.stats()
      return {
        connections: fetched.connections + served.connections,
        serving: served.serving,
        buffered: served.buffered,
        peakBuffered: served.peakBuffered,
        peakBufferedPerConnection: served.peakBufferedPerConnection,
        fetching: fetched.fetching,
        inFlight: fetched.inFlight,
        peakInFlight: fetched.peakInFlight,
        peakInFlightPerConnection: fetched.peakInFlightPerConnection,
        bytesServed: served.bytesServed,
        bytesFetched: fetched.bytesFetched,
        retries: fetched.retries
      }
    })

    const api: Api.DataPlane = {
      serve: server.serve,
      fetch: fetcher.fetch,
      forget: fetcher.forget,
      fetchBytes: (from, blockId, fetchOptions) =>
        Effect.map(Stream.runCollect(fetcher.fetch(from, blockId, fetchOptions)), concat),
      stats
    }
    return { api, received, receivedChunk, closed, stop }
  })
