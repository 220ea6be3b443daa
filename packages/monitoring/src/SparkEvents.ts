/**
 * Spark's event-log format (`JsonProtocol`): one JSON object per line, its kind in `Event`, with Spark's own field
 * names ("Stage ID", "Task Info", …). Kindling writes its apps' logs in it, so that a Kindling log reads like a
 * Spark log and Spark's History Server can list one; the history server reads them back with these schemas.
 *
 * Only the events and fields Kindling writes or reads are described; everything else a Spark log holds (other
 * events, SQL metrics, accumulables) is let through unread, as Spark's own reader skips what it does not know.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

const Int = Schema.Number.pipe(Schema.int())
const StringMap = Schema.Record({ key: Schema.String, value: Schema.String })

/**
 * @since 0.1.0
 * @category schemas
 */
export const StorageLevel = Schema.Struct({
  "Use Disk": Schema.Boolean,
  "Use Memory": Schema.Boolean,
  "Use Off Heap": Schema.optional(Schema.Boolean),
  Deserialized: Schema.Boolean,
  Replication: Int
})

/**
 * A dataset as a stage computes it (Spark's `RDDInfo`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const RddInfo = Schema.Struct({
  "RDD ID": Int,
  Name: Schema.String,
  Callsite: Schema.optional(Schema.String),
  "Parent IDs": Schema.Array(Int),
  "Storage Level": StorageLevel,
  "Number of Partitions": Int,
  "Number of Cached Partitions": Int,
  "Memory Size": Schema.Number,
  "Disk Size": Schema.Number
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const StageInfo = Schema.Struct({
  "Stage ID": Int,
  "Stage Attempt ID": Int,
  "Stage Name": Schema.String,
  "Number of Tasks": Int,
  "RDD Info": Schema.Array(RddInfo),
  "Parent IDs": Schema.Array(Int),
  Details: Schema.String,
  "Submission Time": Schema.optional(Schema.Number),
  "Completion Time": Schema.optional(Schema.Number),
  "Failure Reason": Schema.optional(Schema.String),
  Accumulables: Schema.Array(Schema.Unknown)
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const TaskInfo = Schema.Struct({
  "Task ID": Int,
  Index: Int,
  Attempt: Int,
  "Partition ID": Schema.optional(Int),
  "Launch Time": Schema.Number,
  "Executor ID": Schema.String,
  Host: Schema.String,
  Locality: Schema.String,
  Speculative: Schema.Boolean,
  "Getting Result Time": Schema.Number,
  "Finish Time": Schema.Number,
  Failed: Schema.Boolean,
  Killed: Schema.Boolean,
  Accumulables: Schema.Array(Schema.Unknown)
})

/**
 * Why a task ended. Kindling writes the first four; Spark's others (`FetchFailed`, `TaskResultLost`, …) are read
 * by their name.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TaskEndReason = Schema.Union(
  Schema.Struct({ Reason: Schema.Literal("Success") }),
  Schema.Struct({
    Reason: Schema.Literal("ExceptionFailure"),
    "Class Name": Schema.String,
    Description: Schema.String,
    "Full Stack Trace": Schema.optional(Schema.String),
    "Stack Trace": Schema.Array(Schema.Unknown)
  }),
  Schema.Struct({ Reason: Schema.Literal("TaskKilled"), "Kill Reason": Schema.String }),
  Schema.Struct({
    Reason: Schema.Literal("ExecutorLostFailure"),
    "Executor ID": Schema.String,
    "Exit Caused By App": Schema.Boolean,
    "Loss Reason": Schema.optional(Schema.String)
  }),
  Schema.Struct({ Reason: Schema.String })
)

/**
 * A task's metrics in Spark's nesting: the fields Spark's reader requires, and those Kindling measures (the rest
 * are 0, as Spark writes a metric nothing recorded).
 *
 * @since 0.1.0
 * @category schemas
 */
export const TaskMetrics = Schema.Struct({
  "Executor Deserialize Time": Schema.Number,
  "Executor Deserialize CPU Time": Schema.optional(Schema.Number),
  "Executor Run Time": Schema.Number,
  "Executor CPU Time": Schema.optional(Schema.Number),
  "Peak Execution Memory": Schema.optional(Schema.Number),
  "Result Size": Schema.Number,
  "JVM GC Time": Schema.Number,
  "Result Serialization Time": Schema.Number,
  "Memory Bytes Spilled": Schema.Number,
  "Disk Bytes Spilled": Schema.Number,
  "Shuffle Read Metrics": Schema.Struct({
    "Remote Blocks Fetched": Int,
    "Local Blocks Fetched": Int,
    "Fetch Wait Time": Schema.Number,
    "Remote Bytes Read": Schema.Number,
    "Remote Bytes Read To Disk": Schema.optional(Schema.Number),
    "Local Bytes Read": Schema.Number,
    "Total Records Read": Schema.Number
  }),
  "Shuffle Write Metrics": Schema.Struct({
    "Shuffle Bytes Written": Schema.Number,
    "Shuffle Write Time": Schema.Number,
    "Shuffle Records Written": Schema.Number
  }),
  "Input Metrics": Schema.optional(Schema.Struct({ "Bytes Read": Schema.Number, "Records Read": Schema.Number })),
  "Output Metrics": Schema.optional(
    Schema.Struct({ "Bytes Written": Schema.Number, "Records Written": Schema.Number })
  ),
  "Updated Blocks": Schema.optional(Schema.Array(Schema.Unknown))
})

const event = <Tag extends string, Fields extends Schema.Struct.Fields>(tag: Tag, fields: Fields) =>
  Schema.Struct({ Event: Schema.Literal(tag), ...fields })

/**
 * Every event Kindling writes, by Spark's name.
 *
 * @since 0.1.0
 * @category schemas
 */
export const events = {
  LogStart: event("SparkListenerLogStart", { "Spark Version": Schema.String }),
  ApplicationStart: event("SparkListenerApplicationStart", {
    "App Name": Schema.String,
    "App ID": Schema.optional(Schema.String),
    Timestamp: Schema.Number,
    User: Schema.String,
    "App Attempt ID": Schema.optional(Schema.String)
  }),
  ApplicationEnd: event("SparkListenerApplicationEnd", {
    Timestamp: Schema.Number,
    ExitCode: Schema.optional(Int)
  }),
  EnvironmentUpdate: event("SparkListenerEnvironmentUpdate", {
    "JVM Information": StringMap,
    "Spark Properties": StringMap,
    "Hadoop Properties": Schema.optional(StringMap),
    "System Properties": StringMap,
    "Metrics Properties": Schema.optional(StringMap),
    "Classpath Entries": StringMap
  }),
  JobStart: event("SparkListenerJobStart", {
    "Job ID": Int,
    "Submission Time": Schema.Number,
    "Stage Infos": Schema.Array(StageInfo),
    "Stage IDs": Schema.Array(Int),
    Properties: Schema.optional(StringMap)
  }),
  JobEnd: event("SparkListenerJobEnd", {
    "Job ID": Int,
    "Completion Time": Schema.Number,
    "Job Result": Schema.Union(
      Schema.Struct({ Result: Schema.Literal("JobSucceeded") }),
      Schema.Struct({
        Result: Schema.Literal("JobFailed"),
        Exception: Schema.Struct({ Message: Schema.String, "Stack Trace": Schema.Array(Schema.Unknown) })
      })
    )
  }),
  StageSubmitted: event("SparkListenerStageSubmitted", {
    "Stage Info": StageInfo,
    Properties: Schema.optional(StringMap)
  }),
  StageCompleted: event("SparkListenerStageCompleted", { "Stage Info": StageInfo }),
  TaskStart: event("SparkListenerTaskStart", {
    "Stage ID": Int,
    "Stage Attempt ID": Int,
    "Task Info": TaskInfo
  }),
  TaskEnd: event("SparkListenerTaskEnd", {
    "Stage ID": Int,
    "Stage Attempt ID": Int,
    "Task Type": Schema.String,
    "Task End Reason": TaskEndReason,
    "Task Info": TaskInfo,
    "Task Metrics": Schema.optional(TaskMetrics)
  }),
  ExecutorAdded: event("SparkListenerExecutorAdded", {
    Timestamp: Schema.Number,
    "Executor ID": Schema.String,
    "Executor Info": Schema.Struct({
      Host: Schema.String,
      "Total Cores": Int,
      "Log Urls": StringMap,
      Attributes: Schema.optional(StringMap),
      Resources: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
      "Resource Profile Id": Schema.optional(Int)
    })
  }),
  ExecutorRemoved: event("SparkListenerExecutorRemoved", {
    Timestamp: Schema.Number,
    "Executor ID": Schema.String,
    "Removed Reason": Schema.String
  }),
  // Kindling's own: Spark has no listener event for it. Its name is a class name Spark's reader cannot load, so
  // Spark's History Server drops it as an unrecognized event and reads on.
  ExecutorDecommissioned: event("org.kindling.scheduler.ExecutorDecommissioned", {
    Timestamp: Schema.Number,
    "Executor ID": Schema.String,
    Reason: Schema.String
  }),
  BlockUpdated: event("SparkListenerBlockUpdated", {
    "Block Updated Info": Schema.Struct({
      "Block Manager ID": Schema.Struct({ "Executor ID": Schema.String, Host: Schema.String, Port: Int }),
      "Block ID": Schema.String,
      "Storage Level": StorageLevel,
      "Memory Size": Schema.Number,
      "Disk Size": Schema.Number
    })
  }),
  UnpersistRDD: event("SparkListenerUnpersistRDD", { "RDD ID": Int })
}

/**
 * Any event Kindling writes or reads.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SparkEvent = Schema.Union(...Object.values(events))

/**
 * @since 0.1.0
 * @category models
 */
export type SparkEvent = typeof SparkEvent.Type

/**
 * One event of each kind, by its `Event` name.
 *
 * @since 0.1.0
 * @category models
 */
export type SparkEventOf<Name extends SparkEvent["Event"]> = Extract<SparkEvent, { readonly Event: Name }>

/**
 * The `Event` names Kindling knows; a line of another kind is skipped when a log is read.
 *
 * @since 0.1.0
 */
export const knownEvents: ReadonlySet<string> = new Set(
  Object.values(events).map((schema) => schema.fields.Event.literals[0])
)
