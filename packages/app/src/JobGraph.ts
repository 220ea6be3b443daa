/**
 * What an action hands the driver to run: the graph of a job's tasks and the shuffles they read. It is the
 * contract between the app API, which builds it from a dataset's lineage, and the driver's runtime, which
 * schedules it.
 *
 * @since 0.1.0
 */
import type { TaskPlan } from "@kindling/protocol"
import type * as AppEvents from "./AppEvents.js"

/**
 * A job as datasets hand it to their driver: its result tasks (encoded `TaskPlan.Task`s with what each needs, one
 * per partition computed), the shuffles they read directly (`parents`), and every shuffle it depends on, at any depth. The app
 * API builds it (`Lineage`); the driver's runtime numbers it and runs it (`DagScheduler.JobSpec`).
 *
 * @since 0.1.0
 * @category models
 */
export interface JobGraph {
  readonly tasks: ReadonlyArray<TaskPlan.EncodedTask>
  /** The persisted partition each result task reads, if any. */
  readonly preferredBlocks: ReadonlyArray<string | undefined>
  readonly parents: ReadonlyArray<number>
  readonly shuffles: ReadonlyArray<ShuffleSpec>
  /** The result stage's name: the action's call site (`count at logs.ts:42`), or the action (`count`). */
  readonly name: string
  /** The app's stack where the action was called (Spark's long call site), for the stage's details. */
  readonly details?: string
  /** The datasets its result tasks compute, for the app's UI. */
  readonly datasets?: ReadonlyArray<AppEvents.DatasetInfo>
  /** The job group of the fiber that started it (`JobGroups`). */
  readonly group?: string | undefined
  /** Its description (`JobGroups`). */
  readonly description?: string | undefined
}

/**
 * A shuffle a job depends on: its map tasks (one per partition of the dataset shuffled) and the shuffles those
 * read.
 *
 * @since 0.1.0
 * @category models
 */
export interface ShuffleSpec {
  readonly shuffleId: number
  readonly numReduces: number
  readonly mapTasks: ReadonlyArray<TaskPlan.EncodedTask>
  /** The persisted partition each map task reads, if any (where it would rather run). */
  readonly preferredBlocks: ReadonlyArray<string | undefined>
  readonly parents: ReadonlyArray<number>
  /** The map stage's name: where the dataset shuffled was made (`map at logs.ts:40`), or the operation that
   * shuffles (`reduceByKey`). */
  readonly name: string
  /** The app's stack where that dataset was made, for the stage's details. */
  readonly details?: string
  /** The datasets its map tasks compute, for the app's UI. */
  readonly datasets?: ReadonlyArray<AppEvents.DatasetInfo>
}
