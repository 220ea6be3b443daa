/**
 * The executor's local inputs: its heartbeat timer, and what its shell reports back (the driver's answer to its
 * registration, tasks' ends, failed heartbeats). They never cross a connection; as schemas they document the
 * executor's core in the protocol reference, and `ExecutorCore.Local` is derived from them.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * @since 0.1.0
 * @category schemas
 */
export const Registered = Schema.TaggedStruct("Registered", {}).annotations({
  description: "The driver accepted the executor's `RegisterExecutor`: it says it is ready and starts its heartbeats"
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const RegistrationFailed = Schema.TaggedStruct("RegistrationFailed", { reason: Schema.String }).annotations({
  description: "The driver refused the executor's `RegisterExecutor`, or did not answer it: the executor exits"
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const TasksEnded = Schema.TaggedStruct("TasksEnded", {
  ends: Schema.Array(Schema.Struct({
    taskId: Schema.Int,
    state: Schema.Literal("FINISHED", "FAILED", "KILLED"),
    outcome: Schema.propertySignature(Schema.Uint8ArrayFromSelf).annotations({
      description: "its encoded `TaskOutcome`"
    }),
    stored: Schema.optionalWith(
      Schema.Array(Schema.Struct({
        blockId: Schema.String,
        level: Schema.Literal("MEMORY_ONLY", "MEMORY_AND_DISK", "DISK_ONLY"),
        memSize: Schema.Int,
        diskSize: Schema.Int
      })),
      { exact: true }
    ).annotations({ description: "the persisted partitions it computed that this executor now holds" })
  }))
}).annotations({
  description: "Tasks ended — finished, failed, or killed — in one turn of the event loop: reported to the driver " +
    "in one `StatusUpdates`"
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const SendHeartbeat = Schema.TaggedStruct("SendHeartbeat", {}).annotations({
  description: "Every `kindling.executor.heartbeatInterval` once registered: send the driver a heartbeat"
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const HeartbeatFailed = Schema.TaggedStruct("HeartbeatFailed", { reason: Schema.String }).annotations({
  description: "A heartbeat's ask failed: the executor logs it and beats on"
})

/**
 * Every local input of the executor.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Local = Schema.Union(Registered, RegistrationFailed, TasksEnded, SendHeartbeat, HeartbeatFailed)
