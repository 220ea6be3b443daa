/**
 * What an app's UI shows, folded from its event stream (Spark's `AppStatusListener` and status store): jobs,
 * stage attempts with their tasks, executors, and the persisted datasets. It is the only state the UI and the
 * monitoring API read; the schedulers are never asked. Like Spark's it forgets: past
 * `kindling.ui.retainedJobs` / `retainedStages` finished jobs and stages, the oldest go, and a stage keeps at most
 * `retainedTasks` tasks (finished ones go first). The records and what is read from them are here; how each event
 * changes them is `internal/appStatusFold.ts`.
 *
 * @since 0.1.0
 */
import type { AppEvents } from "@kindling/app"
import * as Fold from "./internal/appStatusFold.js"

/**
 * @since 0.1.0
 * @category models
 */
export type JobStatus = "RUNNING" | "SUCCEEDED" | "FAILED"

/**
 * @since 0.1.0
 * @category models
 */
export type StageStatus = "ACTIVE" | "COMPLETE" | "FAILED" | "PENDING" | "SKIPPED"

/**
 * @since 0.1.0
 * @category models
 */
export type TaskStatus = "RUNNING" | "SUCCESS" | "FAILED" | "KILLED"

/**
 * @since 0.1.0
 * @category models
 */
export interface Job {
  readonly jobId: number
  readonly name: string
  readonly pool: string
  /** `kc.setJobDescription`'s, if any: what the UI shows for the job, before its name. */
  readonly description: string | undefined
  readonly jobGroup: string | undefined
  readonly submissionTime: number
  completionTime: number | undefined
  status: JobStatus
  readonly stageIds: ReadonlyArray<number>
  /** The stages as the job listed them (attempt 0's size), for skipped ones and the DAG. */
  readonly stages: ReadonlyArray<AppEvents.StageInfo>
  /**
   * The partitions of each of its stages that a task completed while the job ran, over all the stage's attempts:
   * kept with the job, as Spark's status store keeps them, so its progress holds when the attempts' own records are
   * forgotten past the retention limits.
   */
  readonly completedPartitions: Map<number, Set<number>>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Task {
  readonly taskId: number
  readonly index: number
  /** Which attempt of its partition this is, within the stage attempt (0 first, more after failures). */
  readonly attempt: number
  readonly executorId: string
  readonly host: string
  readonly locality: string
  readonly launchTime: number
  status: TaskStatus
  finishTime: number | undefined
  errorMessage: string | undefined
  metrics: Readonly<Record<string, number>>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface StageAttempt {
  readonly stageId: number
  readonly attemptId: number
  readonly name: string
  /** The app's stack at the stage's call site. */
  readonly details: string
  readonly numTasks: number
  readonly parentIds: ReadonlyArray<number>
  /** The datasets its tasks compute. */
  readonly datasetIds: ReadonlyArray<number>
  readonly jobIds: ReadonlyArray<number>
  readonly pool: string
  status: StageStatus
  readonly submissionTime: number
  firstTaskLaunchedTime: number | undefined
  completionTime: number | undefined
  failureReason: string | undefined
  numActiveTasks: number
  numCompleteTasks: number
  numFailedTasks: number
  numKilledTasks: number
  /** Partitions that succeeded, once each (a partition may take several tasks). */
  readonly completedIndices: Set<number>
  /** How many tasks each partition has had launched: the next one's attempt number. */
  readonly launches: Map<number, number>
  /** Sums over its tasks' metrics. */
  readonly totals: Record<string, number>
  /** Its tasks in launch order (the oldest finished ones forgotten past `retainedTasks`). */
  tasks: Array<Task>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Executor {
  readonly executorId: string
  readonly host: string
  readonly totalCores: number
  /** Its log pages, by log type. */
  readonly logUrls: Readonly<Record<string, string>>
  readonly addTime: number
  removeTime: number | undefined
  removeReason: string | undefined
  /** When its decommissioning began, and why. */
  decommissioned: { readonly time: number; readonly reason: string } | undefined
  activeTasks: number
  completedTasks: number
  failedTasks: number
  totalDuration: number
  /** Bytes its tasks read from their input files. */
  inputBytes: number
  shuffleRead: number
  shuffleWrite: number
  /** The memory figures of its last heartbeat (`heapUsed`, `processRss`, …). */
  memory: Readonly<Record<string, number>>
}

/**
 * A persisted dataset and where its partitions are.
 *
 * @since 0.1.0
 * @category models
 */
export interface Storage {
  readonly datasetId: number
  name: string
  numPartitions: number
  storageLevel: string
  /** By block id: the executors holding it and its size there. */
  readonly blocks: Map<string, Map<string, { readonly memSize: number; readonly diskSize: number }>>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Retention {
  readonly jobs: number
  readonly stages: number
  readonly tasks: number
}

/**
 * @since 0.1.0
 * @category models
 */
export interface AppStatus {
  readonly retention: Retention
  readonly jobs: Map<number, Job>
  /** By `stageId.attempt`, in submission order. */
  readonly stages: Map<string, StageAttempt>
  /** The attempts of each stage, oldest first. */
  readonly attempts: Map<number, Array<StageAttempt>>
  /** Every stage a job listed (for skipped stages and the DAG), by id. */
  readonly stageInfos: Map<number, AppEvents.StageInfo & { readonly jobIds: Array<number> }>
  readonly executors: Map<string, Executor>
  readonly storage: Map<number, Storage>
  /** Datasets seen in jobs, by id: the names the Storage tab shows. */
  readonly datasets: Map<number, AppEvents.DatasetInfo>
  /** Where each running task is: by task id, its stage attempt key. */
  readonly taskStages: Map<number, string>
  /** Events folded so far: the UI's version, which its live updates follow. */
  version: number
  /** The last event's time. */
  lastUpdated: number
}

/**
 * Spark's defaults: 1000 jobs, 1000 stages, 100,000 tasks per stage.
 *
 * @since 0.1.0
 * @category constructors
 */
export const defaultRetention: Retention = { jobs: 1000, stages: 1000, tasks: 100_000 }

/**
 * @since 0.1.0
 * @category constructors
 */
export const make = (retention: Retention = defaultRetention): AppStatus => ({
  retention,
  jobs: new Map(),
  stages: new Map(),
  attempts: new Map(),
  stageInfos: new Map(),
  executors: new Map(),
  storage: new Map(),
  datasets: new Map(),
  taskStages: new Map(),
  version: 0,
  lastUpdated: 0
})

/**
 * The key of a stage attempt.
 *
 * @since 0.1.0
 */
export const stageKey: (stageId: number, attemptId: number) => string = Fold.stageKey

/**
 * Folds one event in.
 *
 * @since 0.1.0
 */
export const apply: (status: AppStatus, event: AppEvents.AppEvent) => void = Fold.apply

/**
 * A job's figures, over the latest attempt of each of its stages: the tasks of its stages, and how many stages are
 * active, complete, failed or skipped (listed but never run for it).
 *
 * @since 0.1.0
 */
export const jobProgress = (status: AppStatus, job: Job) => {
  let numTasks = 0
  let numActiveTasks = 0
  let numCompletedTasks = 0
  let numSkippedTasks = 0
  let numFailedTasks = 0
  let numKilledTasks = 0
  let numActiveStages = 0
  let numCompletedStages = 0
  let numSkippedStages = 0
  let numFailedStages = 0
  for (const info of job.stages) {
    const attempts = attemptsOf(status, info.stageId).filter((stage) => stage.submissionTime >= job.submissionTime)
    numTasks += info.numTasks
    if (attempts.length === 0) {
      if (job.status !== "RUNNING") {
        numSkippedStages++
        numSkippedTasks += info.numTasks
      }
      continue
    }
    const latest = attempts.at(-1)!
    for (const attempt of attempts) {
      numFailedTasks += attempt.numFailedTasks
      numKilledTasks += attempt.numKilledTasks
    }
    numActiveTasks += latest.numActiveTasks
    numCompletedTasks += Math.min(info.numTasks, job.completedPartitions.get(info.stageId)?.size ?? 0)
    if (latest.status === "ACTIVE") numActiveStages++
    else if (latest.status === "COMPLETE") numCompletedStages++
    else if (latest.status === "FAILED") numFailedStages++
  }
  return {
    numTasks,
    numActiveTasks,
    numCompletedTasks,
    numSkippedTasks,
    numFailedTasks,
    numKilledTasks,
    numActiveStages,
    numCompletedStages,
    numSkippedStages,
    numFailedStages
  }
}

/**
 * The attempts of a stage (those still retained), oldest first.
 *
 * @since 0.1.0
 */
export const attemptsOf = (status: AppStatus, stageId: number): ReadonlyArray<StageAttempt> =>
  status.attempts.get(stageId) ?? []

// Partitions done over every attempt of a stage: a later attempt runs only what was missing (or lost) when it
// started, so the sum is capped at the stage's partitions.
/**
 * The status of a stage as a job shows it: its latest attempt's, or SKIPPED when the job ended without running
 * it, or PENDING while it waits.
 *
 * @since 0.1.0
 */
export const stageStatusFor = (status: AppStatus, job: Job, stageId: number): StageStatus => {
  const latest = attemptsOf(status, stageId).filter((stage) => stage.submissionTime >= job.submissionTime).at(-1)
  if (latest !== undefined) return latest.status
  return job.status === "RUNNING" ? "PENDING" : "SKIPPED"
}

/**
 * The five quantiles Spark's stage page shows (min, 25th, median, 75th, max) of `values`, nearest-rank.
 *
 * @since 0.1.0
 */
export const quantiles = (
  values: ReadonlyArray<number>,
  at: ReadonlyArray<number> = [0, 0.25, 0.5, 0.75, 1]
): Array<number> => {
  if (values.length === 0) return at.map(() => 0)
  const sorted = Float64Array.from(values).sort()
  return at.map((q) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.round(q * (sorted.length - 1))))]!)
}
