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
 * A memory size in megabytes (MiB, 2^20 bytes): what every memory field of the deploy messages counts in, as
 * Spark's do.
 *
 * @since 0.1.0
 * @category schema
 */
export const Megabytes = Schema.NonNegativeInt.annotations({
  identifier: "Megabytes",
  description: "a whole number of megabytes (MiB, 2^20 bytes)"
})

/**
 * A size in bytes.
 *
 * @since 0.1.0
 * @category schema
 */
export const ByteCount = Schema.NonNegativeInt.annotations({
  identifier: "ByteCount",
  description: "a whole number of bytes"
})

/**
 * The entries of the Kindling installation a worker starts, by what it starts them for. A worker runs nothing
 * else: a command naming another module would run whatever file or package it names, with the worker's rights,
 * and (a module that only has a default export) exit 0 as if it had done its work.
 *
 * - `@kindling/driver/main`: a cluster-mode driver, `<workerUrl> <artifact> <masterUrl> <settings JSON> [args…]`.
 * - `@kindling/worker/DriverWrapper`: a plain function driver, `<workerUrl> <appPath> [args…]`: it calls the
 *   module's default export with the arguments.
 * - `@kindling/executor/main`: an executor, with the options the driver's executor command gives it.
 *
 * @since 0.1.0
 * @category constants
 */
export const mainModules = {
  driver: ["@kindling/driver/main", "@kindling/worker/DriverWrapper"],
  executor: ["@kindling/executor/main"]
} as const

/**
 * Why a worker will not run `command` for a driver or an executor, or undefined when its `mainModule` is one of
 * that role's entries (`mainModules`).
 *
 * @since 0.1.0
 * @category validation
 */
export const refusedModule = (role: keyof typeof mainModules, command: Command): string | undefined => {
  const allowed: ReadonlyArray<string> = mainModules[role]
  if (allowed.includes(command.mainModule)) return undefined
  const named = command.mainModule.length > 200 ? `${command.mainModule.slice(0, 200)}…` : command.mainModule
  const what = role === "executor" ? "an executor" : "a driver"
  return `mainModule ${JSON.stringify(named)} is not ${what} entry of the Kindling installation; ` +
    `a worker starts ${what} only with ${allowed.join(" or ")}`
}

/**
 * How a worker starts a driver or an executor: `node` on `mainModule`, which must be one of the installation's
 * entries for that role (`mainModules`), with `arguments` after substituting placeholders. For drivers:
 * `{{WORKER_URL}}` (the worker's endpoint URL, which the driver watches) and `{{USER_JAR}}` (the local path the
 * worker fetched `appUrl` to). For executors: `{{WORKER_URL}}`, `{{EXECUTOR_ID}}`, `{{HOSTNAME}}` (the
 * worker's host), `{{CORES}}` and `{{APP_ID}}`. Spark's `mainClass` is `mainModule` and its `javaOpts` are
 * `nodeOptions`; class and library paths have no Node counterpart.
 *
 * @since 0.1.0
 * @category models
 */
export class Command extends Schema.Class<Command>("Command")({
  mainModule: Schema.String.annotations({
    description: "@kindling/driver/main or @kindling/worker/DriverWrapper for a driver, @kindling/executor/main " +
      "for an executor; anything else is refused"
  }),
  arguments: Schema.Array(Schema.String).annotations({
    description: "placeholders {{…}} are substituted by the worker (see Command)"
  }),
  environment: Schema.Record({ key: Schema.String, value: Schema.String }).annotations({
    description: "added to the worker's own environment"
  }),
  nodeOptions: Schema.Array(Schema.String).annotations({ description: "options for node, before the module" })
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
  mem: Megabytes,
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
  memoryPerExecutorMB: Megabytes,
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
