// The driver's events as Spark's listener events, for the log it writes: Spark repeats in every event what
// Kindling's stream says once (a stage's info, a task's launch), so the encoder keeps it from the events that said
// it first.
import type { AppEvent, DatasetInfo, StageInfo } from "../AppEvents.js"
import type { Encoder } from "../EventLogCodec.js"
import type { SparkEvent } from "../SparkEvents.js"
import type * as SparkEvents from "../SparkEvents.js"
import { killedPrefix, notStored, poolProperty, storageLevels } from "./eventLogNames.js"

type SparkStageInfo = typeof SparkEvents.StageInfo.Type
type SparkTaskInfo = typeof SparkEvents.TaskInfo.Type

const rddInfo = (dataset: DatasetInfo): typeof SparkEvents.RddInfo.Type => ({
  "RDD ID": dataset.id,
  Name: dataset.name,
  Callsite: dataset.operation,
  "Parent IDs": dataset.parentIds,
  "Storage Level": dataset.storageLevel === undefined ? notStored : storageLevels[dataset.storageLevel] ?? notStored,
  "Number of Partitions": dataset.numPartitions,
  "Number of Cached Partitions": 0,
  "Memory Size": 0,
  "Disk Size": 0
})

const stageInfo = (
  stage: StageInfo,
  attempt: number,
  tasks: number,
  times: Pick<SparkStageInfo, "Submission Time" | "Completion Time" | "Failure Reason"> = {}
): SparkStageInfo => ({
  "Stage ID": stage.stageId,
  "Stage Attempt ID": attempt,
  "Stage Name": stage.name,
  "Number of Tasks": tasks,
  "RDD Info": stage.datasets.map(rddInfo),
  "Parent IDs": stage.parentIds,
  Details: "",
  ...times,
  Accumulables: []
})

// Spark's reader requires these; the metrics it reads when present (CPU times, input and output, …) are left out,
// as Kindling does not measure them and they would only make every line longer.
const taskMetrics = (metrics: Readonly<Record<string, number>>): typeof SparkEvents.TaskMetrics.Type => {
  const read = metrics["shuffleBytesRead"] ?? 0
  const remote = metrics["shuffleRemoteBytesRead"] ?? 0
  return {
    "Executor Deserialize Time": 0,
    "Executor Run Time": metrics["duration"] ?? 0,
    "Result Size": 0,
    "JVM GC Time": 0,
    "Result Serialization Time": 0,
    "Memory Bytes Spilled": metrics["spilledBytes"] ?? 0,
    "Disk Bytes Spilled": metrics["spilledBytes"] ?? 0,
    "Shuffle Read Metrics": {
      "Remote Blocks Fetched": 0,
      "Local Blocks Fetched": 0,
      "Fetch Wait Time": 0,
      "Remote Bytes Read": remote,
      "Local Bytes Read": read - remote,
      "Total Records Read": metrics["shuffleRecordsRead"] ?? 0
    },
    "Shuffle Write Metrics": {
      "Shuffle Bytes Written": metrics["shuffleBytesWritten"] ?? 0,
      "Shuffle Write Time": 0,
      "Shuffle Records Written": metrics["shuffleRecordsWritten"] ?? 0
    }
  }
}

const taskEndReason = (succeeded: boolean, reason: string | undefined): typeof SparkEvents.TaskEndReason.Type => {
  if (succeeded) return { Reason: "Success" }
  const text = reason ?? ""
  if (text.startsWith(killedPrefix) && text.endsWith(")")) {
    return { Reason: "TaskKilled", "Kill Reason": text.slice(killedPrefix.length, -1) }
  }
  if (text === "KILLED") return { Reason: "TaskKilled", "Kill Reason": "" }
  // An executor's error reads `Name: message…`: its name is the class Spark's UI shows.
  const name = /^([A-Za-z_$][\w$]*):/.exec(text)?.[1] ?? "Error"
  return {
    Reason: "ExceptionFailure",
    "Class Name": name,
    Description: text,
    "Full Stack Trace": text,
    "Stack Trace": []
  }
}

const key = (stageId: number, attempt: number) => `${stageId}.${attempt}`

const stageOf = (encoder: Encoder, stageId: number, name = `stage ${stageId}`): StageInfo =>
  encoder.stages.get(stageId) ?? { stageId, name, numTasks: 0, parentIds: [], datasets: [] }

export const encode = (encoder: Encoder, event: AppEvent): ReadonlyArray<SparkEvent> => {
  switch (event._tag) {
    case "JobStart": {
      for (const stage of event.stages) encoder.stages.set(stage.stageId, stage)
      const last = event.stageIds.at(-1)
      if (last !== undefined) encoder.resultStages.add(last)
      return [{
        Event: "SparkListenerJobStart",
        "Job ID": event.jobId,
        "Submission Time": event.time,
        "Stage Infos": event.stages.map((stage) => stageInfo(stage, 0, stage.numTasks)),
        "Stage IDs": event.stageIds,
        Properties: { [poolProperty]: event.pool }
      }]
    }
    case "JobEnd":
      return [{
        Event: "SparkListenerJobEnd",
        "Job ID": event.jobId,
        "Completion Time": event.time,
        "Job Result": event.succeeded
          ? { Result: "JobSucceeded" }
          : { Result: "JobFailed", Exception: { Message: `Job ${event.jobId} failed`, "Stack Trace": [] } }
      }]
    case "StageSubmitted": {
      encoder.submitted.set(key(event.stageId, event.stageAttempt), { tasks: event.tasks, time: event.time })
      const stage = { ...stageOf(encoder, event.stageId, event.name), name: event.name, parentIds: event.parentIds }
      return [{
        Event: "SparkListenerStageSubmitted",
        "Stage Info": stageInfo(stage, event.stageAttempt, event.tasks, { "Submission Time": event.time })
      }]
    }
    case "StageCompleted": {
      const submitted = encoder.submitted.get(key(event.stageId, event.stageAttempt))
      encoder.submitted.delete(key(event.stageId, event.stageAttempt))
      const stage = stageOf(encoder, event.stageId)
      return [{
        Event: "SparkListenerStageCompleted",
        "Stage Info": stageInfo(stage, event.stageAttempt, submitted?.tasks ?? stage.numTasks, {
          ...(submitted === undefined ? {} : { "Submission Time": submitted.time }),
          "Completion Time": event.time,
          ...(event.failureReason === undefined ? {} : { "Failure Reason": event.failureReason })
        })
      }]
    }
    case "TaskStart": {
      const partition = `${key(event.stageId, event.stageAttempt)}.${event.index}`
      const attempt = encoder.launches.get(partition) ?? 0
      encoder.launches.set(partition, attempt + 1)
      const info: SparkTaskInfo = {
        "Task ID": event.taskId,
        Index: event.index,
        Attempt: attempt,
        "Partition ID": event.index,
        "Launch Time": event.time,
        "Executor ID": event.executorId,
        Host: encoder.hosts.get(event.executorId)?.host ?? "unknown",
        Locality: event.locality,
        Speculative: false,
        "Getting Result Time": 0,
        "Finish Time": 0,
        Failed: false,
        Killed: false,
        Accumulables: []
      }
      encoder.tasks.set(event.taskId, info)
      return [{
        Event: "SparkListenerTaskStart",
        "Stage ID": event.stageId,
        "Stage Attempt ID": event.stageAttempt,
        "Task Info": info
      }]
    }
    case "TaskEnd": {
      const started = encoder.tasks.get(event.taskId)
      encoder.tasks.delete(event.taskId)
      if (started === undefined) return []
      const reason = taskEndReason(event.succeeded, event.reason)
      return [{
        Event: "SparkListenerTaskEnd",
        "Stage ID": event.stageId,
        "Stage Attempt ID": event.stageAttempt,
        "Task Type": encoder.resultStages.has(event.stageId) ? "ResultTask" : "ShuffleMapTask",
        "Task End Reason": reason,
        "Task Info": {
          ...started,
          "Finish Time": event.time,
          Failed: reason.Reason !== "Success" && reason.Reason !== "TaskKilled",
          Killed: reason.Reason === "TaskKilled"
        },
        "Task Metrics": taskMetrics(event.metrics)
      }]
    }
    case "ExecutorAdded":
      // Spark's reader wants a real port for a block's place (its BlockManagerId).
      encoder.hosts.set(event.executorId, { host: event.host, port: event.port ?? 1 })
      return [{
        Event: "SparkListenerExecutorAdded",
        Timestamp: event.time,
        "Executor ID": event.executorId,
        "Executor Info": {
          Host: event.host,
          "Total Cores": event.cores,
          "Log Urls": event.logUrls ?? {},
          Attributes: {},
          Resources: {},
          "Resource Profile Id": 0
        }
      }]
    case "ExecutorRemoved":
      return [{
        Event: "SparkListenerExecutorRemoved",
        Timestamp: event.time,
        "Executor ID": event.executorId,
        "Removed Reason": event.reason
      }]
    case "BlockUpdated":
      return [{
        Event: "SparkListenerBlockUpdated",
        "Block Updated Info": {
          "Block Manager ID": {
            "Executor ID": event.executorId,
            Host: encoder.hosts.get(event.executorId)?.host ?? "unknown",
            Port: encoder.hosts.get(event.executorId)?.port ?? 1
          },
          "Block ID": event.blockId,
          "Storage Level": storageLevels[event.storageLevel] ?? notStored,
          "Memory Size": event.memSize,
          "Disk Size": event.diskSize
        }
      }]
    case "DatasetUnpersisted":
      return [{ Event: "SparkListenerUnpersistRDD", "RDD ID": event.datasetId }]
    case "ExecutorLaunchFailed":
    case "ExecutorMetricsUpdate":
      return []
  }
}
