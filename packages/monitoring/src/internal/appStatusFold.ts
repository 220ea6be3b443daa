// How each of an app's events changes its status (Spark's AppStatusListener): the fold, and the forgetting of
// the oldest finished jobs, stages and tasks past the retention limits.
import type { AppEvents } from "@kindling/app"
import type { AppStatus, Job, StageAttempt, Task } from "../AppStatus.js"

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

export const apply = (status: AppStatus, event: AppEvents.AppEvent): void => {
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
        description: event.description,
        jobGroup: event.jobGroup,
        submissionTime: event.time,
        completionTime: undefined,
        status: "RUNNING",
        stageIds: event.stageIds,
        stages: event.stages,
        completedPartitions: new Map()
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
        details: info?.details ?? "",
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
        if (task !== undefined) {
          stage.completedIndices.add(task.index)
          for (const jobId of status.stageInfos.get(stage.stageId)?.jobIds ?? []) {
            const job = status.jobs.get(jobId)
            if (job?.status !== "RUNNING") continue
            const done = job.completedPartitions.get(stage.stageId) ?? new Set()
            job.completedPartitions.set(stage.stageId, done.add(task.index))
          }
        }
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
          executor.inputBytes += event.metrics["inputBytes"] ?? 0
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
        decommissioned: undefined,
        activeTasks: 0,
        completedTasks: 0,
        failedTasks: 0,
        totalDuration: 0,
        inputBytes: 0,
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
    case "ExecutorDecommissioned": {
      const executor = status.executors.get(event.executorId)
      if (executor !== undefined) executor.decommissioned = { time: event.time, reason: event.reason }
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
  const dropped: Array<AppEvents.StageInfo> = []
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
