/**
 * Spark's monitoring REST API (`/api/v1`) over an app's status: the same paths and JSON field names as Spark's
 * `api.v1` classes (`ApplicationInfo`, `JobData`, `StageData`, `TaskData`, `ExecutorSummary`, `RDDStorageInfo`,
 * `ApplicationEnvironmentInfo`), so tools written for Spark's API read Kindling apps. Figures Kindling does not
 * measure (JVM GC time, CPU time, deserialization) are 0, as Spark reports a metric nothing recorded.
 *
 * @since 0.1.0
 */
import * as AppStatus from "./AppStatus.js"

/**
 * The version an app reports (`appSparkVersion`) and writes at the head of its event log.
 *
 * @since 0.1.0
 * @category constants
 */
export const version = "0.1.0"

/**
 * What the API says about the app itself.
 *
 * @since 0.1.0
 * @category models
 */
export interface AppInfo {
  readonly id: string
  readonly name: string
  readonly user: string
  readonly startTime: number
  /** When it ended, for an app that has. */
  readonly endTime?: number
  readonly version: string
  /** Its configuration, `[key, value]` in key order. */
  readonly properties: ReadonlyArray<readonly [string, string]>
}

/**
 * A moment as Spark's API writes it: `2026-12-04T08:20:17.123GMT`.
 *
 * @since 0.1.0
 * @category formatting
 */
export const date = (epochMillis: number): string => new Date(epochMillis).toISOString().replace("Z", "GMT")

/**
 * `GET /api/v1/applications` (and `/applications/{id}`): the app and its one attempt.
 *
 * @since 0.1.0
 */
export const application = (app: AppInfo, lastUpdated: number) => {
  const completed = app.endTime !== undefined
  return {
    id: app.id,
    name: app.name,
    attempts: [{
      startTime: date(app.startTime),
      endTime: date(app.endTime ?? -1),
      lastUpdated: date(Math.max(lastUpdated, app.startTime)),
      duration: completed ? app.endTime! - app.startTime : 0,
      sparkUser: app.user,
      completed,
      appSparkVersion: app.version,
      startTimeEpoch: app.startTime,
      endTimeEpoch: app.endTime ?? -1,
      lastUpdatedEpoch: Math.max(lastUpdated, app.startTime)
    }]
  }
}

/**
 * `…/jobs` and `…/jobs/{id}`.
 *
 * @since 0.1.0
 */
export const job = (status: AppStatus.AppStatus, job: AppStatus.Job) => {
  const progress = AppStatus.jobProgress(status, job)
  return {
    jobId: job.jobId,
    name: job.name,
    ...(job.description === undefined ? {} : { description: job.description }),
    submissionTime: date(job.submissionTime),
    ...(job.completionTime === undefined ? {} : { completionTime: date(job.completionTime) }),
    stageIds: [...job.stageIds],
    ...(job.jobGroup === undefined ? {} : { jobGroup: job.jobGroup }),
    jobTags: [],
    status: job.status,
    ...progress,
    numCompletedIndices: progress.numCompletedTasks,
    killedTasksSummary: {}
  }
}

const metric = (metrics: Readonly<Record<string, number>>, name: string) => metrics[name] ?? 0

const stageSums = (totals: Readonly<Record<string, number>>) => ({
  executorDeserializeTime: 0,
  executorDeserializeCpuTime: 0,
  executorRunTime: metric(totals, "duration"),
  executorCpuTime: metric(totals, "cpuTime"),
  resultSize: 0,
  jvmGcTime: 0,
  resultSerializationTime: 0,
  memoryBytesSpilled: metric(totals, "spilledBytes"),
  diskBytesSpilled: metric(totals, "spilledBytes"),
  peakExecutionMemory: 0,
  inputBytes: metric(totals, "inputBytes"),
  inputRecords: metric(totals, "inputRecords"),
  outputBytes: metric(totals, "outputBytes"),
  outputRecords: metric(totals, "outputRecords"),
  shuffleRemoteBlocksFetched: 0,
  shuffleLocalBlocksFetched: 0,
  shuffleFetchWaitTime: 0,
  shuffleRemoteBytesRead: metric(totals, "shuffleRemoteBytesRead"),
  shuffleRemoteBytesReadToDisk: 0,
  shuffleLocalBytesRead: metric(totals, "shuffleBytesRead") - metric(totals, "shuffleRemoteBytesRead"),
  shuffleReadBytes: metric(totals, "shuffleBytesRead"),
  shuffleReadRecords: metric(totals, "shuffleRecordsRead"),
  shuffleWriteBytes: metric(totals, "shuffleBytesWritten"),
  shuffleWriteTime: 0,
  shuffleWriteRecords: metric(totals, "shuffleRecordsWritten"),
  // Push-based shuffle (Spark 3.2+): Kindling has none.
  shuffleRemoteReqsDuration: 0,
  shuffleCorruptMergedBlockChunks: 0,
  shuffleMergedFetchFallbackCount: 0,
  shuffleMergedRemoteBlocksFetched: 0,
  shuffleMergedLocalBlocksFetched: 0,
  shuffleMergedRemoteChunksFetched: 0,
  shuffleMergedLocalChunksFetched: 0,
  shuffleMergedRemoteBytesRead: 0,
  shuffleMergedLocalBytesRead: 0,
  shuffleMergedRemoteReqsDuration: 0
})

/**
 * `…/stages`, `…/stages/{id}` and `…/stages/{id}/{attempt}` (without tasks unless `details`).
 *
 * @since 0.1.0
 */
export const stage = (stage: AppStatus.StageAttempt) => ({
  status: stage.status,
  stageId: stage.stageId,
  attemptId: stage.attemptId,
  numTasks: stage.numTasks,
  numActiveTasks: stage.numActiveTasks,
  numCompleteTasks: stage.numCompleteTasks,
  numFailedTasks: stage.numFailedTasks,
  numKilledTasks: stage.numKilledTasks,
  numCompletedIndices: stage.completedIndices.size,
  submissionTime: date(stage.submissionTime),
  ...(stage.firstTaskLaunchedTime === undefined ? {} : { firstTaskLaunchedTime: date(stage.firstTaskLaunchedTime) }),
  ...(stage.completionTime === undefined ? {} : { completionTime: date(stage.completionTime) }),
  ...(stage.failureReason === undefined ? {} : { failureReason: stage.failureReason }),
  ...stageSums(stage.totals),
  name: stage.name,
  details: stage.details,
  schedulingPool: stage.pool,
  rddIds: [...stage.datasetIds],
  accumulatorUpdates: [],
  killedTasksSummary: {},
  resourceProfileId: 0,
  isShufflePushEnabled: false,
  shuffleMergersCount: 0
})

/**
 * One task (`…/stages/{id}/{attempt}/taskList`), with Spark's nested metrics.
 *
 * @since 0.1.0
 */
export const task = (task: AppStatus.Task, now: number, executorLogs: Readonly<Record<string, string>> = {}) => {
  const m = task.metrics
  return {
    taskId: task.taskId,
    index: task.index,
    attempt: task.attempt,
    partitionId: task.index,
    launchTime: date(task.launchTime),
    duration: task.finishTime === undefined ? now - task.launchTime : metric(m, "duration"),
    executorId: task.executorId,
    host: task.host,
    status: task.status,
    taskLocality: task.locality,
    speculative: false,
    accumulatorUpdates: [],
    ...(task.errorMessage === undefined ? {} : { errorMessage: task.errorMessage }),
    taskMetrics: {
      executorDeserializeTime: 0,
      executorDeserializeCpuTime: 0,
      executorRunTime: metric(m, "duration"),
      executorCpuTime: metric(m, "cpuTime"),
      resultSize: 0,
      jvmGcTime: 0,
      resultSerializationTime: 0,
      memoryBytesSpilled: metric(m, "spilledBytes"),
      diskBytesSpilled: metric(m, "spilledBytes"),
      peakExecutionMemory: 0,
      inputMetrics: { bytesRead: metric(m, "inputBytes"), recordsRead: metric(m, "inputRecords") },
      outputMetrics: { bytesWritten: metric(m, "outputBytes"), recordsWritten: metric(m, "outputRecords") },
      shuffleReadMetrics: {
        remoteBlocksFetched: 0,
        localBlocksFetched: 0,
        fetchWaitTime: 0,
        remoteBytesRead: metric(m, "shuffleRemoteBytesRead"),
        remoteBytesReadToDisk: 0,
        localBytesRead: metric(m, "shuffleBytesRead") - metric(m, "shuffleRemoteBytesRead"),
        recordsRead: metric(m, "shuffleRecordsRead"),
        remoteReqsDuration: 0,
        shufflePushReadMetrics: {
          corruptMergedBlockChunks: 0,
          mergedFetchFallbackCount: 0,
          remoteMergedBlocksFetched: 0,
          localMergedBlocksFetched: 0,
          remoteMergedChunksFetched: 0,
          localMergedChunksFetched: 0,
          remoteMergedBytesRead: 0,
          localMergedBytesRead: 0,
          remoteMergedReqsDuration: 0
        }
      },
      shuffleWriteMetrics: {
        bytesWritten: metric(m, "shuffleBytesWritten"),
        writeTime: 0,
        recordsWritten: metric(m, "shuffleRecordsWritten")
      }
    },
    executorLogs: { ...executorLogs },
    schedulerDelay: 0,
    gettingResultTime: 0
  }
}

/**
 * `…/executors` (active ones) and `…/allexecutors`.
 *
 * @since 0.1.0
 */
export const executor = (status: AppStatus.AppStatus, executor: AppStatus.Executor) => {
  let rddBlocks = 0
  let memoryUsed = 0
  let diskUsed = 0
  for (const storage of status.storage.values()) {
    for (const holders of storage.blocks.values()) {
      const held = holders.get(executor.executorId)
      if (held === undefined) continue
      rddBlocks++
      memoryUsed += held.memSize
      diskUsed += held.diskSize
    }
  }
  return {
    id: executor.executorId,
    hostPort: executor.host,
    isActive: executor.removeTime === undefined,
    rddBlocks,
    memoryUsed,
    diskUsed,
    totalCores: executor.totalCores,
    maxTasks: executor.totalCores,
    activeTasks: executor.activeTasks,
    failedTasks: executor.failedTasks,
    completedTasks: executor.completedTasks,
    totalTasks: executor.activeTasks + executor.failedTasks + executor.completedTasks,
    totalDuration: executor.totalDuration,
    totalGCTime: 0,
    totalInputBytes: executor.inputBytes,
    totalShuffleRead: executor.shuffleRead,
    totalShuffleWrite: executor.shuffleWrite,
    isBlacklisted: false,
    maxMemory: executor.memory["heapTotal"] ?? 0,
    addTime: date(executor.addTime),
    ...(executor.removeTime === undefined ? {} : { removeTime: date(executor.removeTime) }),
    ...(executor.removeReason === undefined ? {} : { removeReason: executor.removeReason }),
    executorLogs: { ...executor.logUrls },
    memoryMetrics: {
      usedOnHeapStorageMemory: memoryUsed,
      usedOffHeapStorageMemory: 0,
      totalOnHeapStorageMemory: executor.memory["heapTotal"] ?? 0,
      totalOffHeapStorageMemory: 0
    },
    blacklistedInStages: [],
    attributes: {},
    resources: {},
    resourceProfileId: 0,
    isExcluded: false,
    excludedInStages: []
  }
}

/**
 * `…/storage/rdd/{id}`: a persisted dataset with where each of its partitions is (Spark's `dataDistribution` by
 * executor and `partitions` by block).
 *
 * @since 0.1.0
 */
export const storageDetails = (status: AppStatus.AppStatus, storage: AppStatus.Storage) => {
  const byExecutor = new Map<string, { memoryUsed: number; diskUsed: number }>()
  const partitions = [...storage.blocks].map(([blockName, holders]) => {
    let memoryUsed = 0
    let diskUsed = 0
    for (const [executorId, held] of holders) {
      memoryUsed += held.memSize
      diskUsed += held.diskSize
      const sum = byExecutor.get(executorId) ?? { memoryUsed: 0, diskUsed: 0 }
      sum.memoryUsed += held.memSize
      sum.diskUsed += held.diskSize
      byExecutor.set(executorId, sum)
    }
    return { blockName, storageLevel: storage.storageLevel, memoryUsed, diskUsed, executors: [...holders.keys()] }
  })
  return {
    ...summary(storage),
    dataDistribution: [...byExecutor].map(([executorId, sum]) => ({
      address: status.executors.get(executorId)?.host ?? executorId,
      memoryUsed: sum.memoryUsed,
      memoryRemaining: 0,
      diskUsed: sum.diskUsed
    })),
    partitions
  }
}

/**
 * `…/storage/rdd`: each persisted dataset and what of it is stored.
 *
 * @since 0.1.0
 */
export const storage = (storage: AppStatus.Storage) => summary(storage)

const summary = (storage: AppStatus.Storage) => {
  let memoryUsed = 0
  let diskUsed = 0
  for (const holders of storage.blocks.values()) {
    for (const held of holders.values()) {
      memoryUsed += held.memSize
      diskUsed += held.diskSize
    }
  }
  return {
    id: storage.datasetId,
    name: storage.name,
    numPartitions: storage.numPartitions,
    numCachedPartitions: storage.blocks.size,
    storageLevel: storage.storageLevel,
    memoryUsed,
    diskUsed
  }
}

/**
 * `…/environment`: the runtime (Node's, under Spark's keys) and the app's configuration.
 *
 * @since 0.1.0
 */
export const environment = (app: AppInfo) => ({
  runtime: { javaVersion: `Node.js ${process.version}`, javaHome: process.execPath, scalaVersion: "" },
  sparkProperties: app.properties.map(([key, value]) => [key, value]),
  hadoopProperties: [],
  systemProperties: [
    ["os.name", process.platform],
    ["os.arch", process.arch],
    ["user.dir", process.cwd()]
  ],
  metricsProperties: [],
  classpathEntries: [],
  resourceProfiles: []
})
