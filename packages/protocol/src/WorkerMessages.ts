/**
 * The worker ↔ master conversation: registration, heartbeats, state reports, and the master's commands to
 * launch and kill drivers and executors.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import {
  ApplicationDescription,
  Count,
  DriverDescription,
  ExecutorDescription,
  Megabytes,
  RemoteException,
  Resources
} from "./Descriptions.js"
import { AppId, DriverId, WorkerId } from "./Ids.js"
import { RefTo, RpcAddress } from "./RpcAddress.js"
import { DriverState, ExecutorState } from "./States.js"

const MasterUrl = Schema.String.annotations({ description: "the sending master's URL, kindling://host:port" })

/**
 * A worker offers itself to every configured master, at each attempt. The master answers with a
 * separate `RegisteredWorker`, `RegisterWorkerFailed` or `MasterInStandby`.
 *
 * @since 0.1.0
 * @category worker → master
 */
export class RegisterWorker extends Schema.TaggedClass<RegisterWorker>()("RegisterWorker", {
  id: WorkerId,
  host: Schema.String,
  port: Schema.Int,
  worker: RefTo<"Worker">(),
  cores: Count,
  memory: Megabytes,
  workerWebUiUrl: Schema.String,
  masterAddress: RpcAddress,
  resources: Resources,
  driverFenceMillis: Schema.optional(Schema.Int.pipe(Schema.positive())).annotations({
    description: "Given by a worker that fences its supervised drivers: they are surely stopped this long after it " +
      "sent the last heartbeat a master acknowledged (its lease plus its drivers' terminate timeout), so a master " +
      "that loses the worker relaunches them only after that. Absent: the worker does not fence (as Spark's)"
  })
}, {
  description: "A worker offers itself; memory in MB; masterAddress is the address the worker dialled. The master " +
    "marks the worker DEAD when the connection it registered on closes, or when no Heartbeat came for " +
    "kindling.worker.timeout"
}) {}

/**
 * Sent every `kindling.worker.timeout / 4` while registered.
 *
 * @since 0.1.0
 * @category worker → master
 */
export class Heartbeat extends Schema.TaggedClass<Heartbeat>()("Heartbeat", {
  workerId: WorkerId,
  worker: RefTo<"Worker">(),
  seq: Schema.optional(Schema.Int.pipe(Schema.nonNegative())).annotations({
    description: "Numbers the heartbeats of a worker that fences its drivers; a leading master that knows the " +
      "worker acknowledges it with HeartbeatAcknowledged"
  })
}, { description: "A registered worker is alive" }) {}

/**
 * A worker reports an executor's new state; the master answers `true` once it has taken it into account.
 *
 * @since 0.1.0
 * @category worker → master
 */
export class ExecutorStateChanged extends Schema.TaggedRequest<ExecutorStateChanged>()("ExecutorStateChanged", {
  payload: {
    appId: AppId,
    execId: Count,
    state: ExecutorState,
    message: Schema.OptionFromNullOr(Schema.String),
    exitStatus: Schema.OptionFromNullOr(Schema.Int)
  },
  success: Schema.Boolean,
  failure: Schema.Never
}, { description: "An executor's new state, asked with retries so the master never misses a finished executor" }) {}

/**
 * A driver's final state (ERROR, FINISHED, KILLED or FAILED). Kindling asks it and the master answers `true` once
 * it has taken it into account (Spark sends it one way, and loses it when the master is away); a worker keeps the
 * state until then, and tells it again when it registers with a master.
 *
 * @since 0.1.0
 * @category worker → master
 */
export class DriverStateChanged extends Schema.TaggedRequest<DriverStateChanged>()("DriverStateChanged", {
  payload: {
    driverId: DriverId,
    state: DriverState,
    exception: Schema.OptionFromNullOr(RemoteException)
  },
  success: Schema.Boolean,
  failure: Schema.Never
}, {
  description: "A driver's final state; answered true once the master has taken it into account, false by a " +
    "STANDBY master, which cannot: the worker keeps the end and tells the next leader (endedDrivers)"
}) {}

/**
 * A driver that ended on a worker while no master acknowledged its end.
 *
 * @since 0.1.0
 * @category models
 */
export class EndedDriver extends Schema.Class<EndedDriver>("EndedDriver")({
  driverId: DriverId,
  state: DriverState,
  exception: Schema.OptionFromNullOr(RemoteException)
}, { description: "A driver that ended on the worker and whose end no master has acknowledged yet" }) {}

/**
 * One executor a worker runs, with the resources it holds.
 *
 * @since 0.1.0
 * @category models
 */
export class WorkerExecutorStateResponse
  extends Schema.Class<WorkerExecutorStateResponse>("WorkerExecutorStateResponse")({
    desc: ExecutorDescription,
    resources: Resources
  }, { description: "One executor a worker runs, with its resources" })
{}

/**
 * One driver a worker runs, with the resources it holds.
 *
 * @since 0.1.0
 * @category models
 */
export class WorkerDriverStateResponse extends Schema.Class<WorkerDriverStateResponse>("WorkerDriverStateResponse")({
  driverId: DriverId,
  resources: Resources
}, { description: "One driver a worker runs, with its resources" }) {}

/**
 * A worker's answer to `MasterChanged`: everything it runs, so the recovering master can rebuild its view.
 *
 * @since 0.1.0
 * @category worker → master
 */
export class WorkerSchedulerStateResponse
  extends Schema.TaggedClass<WorkerSchedulerStateResponse>()("WorkerSchedulerStateResponse", {
    id: WorkerId,
    execResponses: Schema.Array(WorkerExecutorStateResponse),
    driverResponses: Schema.Array(WorkerDriverStateResponse),
    /** Kindling's: drivers that ended here while no master heard of it, so recovery settles them. */
    endedDrivers: Schema.Array(EndedDriver)
  }, {
    description: "Answer to MasterChanged: every executor and driver the worker runs, and drivers that ended unheard"
  })
{}

/**
 * Sent right after each `RegisteredWorker`; the master kills whatever it does not know, and says which of the apps
 * whose data the worker holds have finished (`ApplicationFinished`): one that ended while the worker was away, or
 * before the master failed over, is told no other way, and its scratch dirs and shuffle files would stay for ever.
 *
 * @since 0.1.0
 * @category worker → master
 */
export class WorkerLatestState extends Schema.TaggedClass<WorkerLatestState>()("WorkerLatestState", {
  id: WorkerId,
  executors: Schema.Array(ExecutorDescription),
  driverIds: Schema.Array(DriverId),
  /** The apps whose executors ran here and whose local data is not cleaned up yet. */
  appIds: Schema.Array(AppId)
}, {
  description: "What the worker runs and the apps whose data it holds, sent after registering; the master kills " +
    "what it does not know and says which of those apps finished"
}) {}

/**
 * The worker received its decommission signal.
 *
 * @since 0.1.0
 * @category worker → master
 */
export class WorkerDecommissioning extends Schema.TaggedClass<WorkerDecommissioning>()("WorkerDecommissioning", {
  id: WorkerId,
  workerRef: RefTo<"Worker">()
}, { description: "The worker received its decommission signal" }) {}

/**
 * Everything a worker sends to the master.
 *
 * @since 0.1.0
 * @category unions
 */
export const WorkerToMaster = Schema.Union(
  RegisterWorker,
  Heartbeat,
  ExecutorStateChanged,
  DriverStateChanged,
  WorkerSchedulerStateResponse,
  WorkerLatestState,
  WorkerDecommissioning
)
/**
 * @since 0.1.0
 * @category unions
 */
export type WorkerToMaster = typeof WorkerToMaster.Type

/**
 * The master accepted the worker. `duplicate` is true when a worker with this id was already registered.
 *
 * @since 0.1.0
 * @category master → worker
 */
export class RegisteredWorker extends Schema.TaggedClass<RegisteredWorker>()("RegisteredWorker", {
  master: RefTo<"Master">(),
  masterWebUiUrl: Schema.String,
  masterAddress: RpcAddress,
  duplicate: Schema.Boolean
}, { description: "The master accepted the worker; masterAddress echoes what the worker sent" }) {}

/**
 * The master refused the worker; a worker that is not yet registered exits with code 1.
 *
 * @since 0.1.0
 * @category master → worker
 */
export class RegisterWorkerFailed extends Schema.TaggedClass<RegisterWorkerFailed>()("RegisterWorkerFailed", {
  message: Schema.String
}, { description: "The master refused the worker; an unregistered worker exits with code 1" }) {}

/**
 * A standby master's answer to `RegisterWorker`, which workers ignore, and to `Heartbeat`: a worker that hears it
 * from the master it registered with registers with every master of its URL again.
 *
 * @since 0.1.0
 * @category master → worker
 */
export class MasterInStandby extends Schema.TaggedClass<MasterInStandby>()("MasterInStandby", {}, {
  description: "A standby master's answer to RegisterWorker (ignored) and to Heartbeat: a worker that hears it " +
    "from the master it registered with registers with every master of its URL again"
}) {}

/**
 * A leading master's answer to a numbered `Heartbeat` of a worker it knows: it will not take the worker for dead, and
 * relaunch its supervised drivers elsewhere, before the worker's fence has passed from that heartbeat's receipt.
 * The worker's lease runs from when it sent the heartbeat acknowledged last.
 *
 * @since 0.1.0
 * @category master → worker
 */
export class HeartbeatAcknowledged extends Schema.TaggedClass<HeartbeatAcknowledged>()("HeartbeatAcknowledged", {
  seq: Schema.Int.pipe(Schema.nonNegative())
}, {
  description: "A leading master heard the worker's heartbeat seq: the worker's lease runs on from when it sent " +
    "it. A worker whose lease lapses stops its supervised drivers, which the master relaunches elsewhere"
}) {}

/**
 * The master lost track of the worker (for example it was marked DEAD) and asks it to register again.
 *
 * @since 0.1.0
 * @category master → worker
 */
export class ReconnectWorker extends Schema.TaggedClass<ReconnectWorker>()("ReconnectWorker", {
  masterUrl: MasterUrl
}, { description: "Register again: the master no longer knows this worker" }) {}

/**
 * Ignored when `masterUrl` is not the worker's active master.
 *
 * @since 0.1.0
 * @category master → worker
 */
export class KillExecutor extends Schema.TaggedClass<KillExecutor>()("KillExecutor", {
  masterUrl: MasterUrl,
  appId: AppId,
  execId: Count
}, { description: "Kill one executor" }) {}

/**
 * Start an executor for an app with the given cores and memory (MB).
 *
 * @since 0.1.0
 * @category master → worker
 */
export class LaunchExecutor extends Schema.TaggedClass<LaunchExecutor>()("LaunchExecutor", {
  masterUrl: MasterUrl,
  appId: AppId,
  execId: Count,
  appDesc: ApplicationDescription,
  cores: Count,
  memory: Megabytes,
  resources: Resources
}, { description: "Start an executor; memory in MB" }) {}

/**
 * Start a driver.
 *
 * @since 0.1.0
 * @category master → worker
 */
export class LaunchDriver extends Schema.TaggedClass<LaunchDriver>()("LaunchDriver", {
  driverId: DriverId,
  driverDesc: DriverDescription,
  resources: Resources
}, { description: "Start a driver" }) {}

/**
 * @since 0.1.0
 * @category master → worker
 */
export class KillDriver extends Schema.TaggedClass<KillDriver>()("KillDriver", {
  driverId: DriverId
}, { description: "Kill a driver" }) {}

/**
 * Sent to every worker when an app is removed; the worker deletes the app's local dirs once none of its
 * executors remain.
 *
 * @since 0.1.0
 * @category master → worker
 */
export class ApplicationFinished extends Schema.TaggedClass<ApplicationFinished>()("ApplicationFinished", {
  id: AppId
}, { description: "An app was removed; delete its local dirs once none of its executors remain" }) {}

/**
 * @since 0.1.0
 * @category master → worker
 */
export class DecommissionWorker extends Schema.TaggedClass<DecommissionWorker>()("DecommissionWorker", {}, {
  description: "Decommission this worker: accept no new executors"
}) {}

/**
 * A new master took over; workers answer `WorkerSchedulerStateResponse`, app clients
 * `MasterChangeAcknowledged`.
 *
 * @since 0.1.0
 * @category master → worker
 */
export class MasterChanged extends Schema.TaggedClass<MasterChanged>()("MasterChanged", {
  master: RefTo<"Master">(),
  masterWebUiUrl: Schema.String
}, { description: "A new master took over; sent to workers and to app clients" }) {}

/**
 * Everything the master sends to a worker.
 *
 * @since 0.1.0
 * @category unions
 */
export const MasterToWorker = Schema.Union(
  RegisteredWorker,
  RegisterWorkerFailed,
  MasterInStandby,
  HeartbeatAcknowledged,
  ReconnectWorker,
  KillExecutor,
  LaunchExecutor,
  LaunchDriver,
  KillDriver,
  ApplicationFinished,
  DecommissionWorker,
  MasterChanged
)
/**
 * @since 0.1.0
 * @category unions
 */
export type MasterToWorker = typeof MasterToWorker.Type
