/**
 * The executor's side of shuffles that is not a task's own work: it serves the map outputs written here to the
 * app's other executors on the data plane, and before a reduce task runs it gathers the blocks the task reads —
 * asking the driver where the map outputs are, reading its own from disk where they lie, fetching the others
 * (small ones into memory, large ones into a file of the local dir), a few at once, within the data plane's
 * bounds on bytes in flight. A block that cannot be had is the task's `FetchFailed`, which tells the driver to
 * run that map task again.
 *
 * @since 0.1.0
 */
import type { Disk } from "@kindling/data"
import { DiskOperations } from "@kindling/kernel"
import { ClusterMessages, Errors, type Ids, type RpcAddress, type TaskPlan } from "@kindling/protocol"
import { RpcEnv } from "@kindling/rpc"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Path from "node:path"
import * as TaskContext from "../tasks/TaskContext.js"
import type * as RecordFiles from "./RecordFiles.js"
import * as ShuffleBlocks from "./ShuffleBlocks.js"
import * as ShuffleFiles from "./ShuffleFiles.js"

// A shuffle block is frames that each carry the CRC-32 of their records, written by the map task and checked by
// the reduce task as it reads them (`RecordFiles.read`): a check from disk to disk, stronger than one per chunk on
// the wire, which would only repeat it at a third of the data plane's CPU. Bytes damaged in transit fail the task
// with `CorruptFrame`, and its next attempt fetches them again.
const endToEnd = { checksums: false } as const

/**
 * A map output a task needs cannot be had: the task's outcome is a `TaskPlan.FetchFailed` with these fields.
 *
 * @since 0.1.0
 * @category errors
 */
export class ShuffleFetchFailed extends Data.TaggedError("ShuffleFetchFailed")<{
  readonly shuffleId: number
  readonly mapIndex: number
  readonly reduceId: number
  readonly executorId: string | undefined
  readonly reason: string
}> {
  override get message() {
    return `Failed to fetch map output ${this.mapIndex} of shuffle ${this.shuffleId} for reduce partition ` +
      `${this.reduceId}${this.executorId === undefined ? "" : ` from executor ${this.executorId}`}: ${this.reason}`
  }

  /** The encoded outcome a task that met this reports. */
  get outcome(): typeof TaskPlan.FetchFailed.Encoded {
    return {
      _tag: "FetchFailed",
      shuffleId: this.shuffleId,
      mapIndex: this.mapIndex,
      reduceId: this.reduceId,
      ...(this.executorId === undefined ? {} : { executorId: this.executorId }),
      message: this.message
    }
  }
}

/**
 * The blocks a task reads, by shuffle, and what gathering them took.
 *
 * @since 0.1.0
 * @category models
 */
export interface Gathered {
  /** By `TaskContext.inputKey`. */
  readonly inputs: ReadonlyArray<readonly [string, ReadonlyArray<TaskContext.ShuffleBlock>]>
  readonly metrics: Readonly<Record<string, number>>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface ShuffleService {
  /**
   * The shuffle's blocks written here are served under its token from now on: a map task of it runs here, or its
   * outputs were migrated here.
   */
  readonly serve: (shuffle: { readonly shuffleId: number; readonly token: string }) => void
  /** The shuffles served here, with their tokens. */
  readonly served: () => ReadonlyArray<{ readonly shuffleId: number; readonly token: string }>
  /**
   * Gathers the blocks of the shuffles a task reads; files fetched for it are removed when the scope closes
   * (when the task has ended).
   */
  readonly gather: (
    taskId: number,
    reads: ReadonlyArray<{ readonly shuffleId: number; readonly token: string; readonly reduceId: number }>
  ) => Effect.Effect<Gathered, ShuffleFetchFailed | Errors.RpcError, Scope.Scope>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly executorId: Ids.ExecutorId
  readonly disk: Disk.Disk
  readonly localDir: string
  readonly driver: RpcAddress.Ref<ClusterMessages.ExecutorToDriver>
  readonly askTimeoutMillis: number
  /** A remote block up to this size is kept in memory; a larger one goes to a file (default 1 MiB). */
  readonly maxInMemoryBlock?: number
  /** How many blocks one task fetches at once. */
  readonly fetchConcurrency?: number
  /** The most bytes of blocks being fetched at once, over all tasks (default 48 MiB). */
  readonly maxBytesInFlight?: number
  /** The app's id, which names the blocks a worker's shuffle service serves (a cluster's executors have one). */
  readonly appId?: string
  /**
   * Its worker's shuffle service serves its map outputs too (`ExternalShuffleService`): each shuffle's token is
   * written beside them for the service to check fetches against.
   */
  readonly servedByWorker?: boolean
}

/**
 * Serves this executor's map outputs for the lifetime of the scope.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options): Effect.Effect<ShuffleService, never, RpcEnv.RpcEnv | Scope.Scope> =>
  Effect.gen(function*() {
    const rpc = yield* RpcEnv.RpcEnv
    const { disk } = options
    const readIndex = (shuffleId: number, mapIndex: number) =>
      disk.readFileAsync(ShuffleFiles.indexFile(options.localDir, shuffleId, mapIndex))
    const tokens = new Map<number, string>()
    const maxInMemory = options.maxInMemoryBlock ?? 1024 * 1024
    const maxInFlight = options.maxBytesInFlight ?? 48 * 1024 * 1024
    const inFlight = yield* Effect.makeSemaphore(maxInFlight)
    // A block larger than the bound takes all of it: it is fetched alone.
    const withinBound = (size: number) => inFlight.withPermits(Math.min(size, maxInFlight))
    let fetched = 0

    yield* rpc.data.serve(ShuffleFiles.blockPrefix, (blockId) =>
      Effect.gen(function*() {
        const name = ShuffleFiles.parseBlockId(blockId)
        // An unknown shuffle and a wrong token look alike: nothing tells a stranger which blocks exist.
        if (name === undefined || tokens.get(name.shuffleId) !== name.token) {
          return yield* new Errors.TransferRefused({ blockId, reason: "not a shuffle block of this app" })
        }
        return yield* ShuffleBlocks.source(disk, options.localDir, blockId, name)
      })).pipe(
        // Serving fails only when "shuffle/" is served already: a second shuffle service on one node, a defect.
        Effect.orDie
      )

    // Adds to a task's metric once what it measures succeeded.
    const counted =
      (metrics: Record<string, number>, key: string, size: number) => <A, E, R>(self: Effect.Effect<A, E, R>) =>
        Effect.tap(self, () => Effect.sync(() => void (metrics[key] = (metrics[key] ?? 0) + size)))

    const statusesOf = (shuffleId: number, reduceId: number) =>
      rpc.ask(
        options.driver,
        new ClusterMessages.GetMapOutputStatuses({ shuffleId, reduceId }),
        { timeout: options.askTimeoutMillis }
      ).pipe(
        Effect.catchTag("MapOutputMissing", (missing) =>
          new ShuffleFetchFailed({
            shuffleId,
            mapIndex: missing.mapIndex,
            reduceId,
            executorId: undefined,
            reason: missing.message
          }))
      )

    // One map output's block for the task, read here or fetched from where the location says.
    const blockAt = (
      taskId: number,
      read: { readonly shuffleId: number; readonly token: string; readonly reduceId: number },
      location: ClusterMessages.MapOutputLocation,
      metrics: Record<string, number>
    ): Effect.Effect<TaskContext.ShuffleBlock, ShuffleFetchFailed, Scope.Scope> => {
      const { reduceId, shuffleId } = read
      // The shuffle's token is what lets the app's executors name its blocks: it stays out of the reason,
      // which the app's log and UI show.
      const failed = (reason: string) =>
        new ShuffleFetchFailed({
          shuffleId,
          mapIndex: location.mapIndex,
          reduceId,
          executorId: location.executorId,
          reason: reason.replaceAll(read.token, "<token>")
        })
      const block = (segment: RecordFiles.Segment): TaskContext.ShuffleBlock => ({
        segment,
        mapIndex: location.mapIndex,
        executorId: location.executorId
      })
      if (location.executorId === options.executorId) {
        return readIndex(shuffleId, location.mapIndex).pipe(
          Effect.flatMap((index) => Effect.try(() => ShuffleFiles.rangeOf(index, reduceId))),
          Effect.map((range) =>
            block({
              _tag: "File",
              path: ShuffleFiles.dataFile(options.localDir, shuffleId, location.mapIndex),
              ...range
            })
          ),
          Effect.mapError((error) => failed(`its local output is unreadable: ${error.message}`))
        )
      }
      const remote = counted(metrics, "shuffleRemoteBytesRead", location.size)
      const name = { ...read, mapIndex: location.mapIndex }
      if (location.shuffleService === true && options.appId === undefined) {
        return Effect.fail(failed("it is served by a worker's shuffle service, and this executor has no app id"))
      }
      const blockId = location.shuffleService === true
        ? ShuffleFiles.serviceBlockId(options.appId!, location.executorId, name)
        : ShuffleFiles.blockId(name)
      if (location.size <= maxInMemory) {
        return rpc.data.fetchBytes(location.address, blockId, endToEnd).pipe(
          Effect.map((bytes) => block({ _tag: "Bytes", bytes })),
          Effect.mapError((error) => failed(error.message)),
          withinBound(location.size),
          remote
        )
      }
      return toFile(taskId, location.address, blockId, location.size).pipe(
        Effect.map(block),
        Effect.mapError((error) => failed(error.message)),
        withinBound(location.size),
        remote
      )
    }

    const gatherOne = (
      taskId: number,
      read: { readonly shuffleId: number; readonly token: string; readonly reduceId: number },
      metrics: Record<string, number>
    ) =>
      Effect.gen(function*() {
        const { reduceId, shuffleId } = read
        const statuses = yield* statusesOf(shuffleId, reduceId)
        // A block that cannot be had where it was may have moved since (its executor was decommissioned and its
        // outputs migrated): the locations are asked again, once for the task, and a moved block is fetched where
        // it is now. Only a block that has not moved fails the task.
        const latest = yield* Effect.cached(statusesOf(shuffleId, reduceId))
        const segments = yield* Effect.forEach(
          statuses.locations.filter((location) => location.size > 0),
          (location) =>
            blockAt(taskId, read, location, metrics).pipe(
              Effect.catchTag("ShuffleFetchFailed", (failure) =>
                Effect.flatMap(latest, (now) => {
                  const moved = now.locations[location.mapIndex]
                  return moved === undefined || moved.executorId === location.executorId
                    ? Effect.fail(failure)
                    : blockAt(taskId, read, moved, metrics)
                })),
              counted(metrics, "shuffleBytesRead", location.size)
            ),
          { concurrency: options.fetchConcurrency ?? 4 }
        )
        return [TaskContext.inputKey(shuffleId, reduceId), segments] as const
      })

    // A large block goes to a file of the local dir as it arrives, removed with the task's scope.
    const toFile = (taskId: number, from: RpcAddress.RpcAddress, blockId: string, size: number) =>
      Effect.gen(function*() {
        const path = Path.join(options.localDir, `fetched-${taskId}-${fetched++}`)
        yield* Effect.addFinalizer(() => DiskOperations.removing(path, () => disk.remove(path)))
        const file = yield* disk.appender(path)
        yield* rpc.data.fetch(from, blockId, endToEnd).pipe(Stream.runForEach(file.append))
        return { _tag: "File", path, offset: 0, length: size } as RecordFiles.Segment
      })

    return {
      serve: (shuffle) => {
        if (tokens.get(shuffle.shuffleId) === shuffle.token) return
        tokens.set(shuffle.shuffleId, shuffle.token)
        // Small and once per shuffle, before any of its outputs is written or copied here: written at once. One that
        // cannot be written (a full disk) is tried again by the shuffle's next task here; meanwhile the service
        // refuses these outputs, and their readers' fetch failures have them computed again.
        if (options.servedByWorker !== true) return
        try {
          disk.writeFile(
            ShuffleFiles.tokenFile(options.localDir, shuffle.shuffleId),
            new TextEncoder().encode(shuffle.token)
          )
        } catch {
          tokens.delete(shuffle.shuffleId)
        }
      },
      served: () => [...tokens].map(([shuffleId, token]) => ({ shuffleId, token })),
      gather: (taskId, reads) =>
        Effect.gen(function*() {
          const metrics: Record<string, number> = {}
          const inputs = yield* Effect.forEach(reads, (read) => gatherOne(taskId, read, metrics))
          return { inputs, metrics }
        })
    }
  })
