/**
 * Messages a role sends to itself: timer ticks and local events. They never cross a connection, but they are
 * inputs of the role cores like any other message, so they are schemas too.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { WorkerId } from "./Ids.js"
import { ApplicationInfo, WorkerInfo } from "./QueryMessages.js"

/**
 * The leader-election agent made this master the leader.
 *
 * @since 0.1.0
 * @category master internal
 */
export class ElectedLeader extends Schema.TaggedClass<ElectedLeader>()("ElectedLeader", {}, {
  description: "This master became the leader"
}) {}

/**
 * The leader-election agent took leadership away; the master process exits.
 *
 * @since 0.1.0
 * @category master internal
 */
export class RevokedLeadership extends Schema.TaggedClass<RevokedLeadership>()("RevokedLeadership", {}, {
  description: "This master lost leadership and exits"
}) {}

/**
 * Fired every `kindling.worker.timeout`.
 *
 * @since 0.1.0
 * @category master internal
 */
export class CheckForWorkerTimeOut extends Schema.TaggedClass<CheckForWorkerTimeOut>()("CheckForWorkerTimeOut", {}, {
  description: "Time to look for workers whose heartbeats stopped"
}) {}

/**
 * Fired once, a worker timeout after recovery began.
 *
 * @since 0.1.0
 * @category master internal
 */
export class CompleteRecovery extends Schema.TaggedClass<CompleteRecovery>()("CompleteRecovery", {}, {
  description: "Finish recovery whoever has not answered"
}) {}

/**
 * Start recovery from persisted state (declared by Spark, unused by its master; kept for completeness).
 *
 * @since 0.1.0
 * @category master internal
 */
export class BeginRecovery extends Schema.TaggedClass<BeginRecovery>()("BeginRecovery", {
  storedApps: Schema.Array(ApplicationInfo),
  storedWorkers: Schema.Array(WorkerInfo)
}, { description: "Start recovery from persisted apps and workers" }) {}

/**
 * The work queued by `DecommissionWorkersOnHosts`.
 *
 * @since 0.1.0
 * @category master internal
 */
export class DecommissionWorkers extends Schema.TaggedClass<DecommissionWorkers>()("DecommissionWorkers", {
  ids: Schema.Array(WorkerId)
}, { description: "Decommission these workers" }) {}

/**
 * @since 0.1.0
 * @category unions
 */
export const MasterInternal = Schema.Union(
  ElectedLeader,
  RevokedLeadership,
  CheckForWorkerTimeOut,
  CompleteRecovery,
  BeginRecovery,
  DecommissionWorkers
)
/**
 * @since 0.1.0
 * @category unions
 */
export type MasterInternal = typeof MasterInternal.Type

/**
 * Fired every `kindling.worker.timeout / 4` while registered.
 *
 * @since 0.1.0
 * @category worker internal
 */
export class SendHeartbeat extends Schema.TaggedClass<SendHeartbeat>()("SendHeartbeat", {}, {
  description: "Time to send a heartbeat"
}) {}

/**
 * Fired every `kindling.worker.cleanup.interval` when cleanup is enabled.
 *
 * @since 0.1.0
 * @category worker internal
 */
export class WorkDirCleanup extends Schema.TaggedClass<WorkDirCleanup>()("WorkDirCleanup", {}, {
  description: "Time to delete old app work dirs"
}) {}

/**
 * Fired by the registration retry timer.
 *
 * @since 0.1.0
 * @category worker internal
 */
export class ReregisterWithMaster extends Schema.TaggedClass<ReregisterWithMaster>()("ReregisterWithMaster", {}, {
  description: "Registration retry tick"
}) {}

/**
 * The worker process got its decommission signal.
 *
 * @since 0.1.0
 * @category worker internal
 */
export class WorkerDecommissionSigReceived
  extends Schema.TaggedClass<WorkerDecommissionSigReceived>()("WorkerDecommissionSigReceived", {}, {
    description: "The worker process got its decommission signal"
  })
{}

/**
 * @since 0.1.0
 * @category unions
 */
export const WorkerInternal = Schema.Union(
  SendHeartbeat,
  WorkDirCleanup,
  ReregisterWithMaster,
  WorkerDecommissionSigReceived
)
/**
 * @since 0.1.0
 * @category unions
 */
export type WorkerInternal = typeof WorkerInternal.Type

/**
 * Stop the app client; it then unregisters the application.
 *
 * @since 0.1.0
 * @category app client internal
 */
export class StopAppClient extends Schema.TaggedRequest<StopAppClient>()("StopAppClient", {
  payload: {},
  success: Schema.Boolean,
  failure: Schema.Never
}, { description: "Stop the app client, which unregisters the app" }) {}

/**
 * Send `StopExecutor` to every executor.
 *
 * @since 0.1.0
 * @category driver internal
 */
export class StopExecutors extends Schema.TaggedRequest<StopExecutors>()("StopExecutors", {
  payload: {},
  success: Schema.Boolean,
  failure: Schema.Never
}, { description: "Stop every executor" }) {}

/**
 * @since 0.1.0
 * @category driver internal
 */
export class StopDriver extends Schema.TaggedRequest<StopDriver>()("StopDriver", {
  payload: {},
  success: Schema.Boolean,
  failure: Schema.Never
}, { description: "Stop the driver's scheduler endpoint" }) {}

/**
 * Fired every `kindling.scheduler.revive.interval` and after task events: offer free cores to task sets.
 *
 * @since 0.1.0
 * @category driver internal
 */
export class ReviveOffers extends Schema.TaggedClass<ReviveOffers>()("ReviveOffers", {}, {
  description: "Offer free executor cores to waiting tasks"
}) {}

/**
 * Drop every executor of a lost worker.
 *
 * @since 0.1.0
 * @category driver internal
 */
export class RemoveWorker extends Schema.TaggedClass<RemoveWorker>()("RemoveWorker", {
  workerId: WorkerId,
  host: Schema.String,
  message: Schema.String
}, { description: "Drop the executors of a lost worker" }) {}

/**
 * @since 0.1.0
 * @category driver internal
 */
export class KillExecutorsOnHost extends Schema.TaggedClass<KillExecutorsOnHost>()("KillExecutorsOnHost", {
  host: Schema.String
}, { description: "Kill every executor on a host" }) {}

/**
 * @since 0.1.0
 * @category driver internal
 */
export class DecommissionExecutorsOnHost
  extends Schema.TaggedClass<DecommissionExecutorsOnHost>()("DecommissionExecutorsOnHost", {
    host: Schema.String
  }, { description: "Decommission every executor on a host" })
{}

/**
 * @since 0.1.0
 * @category unions
 */
export const DriverInternal = Schema.Union(
  StopAppClient,
  StopExecutors,
  StopDriver,
  ReviveOffers,
  RemoveWorker,
  KillExecutorsOnHost,
  DecommissionExecutorsOnHost
)
/**
 * @since 0.1.0
 * @category unions
 */
export type DriverInternal = typeof DriverInternal.Type

/**
 * The driver accepted the executor's registration.
 *
 * @since 0.1.0
 * @category executor internal
 */
export class RegisteredExecutor extends Schema.TaggedClass<RegisteredExecutor>()("RegisteredExecutor", {}, {
  description: "The driver accepted this executor"
}) {}

/**
 * The executor process got its decommission signal.
 *
 * @since 0.1.0
 * @category executor internal
 */
export class ExecutorDecommissionSigReceived
  extends Schema.TaggedClass<ExecutorDecommissionSigReceived>()("ExecutorDecommissionSigReceived", {}, {
    description: "The executor process got its decommission signal"
  })
{}

/**
 * @since 0.1.0
 * @category executor internal
 */
export class Shutdown extends Schema.TaggedClass<Shutdown>()("Shutdown", {}, {
  description: "Shut the executor down"
}) {}

/**
 * @since 0.1.0
 * @category unions
 */
export const ExecutorInternal = Schema.Union(RegisteredExecutor, ExecutorDecommissionSigReceived, Shutdown)
/**
 * @since 0.1.0
 * @category unions
 */
export type ExecutorInternal = typeof ExecutorInternal.Type
