/**
 * Queries a web UI or a tool sends to a master or a worker, and the snapshots they answer with.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import {
  ApplicationDescription,
  Count,
  DriverDescription,
  Megabytes,
  RemoteException,
  Resources
} from "./Descriptions.js"
import { AppId, DriverId, WorkerId } from "./Ids.js"
import { RefTo } from "./RpcAddress.js"
import { ApplicationState, DriverState, ExecutorState, RecoveryState, WorkerState } from "./States.js"

const EpochMillis = Schema.Int.annotations({ description: "milliseconds since the Unix epoch" })

/**
 * One executor as the master tracks it.
 *
 * @since 0.1.0
 * @category models
 */
export class ExecutorInfo extends Schema.Class<ExecutorInfo>("ExecutorInfo")({
  appId: AppId,
  execId: Count,
  workerId: WorkerId,
  cores: Count,
  memory: Megabytes,
  state: ExecutorState,
  resources: Resources
}, { description: "An executor as the master tracks it; memory in MB" }) {}

/**
 * A worker as the master tracks it.
 *
 * @since 0.1.0
 * @category models
 */
export class WorkerInfo extends Schema.Class<WorkerInfo>("WorkerInfo")({
  id: WorkerId,
  host: Schema.String,
  port: Schema.Int,
  webUiAddress: Schema.String,
  cores: Count,
  coresUsed: Count,
  memory: Megabytes,
  memoryUsed: Megabytes,
  resources: Resources,
  resourcesUsed: Resources,
  state: WorkerState,
  lastHeartbeat: EpochMillis,
  executors: Schema.Array(ExecutorInfo),
  drivers: Schema.Array(DriverId),
  driverFenceMillis: Schema.optional(Schema.Int.pipe(Schema.positive())).annotations({
    description: "The worker's fence (see RegisterWorker), when it fences its supervised drivers"
  })
}, { description: "A worker as the master tracks it; memory in MB" }) {}

/**
 * An application as the master tracks it.
 *
 * @since 0.1.0
 * @category models
 */
export class ApplicationInfo extends Schema.Class<ApplicationInfo>("ApplicationInfo")({
  id: AppId,
  startTime: EpochMillis,
  submitDate: EpochMillis,
  desc: ApplicationDescription,
  driver: RefTo<"AppClient">(),
  state: ApplicationState,
  coresGranted: Count,
  executors: Schema.Array(ExecutorInfo),
  executorLimit: Schema.OptionFromNullOr(Count),
  endTime: Schema.OptionFromNullOr(EpochMillis)
}, { description: "An application as the master tracks it" }) {}

/**
 * A driver as the master tracks it.
 *
 * @since 0.1.0
 * @category models
 */
export class DriverInfo extends Schema.Class<DriverInfo>("DriverInfo")({
  id: DriverId,
  startTime: EpochMillis,
  submitDate: EpochMillis,
  desc: DriverDescription,
  state: DriverState,
  workerId: Schema.OptionFromNullOr(WorkerId),
  exception: Schema.OptionFromNullOr(RemoteException),
  resources: Resources,
  fenceMillis: Schema.optional(Schema.Int.pipe(Schema.positive())).annotations({
    description: "How long a copy of this driver may run on past its worker's last heartbeat when cut off (the " +
      "worker's fence): for a relaunch whose predecessor may still run, it is not launched before this long after " +
      "that worker was last heard from (or after a master that recovers it began to lead); for a launched driver, " +
      "its own worker's fence, which a master that recovers and does not find it waits out the same way"
  })
}, { description: "A driver as the master tracks it" }) {}

/**
 * @since 0.1.0
 * @category replies
 */
export class MasterStateResponse extends Schema.TaggedClass<MasterStateResponse>()("MasterStateResponse", {
  host: Schema.String,
  port: Schema.Int,
  restPort: Schema.OptionFromNullOr(Schema.Int),
  workers: Schema.Array(WorkerInfo),
  activeApps: Schema.Array(ApplicationInfo),
  completedApps: Schema.Array(ApplicationInfo),
  activeDrivers: Schema.Array(DriverInfo),
  completedDrivers: Schema.Array(DriverInfo),
  status: RecoveryState
}, { description: "The master's whole view of the cluster" }) {}

/**
 * Answered in any state, so tools can see a standby or recovering master.
 *
 * @since 0.1.0
 * @category UI → master
 */
export class RequestMasterState extends Schema.TaggedRequest<RequestMasterState>()("RequestMasterState", {
  payload: {},
  success: MasterStateResponse,
  failure: Schema.Never
}, { description: "The master's view of workers, apps and drivers" }) {}

/**
 * Mark the workers on these hosts (case-insensitive) for decommissioning; answers how many matched (0 when
 * standby).
 *
 * @since 0.1.0
 * @category UI → master
 */
export class DecommissionWorkersOnHosts
  extends Schema.TaggedRequest<DecommissionWorkersOnHosts>()("DecommissionWorkersOnHosts", {
    payload: { hostnames: Schema.Array(Schema.String) },
    success: Count,
    failure: Schema.Never
  }, { description: "Decommission the workers on these hosts; answers how many matched" })
{}

/**
 * Decommission these workers, by id (Kindling's own, beside Spark's by-host message: workers that share a host
 * can be taken out one at a time); answers how many of them the master knows and had not decommissioned yet (0
 * when standby).
 *
 * @since 0.1.0
 * @category UI → master
 */
export class DecommissionWorkers extends Schema.TaggedRequest<DecommissionWorkers>()("DecommissionWorkers", {
  payload: { workerIds: Schema.Array(WorkerId) },
  success: Count,
  failure: Schema.Never
}, { description: "Decommission these workers; answers how many were decommissioned" }) {}

/**
 * @since 0.1.0
 * @category replies
 */
export class BoundPortsResponse extends Schema.TaggedClass<BoundPortsResponse>()("BoundPortsResponse", {
  rpcEndpointPort: Schema.Int,
  webUIPort: Schema.Int,
  restPort: Schema.OptionFromNullOr(Schema.Int)
}, { description: "The ports a master actually bound" }) {}

/**
 * Which ports the master bound (useful with port 0).
 *
 * @since 0.1.0
 * @category UI → master
 */
export class BoundPortsRequest extends Schema.TaggedRequest<BoundPortsRequest>()("BoundPortsRequest", {
  payload: {},
  success: BoundPortsResponse,
  failure: Schema.Never
}, { description: "The ports the master bound" }) {}

/**
 * One executor a worker runs or ran.
 *
 * @since 0.1.0
 * @category models
 */
export class ExecutorRunnerInfo extends Schema.Class<ExecutorRunnerInfo>("ExecutorRunnerInfo")({
  appId: AppId,
  execId: Count,
  appDesc: ApplicationDescription,
  cores: Count,
  memory: Megabytes,
  state: ExecutorState,
  resources: Resources,
  workDir: Schema.String
}, { description: "An executor a worker runs or ran; memory in MB" }) {}

/**
 * One driver a worker runs or ran.
 *
 * @since 0.1.0
 * @category models
 */
export class DriverRunnerInfo extends Schema.Class<DriverRunnerInfo>("DriverRunnerInfo")({
  driverId: DriverId,
  desc: DriverDescription,
  state: DriverState,
  exception: Schema.OptionFromNullOr(RemoteException),
  resources: Resources,
  workDir: Schema.String
}, { description: "A driver a worker runs or ran" }) {}

/**
 * @since 0.1.0
 * @category replies
 */
export class WorkerStateResponse extends Schema.TaggedClass<WorkerStateResponse>()("WorkerStateResponse", {
  host: Schema.String,
  port: Schema.Int,
  workerId: WorkerId,
  executors: Schema.Array(ExecutorRunnerInfo),
  finishedExecutors: Schema.Array(ExecutorRunnerInfo),
  drivers: Schema.Array(DriverRunnerInfo),
  finishedDrivers: Schema.Array(DriverRunnerInfo),
  masterUrl: Schema.OptionFromNullOr(Schema.String),
  cores: Count,
  memory: Megabytes,
  coresUsed: Count,
  memoryUsed: Megabytes,
  masterWebUiUrl: Schema.OptionFromNullOr(Schema.String),
  resources: Resources,
  resourcesUsed: Resources
}, { description: "A worker's view of what it runs" }) {}

/**
 * @since 0.1.0
 * @category UI → worker
 */
export class RequestWorkerState extends Schema.TaggedRequest<RequestWorkerState>()("RequestWorkerState", {
  payload: {},
  success: WorkerStateResponse,
  failure: Schema.Never
}, { description: "The worker's view of its executors and drivers" }) {}

/**
 * Everything a UI or tool asks a master.
 *
 * @since 0.1.0
 * @category unions
 */
export const MasterQuery = Schema.Union(
  RequestMasterState,
  DecommissionWorkersOnHosts,
  DecommissionWorkers,
  BoundPortsRequest
)
/**
 * @since 0.1.0
 * @category unions
 */
export type MasterQuery = typeof MasterQuery.Type

/**
 * Everything a UI or tool asks a worker.
 *
 * @since 0.1.0
 * @category unions
 */
export const WorkerQuery = Schema.Union(RequestWorkerState)
/**
 * @since 0.1.0
 * @category unions
 */
export type WorkerQuery = typeof WorkerQuery.Type

/**
 * The replies to queries.
 *
 * @since 0.1.0
 * @category unions
 */
export const QueryReply = Schema.Union(MasterStateResponse, BoundPortsResponse, WorkerStateResponse)
/**
 * @since 0.1.0
 * @category unions
 */
export type QueryReply = typeof QueryReply.Type
