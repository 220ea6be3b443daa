/**
 * The worker's local inputs: its timers, and what its shell reports back (runners' ends and changes, the
 * outcomes of the asks that tell the master about them). They never cross a connection; as schemas they document
 * the worker's core in the protocol reference, and `WorkerCore.Local` is derived from them.
 *
 * @since 0.1.0
 */
import { Descriptions, Ids, States } from "@kindling/protocol"
import * as Schema from "effect/Schema"

/**
 * @since 0.1.0
 * @category schemas
 */
export const ReregisterWithMaster = Schema.TaggedStruct("ReregisterWithMaster", {}).annotations({
  description: "The registration retry timer, while unregistered: register again, or give up after the last attempt"
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const SendHeartbeat = Schema.TaggedStruct("SendHeartbeat", {}).annotations({
  description: "Every `kindling.worker.timeout` / 4 once registered: send the master a heartbeat"
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const LeaseLapsed = Schema.TaggedStruct("LeaseLapsed", {}).annotations({
  description: "The lease of a worker that fences its supervised drivers may have lapsed (no master acknowledged a " +
    "heartbeat sent within `kindling.worker.driverFencing.lease`): it stops them, and tells a master they need relaunching"
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const WorkDirCleanup = Schema.TaggedStruct("WorkDirCleanup", {}).annotations({
  description:
    "Every `kindling.worker.cleanup.interval` once registered, if cleanup is on: delete old unused work-dir entries"
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const DriverLaunchFailed = Schema.TaggedStruct("DriverLaunchFailed", {
  driverId: Ids.DriverId,
  exception: Descriptions.RemoteException
}).annotations({
  description: "A driver's work dir, artifact or process could not be had: it ends ERROR with the exception"
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const DriverProcessEnded = Schema.TaggedStruct("DriverProcessEnded", {
  driverId: Ids.DriverId,
  exitCode: Schema.UndefinedOr(Schema.Int).annotations({
    description: "undefined when a kill came before the process started"
  }),
  exception: Schema.UndefinedOr(Descriptions.RemoteException).annotations({
    description: "after a non-zero exit, what the driver said of its failure (its failure file, else its stderr's end)"
  })
}).annotations({
  description: "One run of a driver's process ended: the driver ends (FINISHED, KILLED, FAILED), or, supervised " +
    "and failed, waits its back-off to run again (`RelaunchDriver`)"
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const RelaunchDriver = Schema.TaggedStruct("RelaunchDriver", { driverId: Ids.DriverId }).annotations({
  description: "A supervised driver's back-off after a failed run is over (1, 2, 4 … × " +
    "`kindling.worker.supervise.initialBackoff`, from the first again after a run of over 5 s): its process starts again"
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const ExecutorChanged = Schema.TaggedStruct("ExecutorChanged", {
  appId: Ids.AppId,
  execId: Schema.Int,
  state: States.ExecutorState,
  message: Schema.UndefinedOr(Schema.String),
  exitStatus: Schema.UndefinedOr(Schema.Int)
}).annotations({ description: "An executor's process started running, ended, or could not be launched" })

// Which `SyncState` ask an outcome is of.
const syncAsk = {
  key: Schema.propertySignature(Schema.String).annotations({
    description: "whose state is told: an executor's full id or a driver's id"
  }),
  askId: Schema.Int
}

/**
 * @since 0.1.0
 * @category schemas
 */
export const StateSyncAnswered = Schema.TaggedStruct("StateSyncAnswered", {
  ...syncAsk,
  taken: Schema.propertySignature(Schema.Boolean).annotations({
    description: "for a driver's end, whether the master took it (a standby does not)"
  })
}).annotations({ description: "The master answered a `SyncState` ask of an executor's state or a driver's end" })

/**
 * @since 0.1.0
 * @category schemas
 */
export const StateSyncFailed = Schema.TaggedStruct("StateSyncFailed", {
  ...syncAsk,
  reason: Schema.String,
  timedOut: Schema.propertySignature(Schema.Boolean).annotations({
    description: "a timeout has waited already; any other failure is retried after a wait"
  })
}).annotations({ description: "A `SyncState` ask failed" })

/**
 * @since 0.1.0
 * @category schemas
 */
export const RetryStateSync = Schema.TaggedStruct("RetryStateSync", { key: Schema.String }).annotations({
  description: "The ask timeout after a `SyncState` failed other than by timing out: ask again"
})

/**
 * Every local input of the worker.
 *
 * @since 0.1.0
 * @category schemas
 */
/**
 * @since 0.1.0
 * @category schemas
 */
export const DecommissionSignal = Schema.TaggedStruct("DecommissionSignal", {}).annotations({
  description: "The worker's process received `kindling.worker.decommission.signal` (SIGPWR): it decommissions " +
    "itself and tells its master (`WorkerDecommissioning`)"
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const Local = Schema.Union(
  DecommissionSignal,
  ReregisterWithMaster,
  SendHeartbeat,
  LeaseLapsed,
  WorkDirCleanup,
  DriverLaunchFailed,
  DriverProcessEnded,
  RelaunchDriver,
  ExecutorChanged,
  StateSyncAnswered,
  StateSyncFailed,
  RetryStateSync
)
