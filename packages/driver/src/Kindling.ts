/**
 * The app context (Spark's `SparkContext`): the service an app's main gets its datasets from. `yield* Kindling`
 * inside an app; its sources are `parallelize`, `range` and `textFile`.
 *
 * @since 0.1.0
 */
import { Disk } from "@kindling/executor"
import { DiskError } from "@kindling/kernel"
import { type AppEvents } from "@kindling/monitoring"
import { SharedVariables } from "@kindling/protocol"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import * as Path from "node:path"
import { InputNotReadable, InvalidArgument } from "./AppErrors.js"
import { Dataset, type Runtime } from "./Dataset.js"
import type { Driver } from "./Driver.js"
import * as Lineage from "./Lineage.js"
import * as UserFunctions from "./UserFunctions.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface KindlingContext {
  readonly appName: string
  /** The master the app runs on: `local[2]`, `kindling://host:7077`, … */
  readonly master: string
  /**
   * How many partitions a source gets when none is asked for: the threads of `local[N]`; on a cluster the cores
   * of the app's executors at the time, and at least 2, as Spark.
   */
  readonly defaultParallelism: number
  /** Where the app's web UI is (Spark's `uiWebUrl`), unless it is off (`kindling.ui.enabled=false`). */
  readonly uiWebUrl: string | undefined
  /** What happens in the app from the moment it is run: jobs, stages, tasks, executors (Spark's listener bus). */
  readonly events: Stream.Stream<AppEvents.AppEvent>
  /**
   * The same stream, subscribed to the moment this is run (and until the scope closes), for a listener that must
   * not miss what happens next — Spark's `addSparkListener` before a job.
   */
  readonly subscribe: Effect.Effect<Stream.Stream<AppEvents.AppEvent>, never, Scope.Scope>
  /** The items, cut into `numSlices` partitions of consecutive items. */
  readonly parallelize: <A>(items: Iterable<A>, numSlices?: number) => Dataset<A>
  /** `start`, `start + step`, … up to `end` (excluded), in `numSlices` partitions. */
  readonly range: (start: number, end: number, step?: number, numSlices?: number) => Dataset<number>
  /**
   * The lines of a text file, or of every file of a directory (in name order, hidden files skipped), in byte
   * ranges of at least `minPartitions` partitions altogether, cut where lines start.
   */
  readonly textFile: (path: string, minPartitions?: number) => Dataset<string>
  /**
   * `value`, sent to each executor once (when a task first reads it) and shared by its task threads: pass it in
   * a function's environment and read `.value` there. It is encoded now; later changes are not seen by tasks.
   */
  readonly broadcast: <T>(value: T) => SharedVariables.Broadcast<T>
  /**
   * A sum tasks `add` numbers to (passed in a function's environment); `.value` on the driver is the total of
   * the tasks that succeeded (each counted once), after the action that ran them.
   */
  readonly longAccumulator: (name?: string) => SharedVariables.LongAccumulator
  /** As `longAccumulator`, gathering the values added into an array (in no particular order). */
  readonly collectionAccumulator: <T>(name?: string) => SharedVariables.CollectionAccumulator<T>
  /**
   * The running task, as functions see it in their environment (Spark's `TaskContext.get()`): which stage,
   * partition and attempt it is — `ds.map((x, env) => env.task.attemptNumber, { task: kc.taskContext })`.
   */
  readonly taskContext: SharedVariables.TaskContext
  /**
   * The internal error that stopped the app's driver, if one did: every job since has failed with it (`JobFailed`
   * with `internal` set), and the app ends with a failure whatever its main does.
   */
  readonly fatalError: Effect.Effect<string | undefined>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class Kindling extends Context.Tag("@kindling/driver/Kindling")<Kindling, KindlingContext>() {}

const checkSlices = (numSlices: number, source: string) => {
  if (!Number.isInteger(numSlices) || numSlices < 1) {
    throw new InvalidArgument({
      reason: `${source}: the number of partitions must be a positive integer, got ${numSlices}`
    })
  }
}

// Partition i of n over `length` items: [⌊i·length/n⌋, ⌊(i+1)·length/n⌋), as Spark slices collections.
const bounds = (i: number, n: number, length: number) =>
  [Math.floor((i * length) / n), Math.floor(((i + 1) * length) / n)] as const

// Hadoop's local file system block size: a split is never larger.
const blockSize = 32 * 1024 * 1024
// A file's last split may be up to 10% larger than the rest rather than leave a sliver.
const splitSlop = 1.1

const inputFiles = (
  files: Disk.Files,
  path: string
): Effect.Effect<Array<{ path: string; size: number }>, InputNotReadable> =>
  Effect.try({
    try: () => {
      const absolute = Path.resolve(path)
      const stat = files.stat(absolute)
      if (stat === undefined) {
        throw new DiskError.DiskError({
          operation: "stat",
          path: absolute,
          code: "ENOENT",
          reason: "no such file or directory"
        })
      }
      if (stat.kind === "file") return [{ path: absolute, size: stat.size }]
      const names = files.list(absolute).filter((name) => !name.startsWith(".") && !name.startsWith("_"))
      return [...names].sort().flatMap((name) => {
        const file = Path.join(absolute, name)
        const info = files.stat(file)
        return info?.kind === "file" ? [{ path: file, size: info.size }] : []
      })
    },
    catch: (error) => new InputNotReadable({ path, reason: error instanceof Error ? error.message : String(error) })
  })

/**
 * Builds the context's sources over the app's driver; functions of `appExports` (the app module's exports)
 * travel by name.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: {
  readonly appName: string
  readonly master: string
  readonly defaultParallelism: () => number
  readonly driver: Driver
  readonly appExports?: Record<string, unknown> | undefined
  readonly uiWebUrl?: string | undefined
  /** The files datasets read and write (the local file system unless given). */
  readonly files?: Disk.Files | undefined
}): KindlingContext => {
  const { driver } = options
  const exports = options.appExports ?? {}
  const files = options.files ?? Disk.nodeFiles
  let datasets = 0
  let shuffles = 0
  const runtime: Runtime = {
    runJob: driver.runJob,
    reference: (fn, env, transformation) => UserFunctions.reference(fn, env, transformation, exports),
    newDatasetId: () => datasets++,
    newShuffleId: () => shuffles++,
    unpersist: driver.unpersist,
    files
  }
  return {
    appName: options.appName,
    master: options.master,
    uiWebUrl: options.uiWebUrl,
    events: driver.events,
    subscribe: driver.subscribe,
    get defaultParallelism() {
      return options.defaultParallelism()
    },
    broadcast: driver.broadcast,
    taskContext: SharedVariables.taskContext,
    fatalError: driver.fatalError,
    longAccumulator: (name = "") => driver.accumulator<number, number>("long", name),
    collectionAccumulator: <T>(name = "") => driver.accumulator<T, Array<T>>("collection", name),
    parallelize: <A>(items: Iterable<A>, numSlices = options.defaultParallelism()) => {
      checkSlices(numSlices, "parallelize")
      const all = Array.from(items)
      const plans = Array.from({ length: numSlices }, (_, i) => {
        const [from, to] = bounds(i, numSlices, all.length)
        return { _tag: "Slice" as const, items: all.slice(from, to) }
      })
      return Dataset.of<A>(runtime, Effect.succeed(plans), "ParallelCollectionDataset", "parallelize")
    },
    range: (start, end, step = 1, numSlices = options.defaultParallelism()) => {
      checkSlices(numSlices, "range")
      if (!Number.isSafeInteger(step) || step === 0) {
        throw new InvalidArgument({ reason: `range: the step must be a non-zero integer, got ${step}` })
      }
      const length = Math.max(0, Math.ceil((end - start) / step))
      const plans = Array.from({ length: numSlices }, (_, i) => {
        const [from, to] = bounds(i, numSlices, length)
        return { _tag: "Range" as const, start: start + from * step, end: start + to * step, step }
      })
      return Dataset.of<number>(runtime, Effect.succeed(plans), "RangeDataset", "range")
    },
    textFile: (path, minPartitions = Math.min(options.defaultParallelism(), 2)) => {
      checkSlices(minPartitions, "textFile")
      const plans = Effect.map(inputFiles(files, path), (files) => {
        const total = files.reduce((sum, file) => sum + file.size, 0)
        const goal = Math.floor(total / minPartitions)
        const splitSize = Math.max(1, Math.min(goal, blockSize))
        return files.flatMap((file) => {
          const splits: Array<{ _tag: "TextSplit"; path: string; start: number; length: number }> = []
          let left = file.size
          while (left / splitSize > splitSlop) {
            splits.push({ _tag: "TextSplit", path: file.path, start: file.size - left, length: splitSize })
            left -= splitSize
          }
          if (left > 0 || file.size === 0) {
            splits.push({ _tag: "TextSplit", path: file.path, start: file.size - left, length: left })
          }
          return splits
        })
      })
      return Dataset.of<string>(runtime, Lineage.once(plans), "TextFileDataset", "textFile")
    }
  }
}
