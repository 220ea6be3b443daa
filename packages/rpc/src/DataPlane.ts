/**
 * The data plane: streamed transfers of blocks (app artifacts, broadcast values, large task results, shuffle
 * blocks) between nodes, beside the message plane. A node serves blocks by id prefix; another fetches one as a
 * `Stream` of byte chunks. Bytes travel on data connections of their own, authenticated like control
 * connections, with credit-based flow control per stream, bounds on the bytes in flight per connection and per
 * node on both sides, a CRC-32 per chunk, and resumption from the last verified offset. Reach it as `rpc.data`.
 *
 * @since 0.1.0
 */
import type { Errors, RpcAddress } from "@kindling/protocol"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import * as crc from "./internal/crc32.js"
import * as internal from "./internal/dataPlane.js"

/**
 * A block's bytes as a server sees them: its size, and reads of byte ranges, which the data plane makes only as
 * the fetcher's credit allows. `read` must return exactly `length` bytes. They go to the socket as they are,
 * without a copy, so they must not change until sent: return fresh memory, or a view of memory that stays put.
 *
 * @since 0.1.0
 * @category models
 */
export interface BlockSource {
  readonly size: number
  readonly read: (offset: number, length: number) => Effect.Effect<Uint8Array, Errors.FetchFailure>
}

/**
 * Finds the source of a block for a requester, or refuses. It runs in a scope that closes when the stream ends,
 * however it ends, so a source may hold a resource (an open file) for as long as it is read.
 *
 * @since 0.1.0
 * @category models
 */
export type Resolver<R> = (
  blockId: string,
  requester: RpcAddress.RpcAddress
) => Effect.Effect<BlockSource, Errors.BlockNotFound | Errors.TransferRefused, R>

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The largest chunk a server sends (default 256 KiB). */
  readonly chunkSize?: number
  /** The credit a fetcher keeps granted to a stream: how far its server may run ahead of it (default 1 MiB). */
  readonly window?: number
  /**
   * Fetcher: the most bytes granted and not yet taken by consumers, over all streams (default 48 MiB, as Spark's
   * `spark.reducer.maxSizeInFlight`).
   */
  readonly maxInFlight?: number
  /** Fetcher: the same bound for the streams from one node, i.e. on one data connection (default 16 MiB). */
  readonly maxInFlightPerConnection?: number
  /** Server: the most bytes written to data connections and not yet sent, over all of them (default 16 MiB). */
  readonly maxBuffered?: number
  /** Server: the same bound for one data connection (default 512 KiB). */
  readonly maxBufferedPerConnection?: number
  /**
   * How many times in a row a fetch is retried without getting further (default 3, as Spark's
   * `spark.shuffle.io.maxRetries`).
   */
  readonly maxRetries?: number
  /** The wait before the first retry, doubled for each further one (default 1 s). */
  readonly retryWait?: Duration.DurationInput
  /**
   * A data connection on which nothing has moved for this long is closed (default 120 s, as Spark's
   * `spark.network.timeout`): when no stream uses it, and when its server owes bytes and has sent nothing since
   * it was asked for them, which means the server has stalled, so the fetches on it resume as after a lost
   * connection (fetches started meanwhile do not postpone that). Streams waiting only on their consumers keep it
   * open.
   */
  readonly idleTimeout?: Duration.DurationInput
}

/**
 * @since 0.1.0
 * @category models
 */
export interface FetchOptions {
  /** Where in the block to start (default 0). */
  readonly offset?: number
  /**
   * Whether the data plane checks each chunk against its CRC-32 (default true). False is for bytes the consumer
   * checks end to end itself, such as a shuffle block's checksummed frames: the chunks then come without a CRC,
   * sparing both sides a pass over every byte, and damaged bytes reach the consumer as they arrived (its check
   * finds them; the data plane does not refetch).
   */
  readonly checksums?: boolean
}

/**
 * What the data plane of a node is doing and the most it has held, to check the bounds.
 *
 * @since 0.1.0
 * @category models
 */
export interface Stats {
  /** Open data connections this node has dialled or served on. */
  readonly connections: number
  /** Streams this node is serving. */
  readonly serving: number
  /** Bytes written to data connections and not yet sent, over all of them. */
  readonly buffered: number
  /** The most `buffered` has been. */
  readonly peakBuffered: number
  /** The most one data connection has had buffered. */
  readonly peakBufferedPerConnection: number
  /** Streams this node is fetching. */
  readonly fetching: number
  /** Bytes granted as credit or received, and not yet taken by consumers, over all streams. */
  readonly inFlight: number
  /** The most `inFlight` has been. */
  readonly peakInFlight: number
  /** The most `inFlight` has been for the streams from one node. */
  readonly peakInFlightPerConnection: number
  /** Bytes sent in chunks. */
  readonly bytesServed: number
  /** Bytes received and verified. */
  readonly bytesFetched: number
  /** Fetch attempts started again after a lost connection or corrupted bytes. */
  readonly retries: number
}

/**
 * @since 0.1.0
 * @category models
 */
export interface DataPlane {
  /**
   * Serves the blocks whose ids start with `prefix` (the longest registered prefix wins) for the lifetime of the
   * scope. The resolver is asked for each fetch, resumed ones included, with the requester's address, so it can
   * decide who may have what. Fetches by other nodes still running when the scope closes fail with `BlockNotFound`.
   */
  readonly serve: <R>(
    prefix: string,
    resolve: Resolver<R>
  ) => Effect.Effect<void, PrefixAlreadyServed, Scope.Scope | Exclude<R, Scope.Scope>>
  /**
   * A block's bytes from `offset` on, as they are verified, in pieces of at most the chunk size (views of what
   * arrived, not copies). The server runs ahead of the consumer by at most the window. After a lost connection,
   * a stalled server or corrupted bytes the fetch resumes from the last verified offset, up to `maxRetries` times
   * in a row without progress, waiting `retryWait` (doubling) on the node's clock in between. A node's own blocks
   * are read from their source directly.
   */
  readonly fetch: (
    from: RpcAddress.RpcAddress,
    blockId: string,
    options?: FetchOptions
  ) => Stream.Stream<Uint8Array, Errors.TransferError>
  /** A whole (small) block in one array. */
  readonly fetchBytes: (
    from: RpcAddress.RpcAddress,
    blockId: string,
    options?: FetchOptions
  ) => Effect.Effect<Uint8Array, Errors.TransferError>
  /**
   * Takes `from` for lost (its process is gone or cut off, as the node's app was told): its fetches fail now, with
   * `TransferFailed` saying `reason`, and every later one at once, without the retries meant for blips.
   */
  readonly forget: (from: RpcAddress.RpcAddress, reason: string) => Effect.Effect<void>
  readonly stats: Effect.Effect<Stats>
}

/**
 * `serve` was given a prefix that is already served.
 *
 * @since 0.1.0
 * @category errors
 */
export const PrefixAlreadyServed: typeof internal.PrefixAlreadyServed = internal.PrefixAlreadyServed
/**
 * @since 0.1.0
 * @category errors
 */
export type PrefixAlreadyServed = internal.PrefixAlreadyServed

/**
 * The CRC-32 the data plane checks chunks with. The default is plain JS, so this entry runs anywhere;
 * `@kindling/protocol/node` supplies zlib's, several times faster (its TCP transport layer provides it).
 *
 * @since 0.1.0
 * @category tags
 */
export const Crc32: typeof internal.Crc32 = internal.Crc32
/**
 * @since 0.1.0
 * @category tags
 */
export type Crc32 = internal.Crc32

/**
 * CRC-32 (IEEE 802.3, as zlib's `crc32`) in plain JS. `value` is the CRC of the bytes before `data`, so that
 * `crc32(b, crc32(a))` is the CRC of `a` then `b`.
 *
 * @since 0.1.0
 * @category checksums
 */
export const crc32: (data: Uint8Array, value?: number) => number = crc.crc32

/**
 * A block held in memory; reads are views of it, never copies.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromBytes: (bytes: Uint8Array) => BlockSource = internal.fromBytes
