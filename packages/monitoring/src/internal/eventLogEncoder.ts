// The driver's events as Spark's listener events, for the log it writes: Spark repeats in every event what
// Kindling's stream says once (a stage's info, a task's launch), so the encoder keeps it from the events that said
// it first.
import type { AppEvents } from "@kindling/app"
import type { Encoder } from "../EventLogCodec.js"
import type { SparkEvent } from "../SparkEvents.js"
import type * as SparkEvents from "../SparkEvents.js"
import {
  descriptionProperty,
  jobGroupProperty,
  killedPrefix,
  notStored,
  poolProperty,
  storageLevels
} from "./eventLogNames.js"

type SparkStageInfo = typeof SparkEvents.StageInfo.Type
type SparkTaskInfo = typeof SparkEvents.TaskInfo.Type

const rddInfo = (dataset: AppEvents.DatasetInfo): typeof SparkEvents.RddInfo.Type => ({
  "RDD ID": dataset.id,
  Name: dataset.name,
  Callsite: dataset.callSite ?? dataset.operation,
  "Parent IDs": dataset.parentIds,
  "Storage Level": dataset.storageLevel === undefined ? notStored : storageLevels[dataset.storageLevel] ?? notStored,
  "Number of Partitions": dataset.numPartitions,
  "Number of Cached Partitions": 0,
  "Memory Size": 0,
  "Disk Size": 0
})

const stageInfo = (
  stage: AppEvents.StageInfo,
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
  Details: stage.details ?? "",
  ...times,
  Accumulables: []
})

// Spark's reader requires these, and reads CPU time, input and output when present; the metrics Kindling does not
// measure (deserialization CPU time, peak execution memory, …) are left out, as they would only make every line
// longer.
const taskMetrics = (metrics: Readonly<Record<string, number>>): typeof SparkEvents.TaskMetrics.Type => {
  const read = metrics["shuffleBytesRead"] ?? 0
  const remote = metrics["shuffleRemoteBytesRead"] ?? 0
  return {
    "Executor Deserialize Time": 0,
    "Executor Run Time": metrics["duration"] ?? 0,
    "Executor CPU Time": metrics["cpuTime"] ?? 0,
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
    },
    "Input Metrics": { "Bytes Read": metrics["inputBytes"] ?? 0, "Records Read": metrics["inputRecords"] ?? 0 },
    "Output Metrics": {
      "Bytes Written": metrics["outputBytes"] ?? 0,
      "Records Written": metrics["outputRecords"] ?? 0
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

type TaskStart = Extract<AppEvents.AppEvent, { readonly _tag: "TaskStart" }>
type TaskEnd = Extract<AppEvents.AppEvent, { readonly _tag: "TaskEnd" }>
type TaskEndReason = typeof SparkEvents.TaskEndReason.Type

// A task's launch as Spark's TaskInfo, kept for its end; it counts as its partition's next attempt.
const taskStarted = (encoder: Encoder, event: TaskStart): SparkTaskInfo => {
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
  return info
}

// A task's end: the TaskInfo of its launch, forgotten now, and why it ended; nothing for a task never launched.
const taskEnded = (encoder: Encoder, event: TaskEnd) => {
  const started = encoder.tasks.get(event.taskId)
  encoder.tasks.delete(event.taskId)
  return started === undefined ? undefined : { started, reason: taskEndReason(event.succeeded, event.reason) }
}

const taskType = (encoder: Encoder, stageId: number) =>
  encoder.resultStages.has(stageId) ? "ResultTask" : "ShuffleMapTask"

const failed = (reason: TaskEndReason) => reason.Reason !== "Success" && reason.Reason !== "TaskKilled"

const stageOf = (encoder: Encoder, stageId: number, name = `stage ${stageId}`): AppEvents.StageInfo =>
  encoder.stages.get(stageId) ?? { stageId, name, numTasks: 0, parentIds: [], datasets: [] }

export const encode = (encoder: Encoder, event: AppEvents.AppEvent): ReadonlyArray<SparkEvent> => {
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
        Properties: {
          [poolProperty]: event.pool,
          ...(event.description === undefined ? {} : { [descriptionProperty]: event.description }),
          ...(event.jobGroup === undefined ? {} : { [jobGroupProperty]: event.jobGroup })
        }
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
    case "TaskStart":
      return [{
        Event: "SparkListenerTaskStart",
        "Stage ID": event.stageId,
        "Stage Attempt ID": event.stageAttempt,
        "Task Info": taskStarted(encoder, event)
      }]
    case "TaskEnd": {
      const ended = taskEnded(encoder, event)
      if (ended === undefined) return []
      const { reason, started } = ended
      return [{
        Event: "SparkListenerTaskEnd",
        "Stage ID": event.stageId,
        "Stage Attempt ID": event.stageAttempt,
        "Task Type": taskType(encoder, event.stageId),
        "Task End Reason": reason,
        "Task Info": {
          ...started,
          "Finish Time": event.time,
          Failed: failed(reason),
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
    case "ExecutorDecommissioned":
      return [{
        Event: "org.kindling.scheduler.ExecutorDecommissioned",
        Timestamp: event.time,
        "Executor ID": event.executorId,
        Reason: event.reason
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

// ---- lines --------------------------------------------------------------------------------------------------

// JSON.stringify's text for a number or a string, without its generic walk.
const number = (n: number) => (Number.isFinite(n) ? `${n}` : "null")
const string = JSON.stringify

// A task's partition is its index (`taskStarted`).
const taskInfoLine = (info: SparkTaskInfo, finishTime: number, failed: boolean, killed: boolean) =>
  `{"Task ID":${number(info["Task ID"])},"Index":${number(info.Index)},"Attempt":${number(info.Attempt)},` +
  `"Partition ID":${number(info.Index)},"Launch Time":${number(info["Launch Time"])},` +
  `"Executor ID":${string(info["Executor ID"])},"Host":${string(info.Host)},"Locality":${string(info.Locality)},` +
  `"Speculative":false,"Getting Result Time":0,"Finish Time":${number(finishTime)},"Failed":${failed},` +
  `"Killed":${killed},"Accumulables":[]}`

const taskMetricsLine = (metrics: Readonly<Record<string, number>>) => {
  const {
    "Input Metrics": input,
    "Output Metrics": output,
    "Shuffle Read Metrics": read,
    "Shuffle Write Metrics": write,
    ...times
  } = taskMetrics(metrics)
  return `{"Executor Deserialize Time":0,"Executor Run Time":${number(times["Executor Run Time"])},` +
    `"Executor CPU Time":${number(times["Executor CPU Time"]!)},` +
    `"Result Size":0,"JVM GC Time":0,"Result Serialization Time":0,` +
    `"Memory Bytes Spilled":${number(times["Memory Bytes Spilled"])},` +
    `"Disk Bytes Spilled":${number(times["Disk Bytes Spilled"])},` +
    `"Shuffle Read Metrics":{"Remote Blocks Fetched":0,"Local Blocks Fetched":0,"Fetch Wait Time":0,` +
    `"Remote Bytes Read":${number(read["Remote Bytes Read"])},"Local Bytes Read":${number(read["Local Bytes Read"])},` +
    `"Total Records Read":${number(read["Total Records Read"])}},` +
    `"Shuffle Write Metrics":{"Shuffle Bytes Written":${number(write["Shuffle Bytes Written"])},` +
    `"Shuffle Write Time":0,"Shuffle Records Written":${number(write["Shuffle Records Written"])}},` +
    `"Input Metrics":{"Bytes Read":${number(input!["Bytes Read"])},"Records Read":${number(input!["Records Read"])}},` +
    `"Output Metrics":{"Bytes Written":${number(output!["Bytes Written"])},` +
    `"Records Written":${number(output!["Records Written"])}}}`
}

/**
 * One of the app's events as the lines of Spark's log (JSON, without their newlines). A task's start and end, two
 * lines of every task and the bulk of a log, are written straight from the event, a sixth of the time
 * `JSON.stringify` takes over Spark's objects; the text is the same, key for key (a property test holds them
 * together).
 */
export const encodeLines = (encoder: Encoder, event: AppEvents.AppEvent): ReadonlyArray<string> => {
  switch (event._tag) {
    case "TaskStart":
      return [
        `{"Event":"SparkListenerTaskStart","Stage ID":${number(event.stageId)},` +
        `"Stage Attempt ID":${number(event.stageAttempt)},` +
        `"Task Info":${taskInfoLine(taskStarted(encoder, event), 0, false, false)}}`
      ]
    case "TaskEnd": {
      const ended = taskEnded(encoder, event)
      if (ended === undefined) return []
      const { reason, started } = ended
      return [
        `{"Event":"SparkListenerTaskEnd","Stage ID":${number(event.stageId)},` +
        `"Stage Attempt ID":${number(event.stageAttempt)},"Task Type":"${taskType(encoder, event.stageId)}",` +
        `"Task End Reason":${reason.Reason === "Success" ? `{"Reason":"Success"}` : JSON.stringify(reason)},` +
        `"Task Info":${taskInfoLine(started, event.time, failed(reason), reason.Reason === "TaskKilled")},` +
        `"Task Metrics":${taskMetricsLine(event.metrics)}}`
      ]
    }
    default:
      return encode(encoder, event).map((sparkEvent) => JSON.stringify(sparkEvent))
  }
}
