/**
 * What happens in an app, as its driver sees it (Spark's listener bus): jobs and their stages start and end,
 * tasks start and end, executors come and go and report how they and their tasks are doing, persisted
 * partitions are stored and dropped. The driver's schedulers say it; the app reads it too (`kc.events`). It is
 * named here, with the app and its contract with the driver (`JobGraph`), because that is where it is produced:
 * the datasets and stages it describes are the app's lineage, the rest the driver's. What watches an app — its
 * web UI, its metrics, its event log, the history server, the console progress bar (`@kindling/monitoring`) —
 * sits above the driver and follows this stream, never the schedulers' state.
 *
 * @since 0.1.0
 */

/**
 * A dataset as a stage computes it (Spark's `RDDInfo`): the operation that made it and the datasets it is made
 * from — in the same stage, or the shuffled one before a shuffle.
 *
 * @since 0.1.0
 * @category models
 */
export interface DatasetInfo {
  readonly id: number
  /** Its kind: `MapPartitionsDataset`, `ShuffledDataset`, … */
  readonly name: string
  readonly operation: string
  /** Where the app made it (`map at logs.ts:40`), when the app's own code did. */
  readonly callSite?: string
  /** The app's stack there (Spark's long call site). */
  readonly callSiteLong?: string
  readonly parentIds: ReadonlyArray<number>
  readonly numPartitions: number
  /** Its storage level, when persisted. */
  readonly storageLevel?: string
}

/**
 * A stage as a job lists it (Spark's `StageInfo`).
 *
 * @since 0.1.0
 * @category models
 */
export interface StageInfo {
  readonly stageId: number
  /** Its call site (`count at logs.ts:42`), or its operation when the app's code made none. */
  readonly name: string
  /** The app's stack at that call site (Spark's stage details). */
  readonly details?: string
  /** Its partitions: the tasks of an attempt that computes them all. */
  readonly numTasks: number
  readonly parentIds: ReadonlyArray<number>
  readonly datasets: ReadonlyArray<DatasetInfo>
}

/**
 * @since 0.1.0
 * @category models
 */
export type AppEvent =
  | {
    readonly _tag: "JobStart"
    readonly jobId: number
    /** Every stage the job needs, parents first; those never submitted for it were skipped (done before). */
    readonly stageIds: ReadonlyArray<number>
    /** The same stages, described. */
    readonly stages: ReadonlyArray<StageInfo>
    /** The scheduler pool it runs in (`SchedulerPool.within`). */
    readonly pool: string
    /** The job group of the fiber that started it (`kc.setJobGroup`), if any. */
    readonly jobGroup?: string
    /** Its description (`kc.setJobDescription`), if any. */
    readonly description?: string
    readonly time: number
  }
  | { readonly _tag: "JobEnd"; readonly jobId: number; readonly succeeded: boolean; readonly time: number }
  /** An attempt of a stage starts: `tasks` of its partitions are missing and run. */
  | {
    readonly _tag: "StageSubmitted"
    readonly stageId: number
    readonly stageAttempt: number
    readonly name: string
    readonly tasks: number
    readonly parentIds: ReadonlyArray<number>
    readonly time: number
  }
  /** An attempt of a stage ended: all its partitions done, or failed for `failureReason`. */
  | {
    readonly _tag: "StageCompleted"
    readonly stageId: number
    readonly stageAttempt: number
    readonly failureReason?: string
    readonly time: number
  }
  | {
    readonly _tag: "TaskStart"
    readonly stageId: number
    readonly stageAttempt: number
    readonly taskId: number
    readonly index: number
    readonly executorId: string
    /** How close to what it reads it runs: `PROCESS_LOCAL`, `NODE_LOCAL` or `ANY`. */
    readonly locality: "PROCESS_LOCAL" | "NODE_LOCAL" | "ANY"
    readonly time: number
  }
  | {
    readonly _tag: "TaskEnd"
    readonly stageId: number
    readonly stageAttempt: number
    readonly taskId: number
    readonly succeeded: boolean
    /** Why it did not succeed: the executor's error, `TaskKilled (…)`, or its executor's loss. */
    readonly reason?: string
    /**
     * What the task did, by metric: `duration` (ms from launch to end, as the driver saw it) and, for a task that
     * succeeded, those its executor reported (`shuffleBytesWritten`, `shuffleBytesRead`, `spilledBytes`, …).
     */
    readonly metrics: Readonly<Record<string, number>>
    readonly time: number
  }
  | {
    readonly _tag: "ExecutorAdded"
    readonly executorId: string
    readonly host: string
    /** The port it serves its blocks on (its RPC port: the data plane shares it). */
    readonly port?: number
    readonly cores: number
    /** Where its `stdout` and `stderr` can be read (its worker's log pages), when it said. */
    readonly logUrls?: Readonly<Record<string, string>>
    readonly time: number
  }
  | { readonly _tag: "ExecutorRemoved"; readonly executorId: string; readonly reason: string; readonly time: number }
  /**
   * Its worker is being decommissioned: it takes no new task, and once its tasks are over its map outputs and
   * cached blocks move to other executors before it stops.
   */
  | {
    readonly _tag: "ExecutorDecommissioned"
    readonly executorId: string
    readonly reason: string
    readonly time: number
  }
  /** The cluster granted an executor whose process never ran: the worker could not start it. */
  | {
    readonly _tag: "ExecutorLaunchFailed"
    readonly executorId: string
    readonly reason: string
    readonly time: number
  }
  /**
   * An executor's heartbeat (Spark's `SparkListenerExecutorMetricsUpdate`): its process's memory
   * (`processRss`, `heapUsed`, `heapTotal`, `external`, `arrayBuffers`, in bytes), its event loop's delay
   * (`eventLoopDelayP99`, ms, since the last heartbeat) and how far each of its running
   * tasks has got (`executorRunTime` in ms, `recordsRead`).
   */
  | {
    readonly _tag: "ExecutorMetricsUpdate"
    readonly executorId: string
    readonly executorMetrics: Readonly<Record<string, number>>
    readonly tasks: ReadonlyArray<{ readonly taskId: number; readonly metrics: Readonly<Record<string, number>> }>
    readonly time: number
  }
  /** An executor stored a partition of a persisted dataset (Spark's `SparkListenerBlockUpdated`). */
  | {
    readonly _tag: "BlockUpdated"
    readonly executorId: string
    /** `rdd_<datasetId>_<partition>`. */
    readonly blockId: string
    readonly storageLevel: string
    readonly memSize: number
    readonly diskSize: number
    readonly time: number
  }
  /** The app dropped a dataset's persisted partitions (Spark's `SparkListenerUnpersistRDD`). */
  | { readonly _tag: "DatasetUnpersisted"; readonly datasetId: number; readonly time: number }
