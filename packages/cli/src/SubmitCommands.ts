/**
 * `kindling submit`, `kindling status` and `kindling kill`: the submission client, on the SDK's MasterClient.
 *
 * @since 0.1.0
 */
import type { Conf } from "@kindling/conf"
import { DriverConf, MasterSpec } from "@kindling/driver"
import { TemporaryDirectory } from "@kindling/kernel"
import {
  Descriptions,
  Ids,
  MasterClient,
  ProtocolConf,
  RpcEnv,
  States,
  type SubmissionMessages
} from "@kindling/protocol"
import { NodeArtifacts, NodeTransport } from "@kindling/protocol/node"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Url from "node:url"
import * as AppRunner from "./AppRunner.js"
import * as Artifact from "./Artifact.js"
import * as Settings from "./Settings.js"

/**
 * The module a worker runs for a driver: it loads the app artifact and runs its default export.
 *
 * @since 0.1.0
 * @category constants
 */
export const driverWrapper = "@kindling/worker/DriverWrapper"

/**
 * @since 0.1.0
 * @category models
 */
export interface Common {
  readonly master: Option.Option<string>
  readonly propertiesFile: Option.Option<string>
  readonly conf: ReadonlyArray<string>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface SubmitArgs extends Common {
  readonly deployMode: Option.Option<string>
  readonly executorCores: Option.Option<number>
  readonly executorMemory: Option.Option<string>
  readonly totalExecutorCores: Option.Option<number>
  readonly name: Option.Option<string>
  readonly driverCores: Option.Option<number>
  readonly driverMemory: Option.Option<string>
  readonly supervise: boolean
  readonly wait: boolean
  readonly app: string
  readonly args: ReadonlyArray<string>
}

const loadConf = (common: Common, flags: Readonly<Record<string, string | undefined>>) =>
  Settings.load({
    propertiesFile: common.propertiesFile,
    conf: common.conf,
    flags: { [DriverConf.keys.master.name]: Option.getOrUndefined(common.master), ...flags }
  })

// The client of one command: a client-only node (it dials out, accepts nothing) and the configured masters —
// unless it must serve something (an artifact to upload), in which case it listens on `host`.
const withClient = <A>(
  conf: Conf.Conf<Settings.Keys>,
  master: string,
  use: (client: MasterClient.MasterClient) => Effect.Effect<A, Settings.Failure, RpcEnv.RpcEnv>,
  listen?: { readonly host: string }
) =>
  Effect.gen(function*() {
    const options = { ...(yield* ProtocolConf.rpcOptions(conf)), ...(listen && { host: listen.host, port: 0 }) }
    const rpc = RpcEnv.layer(options).pipe(Layer.provide(NodeTransport.layer))
    return yield* Effect.gen(function*() {
      const client = yield* MasterClient.make(master, { timeout: conf.get(ProtocolConf.keys.askTimeout) })
      return yield* use(client)
    }).pipe(Effect.scoped, Effect.provide(rpc))
  })

// `status` and `kill` need a cluster's master.
const withMaster = <A>(
  common: Common,
  use: (client: MasterClient.MasterClient) => Effect.Effect<A, Settings.Failure>
) =>
  Effect.gen(function*() {
    const conf = yield* loadConf(common, {})
    const master = conf.get(DriverConf.keys.master)
    if (master === undefined) {
      return yield* new Settings.UsageError({ message: "No master given: use --master kindling://host:port" })
    }
    return yield* withClient(conf, master, use)
  })

// The app of a cluster submission, as a URL: a path (which must exist) or a file:// URL is bundled and uploaded,
// an http(s) URL is passed on as it is.
const appUrl = (app: string): Effect.Effect<string, Settings.UsageError> => {
  if (/^(https?|file):\/\//.test(app)) return Effect.succeed(app)
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(app)) {
    return Effect.fail(
      new Settings.UsageError({ message: `Unsupported scheme in ${app}: use a path, file://, http:// or https://` })
    )
  }
  const path = Path.resolve(app)
  return Fs.existsSync(path)
    ? Effect.succeed(Url.pathToFileURL(path).href)
    : Effect.fail(new Settings.UsageError({ message: `The app ${app} does not exist (looked for ${path})` }))
}

const statusJson = (driverId: string, status: SubmissionMessages.DriverStatusResponse) =>
  JSON.stringify({
    driverId,
    state: Option.getOrNull(status.state),
    workerId: Option.getOrNull(status.workerId),
    workerHostPort: Option.getOrNull(status.workerHostPort),
    exception: Option.getOrNull(Option.map(status.exception, (e) => ({ name: e.name, message: e.message })))
  })

/**
 * Submits the app as a driver; with `--wait`, follows it to its end. The exit code is 0 only when it is
 * submitted (or, waiting, when it FINISHED).
 *
 * @since 0.1.0
 * @category running
 */
export const submit = (args: SubmitArgs): Effect.Effect<number, Settings.Failure> =>
  Effect.gen(function*() {
    const conf = yield* loadConf(args, {
      [DriverConf.keys.deployMode.name]: Option.getOrUndefined(args.deployMode),
      [DriverConf.keys.executorCores.name]: Option.getOrUndefined(Option.map(args.executorCores, String)),
      [DriverConf.keys.executorMemory.name]: Option.getOrUndefined(args.executorMemory),
      [DriverConf.keys.coresMax.name]: Option.getOrUndefined(Option.map(args.totalExecutorCores, String)),
      [DriverConf.keys.appName.name]: Option.getOrUndefined(args.name),
      [DriverConf.keys.driverCores.name]: Option.getOrUndefined(Option.map(args.driverCores, String)),
      [DriverConf.keys.driverMemory.name]: Option.getOrUndefined(args.driverMemory),
      [DriverConf.keys.driverSupervise.name]: args.supervise ? "true" : undefined
    })
    // Without --master an app runs embedded, on a thread per core, as Spark's default.
    const master = conf.get(DriverConf.keys.master) ?? "local[*]"
    const spec = yield* Effect.mapError(
      MasterSpec.parse(master),
      (error) => new Settings.UsageError({ message: error.message })
    )
    // Spark's client deploy mode (the default) runs the driver here; cluster deploy mode asks the master to.
    if (spec._tag === "Cluster" && conf.get(DriverConf.keys.deployMode) === "cluster") {
      return yield* submitToCluster(args, conf, spec.url)
    }
    // The driver runs here: the app must be a file here, which is bundled before anything starts.
    const path = Path.resolve(args.app)
    if (!Fs.existsSync(path)) {
      return yield* new Settings.UsageError({ message: `The app ${args.app} does not exist (looked for ${path})` })
    }
    return yield* AppRunner.run({ app: path, args: args.args, spec, conf })
  })

// In cluster deploy mode a worker runs the driver. An app file here is bundled into an artifact and uploaded to
// the master (which pulls it from this process's data plane and serves it to the worker that runs the driver),
// and run with `@kindling/driver/main`, given the submission's configuration; an http(s) URL is run as it is by
// `@kindling/worker/DriverWrapper`, as a plain driver function.
const driverCommand = (
  args: SubmitArgs,
  conf: Conf.Conf<Settings.Keys>,
  master: string,
  client: MasterClient.MasterClient
) =>
  Effect.gen(function*() {
    const appName = conf.get(DriverConf.keys.appName)
    const environment: Record<string, string> = appName === undefined ? {} : { KINDLING_APP_NAME: appName }
    if (/^https?:\/\//.test(args.app)) {
      return {
        appUrl: args.app,
        command: new Descriptions.Command({
          mainModule: driverWrapper,
          arguments: ["{{WORKER_URL}}", "{{USER_JAR}}", ...args.args],
          environment,
          nodeOptions: []
        })
      }
    }
    const path = Url.fileURLToPath(yield* appUrl(args.app))
    const artifact = yield* Artifact.build(path, yield* TemporaryDirectory.make("kindling-submit-"))
    const uploaded = yield* upload(client, artifact, `${Path.parse(path).name}.mjs`)
    // The keys a driver reads, as set for this submission. Secrets are not passed on the command line: the
    // driver has them from its worker's environment.
    const settings = Object.fromEntries(
      conf.entries
        .filter((entry) => entry.source !== "default" && DriverConf.appRegistry.byName.has(entry.key))
        .filter((entry) => DriverConf.appRegistry.byName.get(entry.key)?.secret !== true)
        .map((entry) => [entry.key, entry.value])
    )
    return {
      appUrl: uploaded,
      command: new Descriptions.Command({
        mainModule: "@kindling/driver/main",
        arguments: ["{{WORKER_URL}}", "{{USER_JAR}}", master, JSON.stringify(settings), ...args.args],
        environment,
        nodeOptions: []
      })
    }
  }).pipe(Effect.scoped)

// Serves the artifact while the master pulls it; answers the URL the master serves it under.
const upload = (client: MasterClient.MasterClient, artifact: string, name: string) =>
  Effect.gen(function*() {
    const rpc = yield* RpcEnv.RpcEnv
    const digest = yield* NodeArtifacts.digestFile(artifact)
    yield* NodeArtifacts.serve(
      rpc.data,
      (sha256) => Effect.succeed(sha256 === digest.sha256 ? Option.some(artifact) : Option.none())
    )
    const response = yield* client.uploadArtifact({ name, ...digest })
    yield* Effect.logInfo(`Uploaded ${name} (${digest.size} bytes) as ${response.url}`)
    return response.url
  }).pipe(Effect.scoped)

const submitToCluster = (args: SubmitArgs, conf: Conf.Conf<Settings.Keys>, master: string) =>
  withClient(conf, master, (client) =>
    Effect.gen(function*() {
      const { appUrl: url, command } = yield* driverCommand(args, conf, master, client)
      const description = new Descriptions.DriverDescription({
        appUrl: url,
        mem: conf.get(DriverConf.keys.driverMemory),
        cores: conf.get(DriverConf.keys.driverCores),
        supervise: conf.get(DriverConf.keys.driverSupervise),
        command,
        resourceReqs: []
      })
      const response = yield* client.submitDriver(description)
      const driverId = Option.getOrThrow(response.driverId)
      yield* Effect.logInfo(response.message)
      yield* Console.log(driverId)
      if (!args.wait) return 0
      // Follow the driver until it ends, as Spark's client does with waitAppCompletion.
      for (;;) {
        yield* Effect.sleep(1000)
        const status = yield* client.driverStatus(driverId)
        const state = Option.getOrElse(status.state, (): States.DriverState => "UNKNOWN")
        if (States.isDriverFinished(state)) {
          yield* Console.log(`${driverId} ${state}`)
          return state === "FINISHED" ? 0 : 1
        }
      }
    }), { host: conf.get(DriverConf.keys.driverHost) ?? Os.hostname() })

/**
 * Prints a driver's status as JSON.
 *
 * @since 0.1.0
 * @category running
 */
export const status = (args: Common & { readonly driverId: string }): Effect.Effect<number, Settings.Failure> =>
  withMaster(args, (client) =>
    client.driverStatus(Ids.DriverId.make(args.driverId)).pipe(
      Effect.flatMap((response) => Console.log(statusJson(args.driverId, response))),
      Effect.as(0)
    ))

/**
 * Asks the master to kill a driver.
 *
 * @since 0.1.0
 * @category running
 */
export const kill = (args: Common & { readonly driverId: string }): Effect.Effect<number, Settings.Failure> =>
  withMaster(args, (client) =>
    client.killDriver(Ids.DriverId.make(args.driverId)).pipe(
      Effect.flatMap((response) => Console.log(response.message).pipe(Effect.as(response.success ? 0 : 1)))
    ))
