/**
 * The master's local inputs: what it tells itself (its timers) and what its shell reports back (leadership
 * changes, kill buttons pressed in its web UI, artifacts stored). They never cross a connection; as schemas they
 * document the master's core in the protocol reference, and `MasterCore.Local` is derived from them.
 *
 * @since 0.1.0
 */
import { KernelInputs } from "@kindling/kernel"
import { Errors, Ids, QueryMessages, SubmissionMessages } from "@kindling/protocol"
import * as Schema from "effect/Schema"

/**
 * What persistence holds, and what a newly elected master recovers from.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Stored = Schema.Struct({
  apps: Schema.Array(QueryMessages.ApplicationInfo),
  drivers: Schema.Array(QueryMessages.DriverInfo),
  workers: Schema.Array(QueryMessages.WorkerInfo)
})

/**
 * @since 0.1.0
 * @category models
 */
export type Stored = typeof Stored.Type

/**
 * @since 0.1.0
 * @category schemas
 */
export const ElectedLeader = Schema.TaggedStruct("ElectedLeader", {
  stored: Schema.propertySignature(Stored).annotations({ description: "what persistence held when it was read" })
}).annotations({
  description: "The leader election made this master the leader: it recovers what was stored, if anything"
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const RevokedLeadership = Schema.TaggedStruct("RevokedLeadership", {}).annotations({
  description: "The leader election took leadership away: the master forgets what it led and is STANDBY"
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const CheckForWorkerTimeOut = Schema.TaggedStruct("CheckForWorkerTimeOut", {}).annotations({
  description: "At the start and every `kindling.worker.timeout`: workers whose heartbeats stopped are removed"
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const CompleteRecovery = Schema.TaggedStruct("CompleteRecovery", {}).annotations({
  description: "`kindling.deploy.recoveryTimeout` after recovery began: it ends, without whoever has not answered"
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const RelaunchDue = Schema.TaggedStruct("RelaunchDue", {}).annotations({
  description: "The fence of a relaunched supervised driver has passed: the worker it ran on has surely stopped the " +
    "old copy, and the new one may be launched"
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const WorkerProcessGone = Schema.TaggedStruct("WorkerProcessGone", { workerId: Ids.WorkerId }).annotations({
  description: "A lost worker's address refuses connections (`ProbeWorker`): its process is gone, and the drivers " +
    "it ran die with it (their parent watch), so their relaunches need not wait out its fence"
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const KillApplicationFromUi = Schema.TaggedStruct("KillApplicationFromUi", { appId: Ids.AppId })
  .annotations({ description: "Someone pressed an app's kill button in the master's web UI" })

/**
 * @since 0.1.0
 * @category schemas
 */
export const DecommissionHostsFromUi = Schema.TaggedStruct("DecommissionHostsFromUi", {
  hosts: Schema.Array(Schema.String)
}).annotations({ description: "A POST to the master UI's /workers/kill/ named hosts whose workers to decommission" })

/**
 * @since 0.1.0
 * @category schemas
 */
export const KillDriverFromUi = Schema.TaggedStruct("KillDriverFromUi", { driverId: Ids.DriverId })
  .annotations({ description: "Someone pressed a driver's kill button in the master's web UI" })

/**
 * @since 0.1.0
 * @category schemas
 */
export const ArtifactStored = Schema.TaggedStruct("ArtifactStored", {
  ask: KernelInputs.Ask(SubmissionMessages.RequestUploadArtifact),
  // An Exit is the outcome of the shell's work, not data: the master answers the upload with it as it is.
  exit: Schema.ExitFromSelf({
    success: SubmissionMessages.UploadArtifactResponse,
    failure: Errors.ArtifactRejected,
    defect: Schema.Defect
  }).annotations({
    identifier: "Exit",
    description: "the artifact store's outcome, an `UploadArtifactResponse` or an `ArtifactRejected`: the answer"
  })
}).annotations({
  description: "The artifact store has fetched and stored an upload (`StoreArtifact`), or rejected it"
})

/**
 * Every local input of the master.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Local = Schema.Union(
  ElectedLeader,
  RevokedLeadership,
  CheckForWorkerTimeOut,
  CompleteRecovery,
  RelaunchDue,
  WorkerProcessGone,
  KillApplicationFromUi,
  KillDriverFromUi,
  DecommissionHostsFromUi,
  ArtifactStored
)
