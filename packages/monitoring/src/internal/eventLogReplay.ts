// A log's events back as the app's events, for the history server to fold into the same status the live UI
// shows; what the log says of the app itself is kept in the `Replay` state.
import type { AppEvents } from "@kindling/app"
import type { Replay } from "../EventLogCodec.js"
import type { SparkEvent, SparkEventOf } from "../SparkEvents.js"
import type * as SparkEvents from "../SparkEvents.js"
import { descriptionProperty, jobGroupProperty, killedPrefix, poolProperty, storageLevelName } from "./eventLogNames.js"

// A job property the log has, as a field of the job's start.
const propertyOf = <F extends string>(
  properties: Readonly<Record<string, string>> | undefined,
  name: string,
  field: F
): { readonly [K in F]?: string } => {
  const value = properties?.[name]
  return value === undefined ? {} : { [field]: value } as { readonly [K in F]?: string }
}

const localities = new Set(["PROCESS_LOCAL", "NODE_LOCAL", "ANY"])

const datasetInfo = (rdd: typeof SparkEvents.RddInfo.Type): AppEvents.DatasetInfo => {
  const level = storageLevelName(rdd["Storage Level"])
  // `map at logs.ts:40`, or an operation alone.
  const callSite = rdd.Callsite ?? ""
  const at = callSite.indexOf(" at ")
  return {
    id: rdd["RDD ID"],
    name: rdd.Name,
    operation: at === -1 ? callSite : callSite.slice(0, at),
    ...(at === -1 ? {} : { callSite }),
    parentIds: rdd["Parent IDs"],
    numPartitions: rdd["Number of Partitions"],
    ...(level === undefined ? {} : { storageLevel: level })
  }
}

const reasonText = (reason: typeof SparkEvents.TaskEndReason.Type): string | undefined => {
  if ("Description" in reason) return reason.Description
  if ("Kill Reason" in reason) return `${killedPrefix}${reason["Kill Reason"]})`
  if ("Executor ID" in reason) return reason["Loss Reason"] ?? `Executor ${reason["Executor ID"]} lost`
  return reason.Reason === "Success" ? undefined : reason.Reason
}

const metricsOf = (end: SparkEventOf<"SparkListenerTaskEnd">): Record<string, number> => {
  const info = end["Task Info"]
  const m = end["Task Metrics"]
  if (m === undefined) return { duration: info["Finish Time"] - info["Launch Time"] }
  const read = m["Shuffle Read Metrics"]
  const write = m["Shuffle Write Metrics"]
  const all: Record<string, number> = {
    shuffleBytesWritten: write["Shuffle Bytes Written"],
    shuffleRecordsWritten: write["Shuffle Records Written"],
    shuffleBytesRead: read["Remote Bytes Read"] + read["Local Bytes Read"],
    shuffleRemoteBytesRead: read["Remote Bytes Read"],
    shuffleRecordsRead: read["Total Records Read"],
    spilledBytes: Math.max(m["Memory Bytes Spilled"], m["Disk Bytes Spilled"]),
    cpuTime: m["Executor CPU Time"] ?? 0,
    inputBytes: m["Input Metrics"]?.["Bytes Read"] ?? 0,
    inputRecords: m["Input Metrics"]?.["Records Read"] ?? 0,
    outputBytes: m["Output Metrics"]?.["Bytes Written"] ?? 0,
    outputRecords: m["Output Metrics"]?.["Records Written"] ?? 0
  }
  // Only what the task did: a metric it never recorded is absent, as in the live stream.
  const metrics: Record<string, number> = { duration: m["Executor Run Time"] }
  for (const name in all) if (all[name] !== 0) metrics[name] = all[name]!
  return metrics
}

// The log's clock moves on to an event's time (events are written in order, so it only ever moves forward).
const advance = (state: Replay, time: number) => {
  state.lastTime = Math.max(state.lastTime, time)
}

export const replay = (state: Replay, event: SparkEvent): ReadonlyArray<AppEvents.AppEvent> => {
  switch (event.Event) {
    case "SparkListenerLogStart":
      state.version = event["Spark Version"]
      return []
    case "SparkListenerApplicationStart":
      state.id = event["App ID"]
      state.name = event["App Name"]
      state.user = event.User
      state.startTime = event.Timestamp
      advance(state, event.Timestamp)
      return []
    case "SparkListenerApplicationEnd":
      state.endTime = event.Timestamp
      state.exitCode = event.ExitCode
      advance(state, event.Timestamp)
      return []
    case "SparkListenerEnvironmentUpdate":
      state.properties = Object.entries(event["Spark Properties"]).sort(([a], [b]) => a.localeCompare(b))
      return []
    case "SparkListenerJobStart":
      advance(state, event["Submission Time"])
      return [{
        _tag: "JobStart",
        jobId: event["Job ID"],
        stageIds: event["Stage IDs"],
        stages: event["Stage Infos"].map((stage) => ({
          stageId: stage["Stage ID"],
          name: stage["Stage Name"],
          details: stage.Details,
          numTasks: stage["Number of Tasks"],
          parentIds: stage["Parent IDs"],
          datasets: stage["RDD Info"].map(datasetInfo)
        })),
        pool: event.Properties?.[poolProperty] ?? "default",
        ...propertyOf(event.Properties, descriptionProperty, "description"),
        ...propertyOf(event.Properties, jobGroupProperty, "jobGroup"),
        time: event["Submission Time"]
      }]
    case "SparkListenerJobEnd":
      advance(state, event["Completion Time"])
      return [{
        _tag: "JobEnd",
        jobId: event["Job ID"],
        succeeded: event["Job Result"].Result === "JobSucceeded",
        time: event["Completion Time"]
      }]
    case "SparkListenerStageSubmitted": {
      const info = event["Stage Info"]
      const time = info["Submission Time"] ?? state.lastTime
      advance(state, time)
      return [{
        _tag: "StageSubmitted",
        stageId: info["Stage ID"],
        stageAttempt: info["Stage Attempt ID"],
        name: info["Stage Name"],
        tasks: info["Number of Tasks"],
        parentIds: info["Parent IDs"],
        time
      }]
    }
    case "SparkListenerStageCompleted": {
      const info = event["Stage Info"]
      const time = info["Completion Time"] ?? state.lastTime
      advance(state, time)
      return [{
        _tag: "StageCompleted",
        stageId: info["Stage ID"],
        stageAttempt: info["Stage Attempt ID"],
        ...(info["Failure Reason"] === undefined ? {} : { failureReason: info["Failure Reason"] }),
        time
      }]
    }
    case "SparkListenerTaskStart": {
      const info = event["Task Info"]
      advance(state, info["Launch Time"])
      return [{
        _tag: "TaskStart",
        stageId: event["Stage ID"],
        stageAttempt: event["Stage Attempt ID"],
        taskId: info["Task ID"],
        index: info.Index,
        executorId: info["Executor ID"],
        locality: localities.has(info.Locality) ? info.Locality as "PROCESS_LOCAL" | "NODE_LOCAL" | "ANY" : "ANY",
        time: info["Launch Time"]
      }]
    }
    case "SparkListenerTaskEnd": {
      const info = event["Task Info"]
      const reason = reasonText(event["Task End Reason"])
      advance(state, info["Finish Time"])
      return [{
        _tag: "TaskEnd",
        stageId: event["Stage ID"],
        stageAttempt: event["Stage Attempt ID"],
        taskId: info["Task ID"],
        succeeded: event["Task End Reason"].Reason === "Success",
        ...(reason === undefined ? {} : { reason }),
        metrics: metricsOf(event),
        time: info["Finish Time"]
      }]
    }
    case "SparkListenerExecutorAdded": {
      const info = event["Executor Info"]
      advance(state, event.Timestamp)
      return [{
        _tag: "ExecutorAdded",
        executorId: event["Executor ID"],
        host: info.Host,
        cores: info["Total Cores"],
        logUrls: info["Log Urls"],
        time: event.Timestamp
      }]
    }
    case "SparkListenerExecutorRemoved":
      advance(state, event.Timestamp)
      return [{
        _tag: "ExecutorRemoved",
        executorId: event["Executor ID"],
        reason: event["Removed Reason"],
        time: event.Timestamp
      }]
    case "org.kindling.scheduler.ExecutorDecommissioned":
      advance(state, event.Timestamp)
      return [{
        _tag: "ExecutorDecommissioned",
        executorId: event["Executor ID"],
        reason: event.Reason,
        time: event.Timestamp
      }]
    case "SparkListenerBlockUpdated": {
      const info = event["Block Updated Info"]
      return [{
        _tag: "BlockUpdated",
        executorId: info["Block Manager ID"]["Executor ID"],
        blockId: info["Block ID"],
        storageLevel: storageLevelName(info["Storage Level"]) ?? "NONE",
        memSize: info["Memory Size"],
        diskSize: info["Disk Size"],
        time: state.lastTime
      }]
    }
    case "SparkListenerUnpersistRDD":
      return [{ _tag: "DatasetUnpersisted", datasetId: event["RDD ID"], time: state.lastTime }]
  }
}
