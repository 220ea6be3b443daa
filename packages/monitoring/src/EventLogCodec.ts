/**
 * An app's events in Spark's event-log format and back: `Encoder` turns the driver's `AppEvent`s into Spark's
 * listener events (keeping what Spark repeats in every event — a stage's info, a task's launch — from the events
 * that said it first), `Replay` turns a log's events back into `AppEvent`s and the app's description, for the
 * history server to fold into the same `AppStatus` the live UI shows.
 *
 * What Kindling's stream has and Spark's log has not is left out: executor heartbeats (Spark logs none either) and
 * executors whose launch failed.
 *
 * @since 0.1.0
 */
import type { AppEvent, DatasetInfo, StageInfo } from "./AppEvents.js"
import type * as MonitoringApi from "./MonitoringApi.js"
import type { SparkEvent, SparkEventOf } from "./SparkEvents.js"
import type * as SparkEvents from "./SparkEvents.js"

type SparkStorageLevel = typeof SparkEvents.StorageLevel.Type
type SparkStageInfo = typeof SparkEvents.StageInfo.Type
type SparkTaskInfo = typeof SparkEvents.TaskInfo.Type

const storageLevels: Record<string, SparkStorageLevel> = {
  MEMORY_ONLY: { "Use Disk": false, "Use Memory": true, "Use Off Heap": false, Deserialized: true, Replication: 1 },
  MEMORY_AND_DISK: { "Use Disk": true, "Use Memory": true, "Use Off Heap": false, Deserialized: true, Replication: 1 },
  DISK_ONLY: { "Use Disk": true, "Use Memory": false, "Use Off Heap": false, Deserialized: false, Replication: 1 }
}
const notStored: SparkStorageLevel = {
  "Use Disk": false,
  "Use Memory": false,
  "Use Off Heap": false,
  Deserialized: false,
  Replication: 1
}

const storageLevelName = (level: SparkStorageLevel): string | undefined =>
  level["Use Memory"]
    ? (level["Use Disk"] ? "MEMORY_AND_DISK" : "MEMORY_ONLY")
    : level["Use Disk"]
    ? "DISK_ONLY"
    : undefined

// The pool a job runs in, as Spark's job properties name it.
const poolProperty = "spark.scheduler.pool"

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

const killedPrefix = "TaskKilled ("

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

/**
 * What an encoder remembers: the stages jobs listed, the attempts submitted, the tasks running, where executors
 * are.
 *
 * @since 0.1.0
 * @category models
 */
export interface Encoder {
  readonly stages: Map<number, StageInfo>
  /** The stages that end a job: their tasks are Spark's `ResultTask`s. */
  readonly resultStages: Set<number>
  readonly submitted: Map<string, { readonly tasks: number; readonly time: number }>
  readonly tasks: Map<number, SparkTaskInfo>
  /** How many tasks each partition of a stage attempt has had: the next one's `Attempt`. */
  readonly launches: Map<string, number>
  /** Where each executor is, and the port it serves blocks on. */
  readonly hosts: Map<string, { readonly host: string; readonly port: number }>
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const makeEncoder = (): Encoder => ({
  stages: new Map(),
  resultStages: new Set(),
  submitted: new Map(),
  tasks: new Map(),
  launches: new Map(),
  hosts: new Map()
})

/**
 * The events that open a log: the format's version, the app's configuration and its start.
 *
 * @since 0.1.0
 */
export const header = (app: MonitoringApi.AppInfo): ReadonlyArray<SparkEvent> => [
  { Event: "SparkListenerLogStart", "Spark Version": app.version },
  // Spark's reader requires every section; the runtime's facts stand where Spark puts the JVM's.
  {
    Event: "SparkListenerEnvironmentUpdate",
    "JVM Information": { "Java Version": process.version, "Java Home": process.execPath, "Scala Version": "none" },
    "Spark Properties": Object.fromEntries(app.properties),
    "Hadoop Properties": {},
    "System Properties": {},
    "Metrics Properties": {},
    "Classpath Entries": {}
  },
  {
    Event: "SparkListenerApplicationStart",
    "App Name": app.name,
    "App ID": app.id,
    Timestamp: app.startTime,
    User: app.user
  }
]

/**
 * The event that closes the log of an app that ended.
 *
 * @since 0.1.0
 */
export const footer = (time: number, exitCode: number): SparkEvent => ({
  Event: "SparkListenerApplicationEnd",
  Timestamp: time,
  ExitCode: exitCode
})

const key = (stageId: number, attempt: number) => `${stageId}.${attempt}`

const stageOf = (encoder: Encoder, stageId: number, name = `stage ${stageId}`): StageInfo =>
  encoder.stages.get(stageId) ?? { stageId, name, numTasks: 0, parentIds: [], datasets: [] }

/**
 * One of the app's events as Spark's (none for what Spark does not log).
 *
 * @since 0.1.0
 */
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

// ---- replay -------------------------------------------------------------------------------------------------

/**
 * What a log said about its app, as it is read.
 *
 * @since 0.1.0
 * @category models
 */
export interface Replay {
  id: string | undefined
  name: string
  user: string
  startTime: number
  endTime: number | undefined
  exitCode: number | undefined
  version: string
  properties: ReadonlyArray<readonly [string, string]>
  /** The latest time an event carried: Spark's block events carry none and happen at it. */
  lastTime: number
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const makeReplay = (): Replay => ({
  id: undefined,
  name: "",
  user: "",
  startTime: 0,
  endTime: undefined,
  exitCode: undefined,
  version: "",
  properties: [],
  lastTime: 0
})

const localities = new Set(["PROCESS_LOCAL", "NODE_LOCAL", "ANY"])

const datasetInfo = (rdd: typeof SparkEvents.RddInfo.Type): DatasetInfo => {
  const level = storageLevelName(rdd["Storage Level"])
  return {
    id: rdd["RDD ID"],
    name: rdd.Name,
    operation: rdd.Callsite ?? "",
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
    spilledBytes: Math.max(m["Memory Bytes Spilled"], m["Disk Bytes Spilled"])
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

/**
 * One event of a log, folded into what is known of the app; answers the `AppEvent`s it stands for.
 *
 * @since 0.1.0
 */
export const replay = (state: Replay, event: SparkEvent): ReadonlyArray<AppEvent> => {
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
          numTasks: stage["Number of Tasks"],
          parentIds: stage["Parent IDs"],
          datasets: stage["RDD Info"].map(datasetInfo)
        })),
        pool: event.Properties?.[poolProperty] ?? "default",
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

/**
 * What the monitoring API says about a replayed app.
 *
 * @since 0.1.0
 */
export const appInfo = (state: Replay, fallbackId: string): MonitoringApi.AppInfo => ({
  id: state.id ?? fallbackId,
  name: state.name,
  user: state.user,
  startTime: state.startTime,
  ...(state.endTime === undefined ? {} : { endTime: state.endTime }),
  version: state.version,
  properties: state.properties
})
