/**
 * The executor's local inputs: its heartbeat timer, and what its shell reports back (the driver's answer to its
 * registration, tasks' ends, failed heartbeats). They never cross a connection; as schemas they document the
 * executor's core in the protocol reference, and `ExecutorCore.Local` is derived from them.
 *
 * @since 0.1.0
 */
import { Ids } from "@kindling/protocol"
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

// A persisted partition this executor now holds, as the driver is told of it.
const StoredBlock = Schema.Struct({
  blockId: Schema.String,
  level: Schema.Literal("MEMORY_ONLY", "MEMORY_AND_DISK", "DISK_ONLY"),
  memSize: Schema.Int,
  diskSize: Schema.Int
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
      Schema.Array(StoredBlock),
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
/**
 * @since 0.1.0
 * @category schemas
 */
export const Migrated = Schema.TaggedStruct("Migrated", {
  from: Ids.ExecutorId,
  mapOutputs: Schema.Array(Schema.Struct({ shuffleId: Schema.Int, mapIndex: Schema.Int })),
  stored: Schema.Array(StoredBlock),
  failures: Schema.Array(Schema.String)
}).annotations({
  description: "What a `MigrateBlocks` copied from a decommissioning executor is here: told to the driver in one " +
    "`BlocksMigrated`, its cached blocks each in an `UpdateBlockInfo` first"
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const Local = Schema.Union(Registered, RegistrationFailed, TasksEnded, SendHeartbeat, HeartbeatFailed, Migrated)
