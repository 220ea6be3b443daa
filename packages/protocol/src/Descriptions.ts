/**
 * The payload types that travel inside deploy messages: how to start a process, and what a driver, an
 * application or an executor asks for.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { AppId } from "./Ids.js"
import { ExecutorState } from "./States.js"

/**
 * A non-negative whole number of megabytes, cores, or executors.
 *
 * @since 0.1.0
 * @category schema
 */
export const Count = Schema.NonNegativeInt

/**
 * How a worker starts a driver or an executor: `node` on `mainModule` (a module of the Kindling install) with
 * `arguments`, after substituting placeholders (`{{WORKER_URL}}`, `{{USER_JAR}}` for drivers; `{{WORKER_URL}}`,
 * `{{EXECUTOR_ID}}`, `{{HOSTNAME}}`, `{{CORES}}`, `{{APP_ID}}` for executors). Spark's `mainClass` is
 * `mainModule` and its `javaOpts` are `nodeOptions`; class and library paths have no Node counterpart.
 *
 * @since 0.1.0
 * @category models
 */
export class Command extends Schema.Class<Command>("Command")({
  mainModule: Schema.String,
  arguments: Schema.Array(Schema.String),
  environment: Schema.Record({ key: Schema.String, value: Schema.String }),
  nodeOptions: Schema.Array(Schema.String)
}, { description: "How a worker starts a driver or executor process" }) {}

/**
 * A custom resource (such as `gpu`) and how many units one driver or executor needs.
 *
 * @since 0.1.0
 * @category models
 */
export class ResourceRequirement extends Schema.Class<ResourceRequirement>("ResourceRequirement")({
  resourceName: Schema.String,
  amount: Schema.Int.pipe(Schema.positive())
}, { description: "A custom resource and how many units one driver or executor needs" }) {}

/**
 * The addresses (device ids) of one custom resource held by a worker, driver or executor.
 *
 * @since 0.1.0
 * @category models
 */
export class ResourceInformation extends Schema.Class<ResourceInformation>("ResourceInformation")({
  name: Schema.String,
  addresses: Schema.Array(Schema.String)
}, { description: "The addresses of one custom resource" }) {}

/**
 * Resources by name, as workers offer them and runners are given them.
 *
 * @since 0.1.0
 * @category models
 */
export const Resources = Schema.Record({ key: Schema.String, value: ResourceInformation }).annotations({
  identifier: "Resources"
})
/**
 * @since 0.1.0
 * @category models
 */
export type Resources = typeof Resources.Type

/**
 * What `kindling submit --deploy-mode cluster` asks the master to run. `appUrl` (Spark's `jarUrl`) is where
 * the worker fetches the app artifact from: `file://`, `http://` or `https://`.
 *
 * @since 0.1.0
 * @category models
 */
export class DriverDescription extends Schema.Class<DriverDescription>("DriverDescription")({
  appUrl: Schema.String,
  mem: Count,
  cores: Count,
  supervise: Schema.Boolean,
  command: Command,
  resourceReqs: Schema.Array(ResourceRequirement)
}, { description: "A driver to run: its artifact, size, supervision and command" }) {}

/**
 * What an application's driver asks the master for when it registers.
 *
 * @since 0.1.0
 * @category models
 */
export class ApplicationDescription extends Schema.Class<ApplicationDescription>("ApplicationDescription")({
  name: Schema.String,
  maxCores: Schema.OptionFromNullOr(Count),
  memoryPerExecutorMB: Count,
  command: Command,
  appUiUrl: Schema.String,
  eventLogDir: Schema.OptionFromNullOr(Schema.String),
  eventLogCodec: Schema.OptionFromNullOr(Schema.String),
  coresPerExecutor: Schema.OptionFromNullOr(Schema.Int.pipe(Schema.positive())),
  initialExecutorLimit: Schema.OptionFromNullOr(Count),
  user: Schema.String,
  resourceReqsPerExecutor: Schema.Array(ResourceRequirement)
}, { description: "An application: its executors' size, its core cap and the executor command" }) {}

/**
 * One executor as a worker reports it to a (recovering) master.
 *
 * @since 0.1.0
 * @category models
 */
export class ExecutorDescription extends Schema.Class<ExecutorDescription>("ExecutorDescription")({
  appId: AppId,
  execId: Count,
  cores: Count,
  state: ExecutorState
}, { description: "One executor as a worker reports it" }) {}

/**
 * An exception carried in a message (Spark's `Option[Exception]` fields).
 *
 * @since 0.1.0
 * @category models
 */
export class RemoteException extends Schema.Class<RemoteException>("RemoteException")({
  name: Schema.String,
  message: Schema.String
}, { description: "An exception carried in a message: its class or tag and its text" }) {}
