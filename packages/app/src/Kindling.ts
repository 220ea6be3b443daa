/**
 * The app context (Spark's `SparkContext`): the service an app's main gets its datasets from. `yield* Kindling`
 * inside an app; its sources are `parallelize`, `range`, `textFile` and the file formats of `read`.
 *
 * @since 0.1.0
 */
import type { SharedVariables } from "@kindling/protocol"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type { OutputNotWritable } from "./AppErrors.js"
import type * as AppEvents from "./AppEvents.js"
import type { DataReader } from "./DataReader.js"
import type { Dataset } from "./Dataset.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface KindlingContext {
  readonly appName: string
  /** The master the app runs on: `local[2]`, `kindling://host:7077`, … */
  readonly master: string
  /**
   * How many partitions a source gets when none is asked for: `kindling.default.parallelism` when set, else the
   * threads of `local[N]`, or on a cluster the cores of the app's executors at the time, and at least 2, as Spark.
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
   * ranges of at least `minPartitions` partitions altogether, cut where lines start. `path` may list several
   * paths separated by commas, and glob patterns (`logs/part-*`, `{jan,feb}.log`, `day-[0-9].txt`); a gzip'd file
   * (`.gz`) is decompressed, in one partition, as Spark reads it.
   */
  readonly textFile: (path: string, minPartitions?: number) => Dataset<string>
  /**
   * Each file whole, as `[file:path, text]` (Spark's `wholeTextFiles`): the files `path` names as `textFile` finds
   * them, in at least `minPartitions` partitions as their sizes allow. gzip'd files (`.gz`) are decompressed.
   */
  readonly wholeTextFiles: (path: string, minPartitions?: number) => Dataset<[string, string]>
  /**
   * Datasets of records from CSV, JSON lines and Parquet files (Spark's `spark.read`); a dataset's `write` writes
   * them back.
   */
  readonly read: DataReader
  /** The partitions of all the datasets, one after the other (Spark's `SparkContext.union`). */
  readonly union: <A>(datasets: ReadonlyArray<Dataset<A>>) => Dataset<A>
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
  /**
   * The call sites of the actions made but never run (`saveAsTextFile at app.ts:12`), those where no action made
   * there has run: an action is an Effect, and does nothing until it is run — a forgotten `yield*`. The driver
   * warns of them when main ends.
   */
  readonly unrunActions: Effect.Effect<ReadonlyArray<string>>
  /**
   * Puts the jobs this fiber starts from now on (and those of the fibers it forks) in group `groupId`, described
   * by `description` (Spark's `setJobGroup`): `cancelJobGroup(groupId)` cancels those running.
   */
  readonly setJobGroup: (groupId: string, description?: string) => Effect.Effect<void>
  /** This fiber's jobs are in no group from now on (Spark's `clearJobGroup`). */
  readonly clearJobGroup: Effect.Effect<void>
  /**
   * Describes the jobs this fiber starts from now on (Spark's `setJobDescription`): the description names them
   * in the UI, the monitoring API and the event log. `undefined` takes it away.
   */
  readonly setJobDescription: (description: string | undefined) => Effect.Effect<void>
  /**
   * Cancels the running jobs of group `groupId` (Spark's `cancelJobGroup`): their tasks are killed, and their
   * actions fail with `JobFailed` (`Job 3 cancelled part of cancelled job group reports`).
   */
  readonly cancelJobGroup: (groupId: string) => Effect.Effect<void>
  /** Cancels every running job of the app (Spark's `cancelAllJobs`). */
  readonly cancelAllJobs: Effect.Effect<void>
  /**
   * Where `checkpoint()` saves datasets (Spark's `setCheckpointDir`): a folder of the app's own is made in `dir`.
   * On a cluster it must be one the driver and every executor share.
   */
  readonly setCheckpointDir: (dir: string) => Effect.Effect<void, OutputNotWritable>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class Kindling extends Context.Tag("@kindling/app/Kindling")<Kindling, KindlingContext>() {}
