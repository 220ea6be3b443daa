/**
 * The app client (driver side, endpoint `AppClient`) ↔ master conversation: registering an application,
 * executor grants and updates, dynamic executor limits.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { ApplicationDescription, Count, Megabytes } from "./Descriptions.js"
import { AppNotFound } from "./Errors.js"
import { AppId, WorkerId } from "./Ids.js"
import { RefTo } from "./RpcAddress.js"
import { ExecutorState } from "./States.js"
import { MasterChanged } from "./WorkerMessages.js"

/**
 * Sent to every configured master; a standby master drops it, the leader answers `RegisteredApplication`.
 *
 * @since 0.1.0
 * @category app client → master
 */
export class RegisterApplication extends Schema.TaggedClass<RegisterApplication>()("RegisterApplication", {
  appDescription: ApplicationDescription,
  driver: RefTo<"AppClient">()
}, { description: "Register an application; standby masters drop it" }) {}

/**
 * The app finished normally (FINISHED).
 *
 * @since 0.1.0
 * @category app client → master
 */
export class UnregisterApplication extends Schema.TaggedClass<UnregisterApplication>()("UnregisterApplication", {
  appId: AppId
}, { description: "The application finished normally" }) {}

/**
 * The app client's answer to `MasterChanged`.
 *
 * @since 0.1.0
 * @category app client → master
 */
export class MasterChangeAcknowledged
  extends Schema.TaggedClass<MasterChangeAcknowledged>()("MasterChangeAcknowledged", { appId: AppId }, {
    description: "The app client's answer to MasterChanged"
  })
{}

/**
 * Set the app's executor limit; lowering it never kills executors by itself.
 *
 * @since 0.1.0
 * @category app client → master
 */
export class RequestExecutors extends Schema.TaggedRequest<RequestExecutors>()("RequestExecutors", {
  payload: { appId: AppId, requestedTotal: Count },
  success: Schema.Boolean,
  failure: AppNotFound
}, { description: "Set the app's executor limit; lowering it kills nothing" }) {}

/**
 * Kill some of the app's executors; ids that are not integers are dropped.
 *
 * @since 0.1.0
 * @category app client → master
 */
export class KillExecutors extends Schema.TaggedRequest<KillExecutors>()("KillExecutors", {
  payload: { appId: AppId, executorIds: Schema.Array(Schema.String) },
  success: Schema.Boolean,
  failure: AppNotFound
}, { description: "Kill some of the app's executors" }) {}

/**
 * Everything an app client sends to the master.
 *
 * @since 0.1.0
 * @category unions
 */
export const AppClientToMaster = Schema.Union(
  RegisterApplication,
  UnregisterApplication,
  MasterChangeAcknowledged,
  RequestExecutors,
  KillExecutors
)
/**
 * @since 0.1.0
 * @category unions
 */
export type AppClientToMaster = typeof AppClientToMaster.Type

/**
 * @since 0.1.0
 * @category master → app client
 */
export class RegisteredApplication extends Schema.TaggedClass<RegisteredApplication>()("RegisteredApplication", {
  appId: AppId,
  master: RefTo<"Master">()
}, { description: "The master registered the application under appId" }) {}

/**
 * The master granted an executor on a worker; memory in MB.
 *
 * @since 0.1.0
 * @category master → app client
 */
export class ExecutorAdded extends Schema.TaggedClass<ExecutorAdded>()("ExecutorAdded", {
  id: Count,
  workerId: WorkerId,
  hostPort: Schema.String,
  cores: Count,
  memory: Megabytes
}, { description: "An executor was granted on a worker; memory in MB" }) {}

/**
 * An executor changed state. `workerHost` is set when its worker was lost or decommissioned.
 *
 * @since 0.1.0
 * @category master → app client
 */
export class ExecutorUpdated extends Schema.TaggedClass<ExecutorUpdated>()("ExecutorUpdated", {
  id: Count,
  state: ExecutorState,
  message: Schema.OptionFromNullOr(Schema.String),
  exitStatus: Schema.OptionFromNullOr(Schema.Int),
  workerHost: Schema.OptionFromNullOr(Schema.String)
}, { description: "An executor changed state; workerHost is set when its worker was lost" }) {}

/**
 * The master removed the app with a final state other than FINISHED; `message` is that state's name.
 *
 * @since 0.1.0
 * @category master → app client
 */
export class ApplicationRemoved extends Schema.TaggedClass<ApplicationRemoved>()("ApplicationRemoved", {
  message: Schema.String
}, { description: "The master removed the app (FAILED, KILLED, …); the driver stops" }) {}

/**
 * A worker was removed; sent to every app that is not completed.
 *
 * @since 0.1.0
 * @category master → app client
 */
export class WorkerRemoved extends Schema.TaggedClass<WorkerRemoved>()("WorkerRemoved", {
  id: WorkerId,
  host: Schema.String,
  message: Schema.String
}, { description: "A worker was removed" }) {}

/**
 * Everything the master sends to an app client.
 *
 * @since 0.1.0
 * @category unions
 */
export const MasterToAppClient = Schema.Union(
  RegisteredApplication,
  ExecutorAdded,
  ExecutorUpdated,
  ApplicationRemoved,
  WorkerRemoved,
  MasterChanged
)
/**
 * @since 0.1.0
 * @category unions
 */
export type MasterToAppClient = typeof MasterToAppClient.Type
