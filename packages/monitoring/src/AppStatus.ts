/**
 * What an app's UI shows, folded from its event stream (Spark's `AppStatusListener` and status store): jobs,
 * stage attempts with their tasks, executors, and the persisted datasets. It is the only state the UI and the
 * monitoring API read; the schedulers are never asked. Like Spark's it forgets: past
 * `kindling.ui.retainedJobs` / `retainedStages` finished jobs and stages, the oldest go, and a stage keeps at most
 * `retainedTasks` tasks (finished ones go first).
 *
 * @since 0.1.0
 */
import type { AppEvent, DatasetInfo, StageInfo } from "./AppEvents.js"

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
  readonly submissionTime: number
  completionTime: number | undefined
  status: JobStatus
  readonly stageIds: ReadonlyArray<number>
  /** The stages as the job listed them (attempt 0's size), for skipped ones and the DAG. */
  readonly stages: ReadonlyArray<StageInfo>
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
  activeTasks: number
  completedTasks: number
  failedTasks: number
  totalDuration: number
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
  readonly stageInfos: Map<number, StageInfo & { readonly jobIds: Array<number> }>
  readonly executors: Map<string, Executor>
  readonly storage: Map<number, Storage>
  /** Datasets seen in jobs, by id: the names the Storage tab shows. */
  readonly datasets: Map<number, DatasetInfo>
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
export const stageKey = (stageId: number, attemptId: number): string => `${stageId}.${attemptId}`

// `rdd_<id>_<partition>` → the dataset id.
const datasetOf = (blockId: string): number | undefined => {
  const match = /^rdd_(\d+)_\d+$/.exec(blockId)
  return match === null ? undefined : Number(match[1])
}

// The oldest finished entries go once there are more than `limit`.
const forget = <K, V>(
  entries: Map<K, V>,
  limit: number,
  finished: (value: V) => boolean,
  also?: (value: V) => void
) => {
  let excess = entries.size - limit
  if (excess <= 0) return
  for (const [key, value] of entries) {
    if (excess <= 0) break
    if (!finished(value)) continue
    entries.delete(key)
    also?.(value)
    excess--
  }
}

const addTo = (totals: Record<string, number>, metrics: Readonly<Record<string, number>>) => {
  for (const name in metrics) totals[name] = (totals[name] ?? 0) + metrics[name]!
}

/**
 * Folds one event in.
 *
 * @since 0.1.0
 */
export const apply = (status: AppStatus, event: AppEvent): void => {
  status.version++
  status.lastUpdated = event.time
  switch (event._tag) {
    case "JobStart": {
      for (const stage of event.stages) {
        const known = status.stageInfos.get(stage.stageId)
        if (known === undefined) status.stageInfos.set(stage.stageId, { ...stage, jobIds: [event.jobId] })
        else if (!known.jobIds.includes(event.jobId)) known.jobIds.push(event.jobId)
        for (const dataset of stage.datasets) status.datasets.set(dataset.id, dataset)
      }
      const last = event.stages.at(-1)
      status.jobs.set(event.jobId, {
        jobId: event.jobId,
        name: last?.name ?? `job ${event.jobId}`,
        pool: event.pool,
        submissionTime: event.time,
        completionTime: undefined,
        status: "RUNNING",
        stageIds: event.stageIds,
        stages: event.stages
      })
      forget(status.jobs, status.retention.jobs, (job) => job.status !== "RUNNING", (job) => forgetJob(status, job))
      break
    }
    case "JobEnd": {
      const job = status.jobs.get(event.jobId)
      if (job === undefined) break
      job.status = event.succeeded ? "SUCCEEDED" : "FAILED"
      job.completionTime = event.time
      break
    }
    case "StageSubmitted": {
      const info = status.stageInfos.get(event.stageId)
      const jobIds = info?.jobIds ?? []
      const attempt: StageAttempt = {
        stageId: event.stageId,
        attemptId: event.stageAttempt,
        name: event.name,
        numTasks: event.tasks,
        parentIds: event.parentIds,
        datasetIds: info?.datasets.map((dataset) => dataset.id) ?? [],
        jobIds: [...jobIds],
        pool: jobIds.length === 0 ? "default" : status.jobs.get(jobIds[0]!)?.pool ?? "default",
        status: "ACTIVE",
        submissionTime: event.time,
        firstTaskLaunchedTime: undefined,
        completionTime: undefined,
        failureReason: undefined,
        numActiveTasks: 0,
        numCompleteTasks: 0,
        numFailedTasks: 0,
        numKilledTasks: 0,
        completedIndices: new Set(),
        launches: new Map(),
        totals: {},
        tasks: []
      }
      status.stages.set(stageKey(event.stageId, event.stageAttempt), attempt)
      const attempts = status.attempts.get(event.stageId) ?? []
      attempts.push(attempt)
      status.attempts.set(event.stageId, attempts)
      forget(
        status.stages,
        status.retention.stages,
        (stage) => stage.status !== "ACTIVE",
        (stage) => {
          for (const task of stage.tasks) status.taskStages.delete(task.taskId)
          const left = (status.attempts.get(stage.stageId) ?? []).filter((other) => other !== stage)
          if (left.length === 0) status.attempts.delete(stage.stageId)
          else status.attempts.set(stage.stageId, left)
        }
      )
      break
    }
    case "StageCompleted": {
      const stage = status.stages.get(stageKey(event.stageId, event.stageAttempt))
      if (stage === undefined) break
      stage.status = event.failureReason === undefined ? "COMPLETE" : "FAILED"
      stage.failureReason = event.failureReason
      stage.completionTime = event.time
      break
    }
    case "TaskStart": {
      const key = stageKey(event.stageId, event.stageAttempt)
      const stage = status.stages.get(key)
      if (stage === undefined) break
      const executor = status.executors.get(event.executorId)
      stage.firstTaskLaunchedTime ??= event.time
      stage.numActiveTasks++
      if (executor !== undefined) executor.activeTasks++
      const attempt = stage.launches.get(event.index) ?? 0
      stage.launches.set(event.index, attempt + 1)
      stage.tasks.push({
        taskId: event.taskId,
        index: event.index,
        attempt,
        executorId: event.executorId,
        host: executor?.host ?? "",
        locality: event.locality,
        launchTime: event.time,
        status: "RUNNING",
        finishTime: undefined,
        errorMessage: undefined,
        metrics: {}
      })
      status.taskStages.set(event.taskId, key)
      // Past the limit (and a tenth, so that trimming is rare), the oldest finished tasks go; running ones stay.
      if (stage.tasks.length > status.retention.tasks * 1.1) {
        const cut = stage.tasks.length - status.retention.tasks
        stage.tasks = stage.tasks.filter((task, i) => i >= cut || task.status === "RUNNING")
      }
      break
    }
    case "TaskEnd": {
      const key = status.taskStages.get(event.taskId)
      const stage = key === undefined ? undefined : status.stages.get(key)
      if (stage === undefined) break
      status.taskStages.delete(event.taskId)
      const task = findTask(stage, event.taskId)
      const killed = event.reason?.startsWith("TaskKilled") === true || event.reason === "KILLED"
      stage.numActiveTasks--
      if (event.succeeded) {
        stage.numCompleteTasks++
        // Only finished tasks are forgotten, so a task that ends is still known.
        if (task !== undefined) stage.completedIndices.add(task.index)
      } else if (killed) stage.numKilledTasks++
      else stage.numFailedTasks++
      addTo(stage.totals, event.metrics)
      if (task !== undefined) {
        task.status = event.succeeded ? "SUCCESS" : killed ? "KILLED" : "FAILED"
        task.finishTime = event.time
        task.errorMessage = event.reason
        task.metrics = event.metrics
        const executor = status.executors.get(task.executorId)
        if (executor !== undefined) {
          executor.activeTasks--
          if (event.succeeded) executor.completedTasks++
          else executor.failedTasks++
          executor.totalDuration += event.metrics["duration"] ?? 0
          executor.shuffleRead += event.metrics["shuffleBytesRead"] ?? 0
          executor.shuffleWrite += event.metrics["shuffleBytesWritten"] ?? 0
        }
      }
      break
    }
    case "ExecutorAdded":
      status.executors.set(event.executorId, {
        executorId: event.executorId,
        host: event.host,
        totalCores: event.cores,
        logUrls: event.logUrls ?? {},
        addTime: event.time,
        removeTime: undefined,
        removeReason: undefined,
        activeTasks: 0,
        completedTasks: 0,
        failedTasks: 0,
        totalDuration: 0,
        shuffleRead: 0,
        shuffleWrite: 0,
        memory: {}
      })
      break
    case "ExecutorRemoved": {
      const executor = status.executors.get(event.executorId)
      if (executor !== undefined) {
        executor.removeTime = event.time
        executor.removeReason = event.reason
        executor.activeTasks = 0
      }
      // Its persisted partitions went with it.
      for (const storage of status.storage.values()) {
        for (const [blockId, holders] of storage.blocks) {
          if (holders.delete(event.executorId) && holders.size === 0) storage.blocks.delete(blockId)
        }
      }
      break
    }
    case "ExecutorLaunchFailed":
      break
    case "ExecutorMetricsUpdate": {
      const executor = status.executors.get(event.executorId)
      if (executor !== undefined) executor.memory = event.executorMetrics
      break
    }
    case "BlockUpdated": {
      const datasetId = datasetOf(event.blockId)
      if (datasetId === undefined) break
      const dataset = status.datasets.get(datasetId)
      let storage = status.storage.get(datasetId)
      if (storage === undefined) {
        storage = {
          datasetId,
          name: dataset === undefined ? `dataset ${datasetId}` : `${dataset.name} at ${dataset.operation}`,
          numPartitions: dataset?.numPartitions ?? 0,
          storageLevel: event.storageLevel,
          blocks: new Map()
        }
        status.storage.set(datasetId, storage)
      }
      const holders = storage.blocks.get(event.blockId) ?? new Map()
      holders.set(event.executorId, { memSize: event.memSize, diskSize: event.diskSize })
      storage.blocks.set(event.blockId, holders)
      break
    }
    case "DatasetUnpersisted":
      status.storage.delete(event.datasetId)
      break
  }
}

// A forgotten job's stages are forgotten with it unless another retained job lists them, and so are the datasets
// no retained stage computes and none persists: a long-running app's status stays within its limits.
const forgetJob = (status: AppStatus, job: Job) => {
  const dropped: Array<StageInfo> = []
  for (const stageId of job.stageIds) {
    const info = status.stageInfos.get(stageId)
    if (info === undefined) continue
    const left = info.jobIds.filter((jobId) => jobId !== job.jobId && status.jobs.has(jobId))
    if (left.length > 0) {
      info.jobIds.splice(0, info.jobIds.length, ...left)
      continue
    }
    status.stageInfos.delete(stageId)
    dropped.push(info)
  }
  if (dropped.length === 0) return
  const inUse = new Set<number>(status.storage.keys())
  for (const info of status.stageInfos.values()) for (const dataset of info.datasets) inUse.add(dataset.id)
  for (const info of dropped) {
    for (const dataset of info.datasets) if (!inUse.has(dataset.id)) status.datasets.delete(dataset.id)
  }
}

// Tasks are in launch order, and so in task id order: a binary search finds one.
const findTask = (stage: StageAttempt, taskId: number): Task | undefined => {
  let low = 0
  let high = stage.tasks.length - 1
  while (low <= high) {
    const middle = (low + high) >> 1
    const task = stage.tasks[middle]!
    if (task.taskId === taskId) return task
    if (task.taskId < taskId) low = middle + 1
    else high = middle - 1
  }
  return undefined
}

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
    numCompletedTasks += completedPartitions(status, info.stageId, info.numTasks)
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
const completedPartitions = (status: AppStatus, stageId: number, numPartitions: number): number =>
  Math.min(
    numPartitions,
    attemptsOf(status, stageId).reduce((sum, attempt) => sum + attempt.completedIndices.size, 0)
  )

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
