/**
 * `kindling submit`, `kindling status` and `kindling kill`: the submission client. A master is reached on its RPC
 * port with the SDK's `MasterClient`, or on its REST port with the SDK's `RestClient` — given as
 * `http://host:port`, or as a `kindling://` URL whose port turns out to be a REST server — and submitting,
 * following, querying and killing a driver (`kindling submit --status/--kill`, as with `spark-submit`) work the
 * same over either.
 *
 * @since 0.1.0
 */
import type { Conf } from "@kindling/conf"
import { DriverConf, MasterSpec } from "@kindling/driver"
import { TlsConf } from "@kindling/kernel"
import { TrustedFetch } from "@kindling/kernel/web"
import {
  Descriptions,
  Endpoints,
  Errors,
  Ids,
  MasterUrl,
  QueryMessages,
  RestClient,
  RestMessages,
  type RpcAddress,
  States,
  SubmissionMessages
} from "@kindling/protocol"
import { MasterClient, ProtocolConf, RpcEnv } from "@kindling/rpc"
import { NodeArtifacts, NodeTransport } from "@kindling/rpc/node"
import * as Console from "effect/Console"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Url from "node:url"
import packageJson from "../package.json" with { type: "json" }
import * as AppCheck from "./AppCheck.js"
import type * as AppRunner from "./AppRunner.js"
import type * as ClusterDriver from "./ClusterDriver.js"
import { loaded } from "./internal/loaded.js"
import * as Settings from "./Settings.js"

/**
 * The module a worker runs for a driver: it loads the app artifact and runs its default export.
 *
 * @since 0.1.0
 * @category constants
 */
export const driverWrapper = Descriptions.mainModules.driver[1]

/**
 * The master refused what it was asked; its message says why.
 *
 * @since 0.1.0
 * @category errors
 */
export class SubmissionRefused extends Data.TaggedError("SubmissionRefused")<{ readonly message: string }> {}

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
  /** Type-check the app first (`AppCheck`), and submit it only if it has no error. */
  readonly check: boolean
  /** Print this driver's status instead of submitting. */
  readonly status: Option.Option<string>
  /** Kill this driver instead of submitting. */
  readonly kill: Option.Option<string>
  readonly app: Option.Option<string>
  readonly args: ReadonlyArray<string>
}

/**
 * A driver's status as `kindling status` prints it.
 *
 * @since 0.1.0
 * @category models
 */
export interface DriverStatus {
  readonly driverId: string
  readonly state: States.DriverState | null
  readonly workerId: string | null
  readonly workerHostPort: string | null
  readonly exception: { readonly name: string; readonly message: string } | null
}

// What the commands ask a master, over whichever port it was reached on.
interface Gateway {
  /** Submits the app as a cluster deploy mode driver; answers its id. */
  readonly submit: (app: string, args: ReadonlyArray<string>) => Effect.Effect<string, Settings.Failure>
  readonly status: (driverId: string) => Effect.Effect<DriverStatus, Settings.Failure>
  /** Answers the master's message; a refused kill fails with it. */
  readonly kill: (driverId: string) => Effect.Effect<string, Settings.Failure>
}

const loadConf = (common: Common, flags: Readonly<Record<string, string | undefined>>) =>
  Settings.load({
    propertiesFile: common.propertiesFile,
    conf: common.conf,
    flags: { [DriverConf.keys.master.name]: Option.getOrUndefined(common.master), ...flags }
  })

const isRestUrl = (master: string) => /^https?:\/\//i.test(master)

const usage = (error: MasterUrl.InvalidMasterUrl) => new Settings.UsageError({ message: error.message })

// The RPC network of one command: it dials out, and listens on `listen.host` only when it must serve something.
const rpcNetwork = (conf: Conf.Conf<Settings.Keys>, listen?: { readonly host: string }) =>
  Effect.map(
    ProtocolConf.rpcOptions(conf),
    (options) =>
      RpcEnv.layer({ ...options, ...(listen && { host: listen.host, port: 0 }) }).pipe(
        Layer.provide(NodeTransport.layerFrom(conf))
      )
  )

// Whether `master` names REST ports: an http(s) URL does; a kindling:// URL does when its masters, all asked at once,
// first answer as REST servers rather than as RPC nodes (a master that answers neither way is left out, so a dead
// one costs one lookup timeout at most). The RPC tries are quiet: being an HTTP server is an answer.
const restMasters = (conf: Conf.Conf<Settings.Keys>, master: string) =>
  Effect.gen(function*() {
    if (isRestUrl(master)) return Option.some(yield* Effect.mapError(RestClient.masters(master), usage))
    const addresses = MasterUrl.parse(master)
    if (Either.isLeft(addresses)) return Option.none()
    const bases = yield* Effect.mapError(RestClient.masters(master), usage)
    const rest = yield* RestClient.make(bases, {
      ...(yield* restOptions(conf)),
      timeout: conf.get(ProtocolConf.keys.lookupTimeout)
    })
    const env = yield* RpcEnv.RpcEnv
    const answersAs = (address: RpcAddress.RpcAddress, base: string) =>
      env.ask(Endpoints.ref(address, Endpoints.master), new SubmissionMessages.RequestReadyz()).pipe(
        Effect.as("rpc" as const),
        Effect.catchAll((error) =>
          error._tag === "ConnectFailed" || error._tag === "ConnectionLost"
            ? Effect.as(rest.send(base, "GET", "readyz"), "rest" as const)
            : Effect.succeed("rpc" as const)
        )
      )
    const kind = yield* MasterUrl.firstAccepted(
      addresses.right.map((address, i) => ({ address, base: bases[i]! })),
      ({ address, base }) => answersAs(address, base),
      Either.isRight,
      () => Effect.succeed("rpc" as const)
    )
    return kind === "rest" ? Option.some(bases) : Option.none()
  }).pipe(
    Effect.provide(Layer.unwrapEffect(rpcNetwork(conf))),
    Logger.withMinimumLogLevel(LogLevel.None)
  )

const restOptions = (conf: Conf.Conf<Settings.Keys>) =>
  Either.map(TlsConf.trustedCertificates(conf), (trusted) => ({
    secret: conf.get(ProtocolConf.keys.authenticateSecret),
    timeout: conf.get(ProtocolConf.keys.askTimeout),
    fetch: TrustedFetch.make(trusted)
  }))

// The gateway of one command to `master`. Over RPC this node dials out and accepts nothing, unless it must serve
// something (an artifact to upload), in which case it listens on `listen.host`.
const withGateway = <A>(
  conf: Conf.Conf<Settings.Keys>,
  master: string,
  use: (gateway: Gateway) => Effect.Effect<A, Settings.Failure>,
  listen?: { readonly host: string }
) =>
  Effect.gen(function*() {
    const rest = yield* restMasters(conf, master)
    if (Option.isSome(rest)) {
      return yield* use(restGateway(conf, yield* RestClient.make(rest.value, yield* restOptions(conf))))
    }
    const network = yield* rpcNetwork(conf, listen)
    return yield* Effect.gen(function*() {
      const client = yield* MasterClient.make(master, { timeout: conf.get(ProtocolConf.keys.askTimeout) })
      return yield* use(rpcGateway(conf, master, client, yield* RpcEnv.RpcEnv)).pipe(
        Effect.catchIf(
          (error): error is Errors.MasterNotAlive => error._tag === "MasterNotAlive",
          (error) => new SubmissionRefused({ message: notAliveAdvice(master, client.masters.length, error) })
        )
      )
    }).pipe(Effect.scoped, Effect.provide(network))
  })

// A refusal from a master that does not lead, said plainly: what the operator can do about it comes first.
const notAliveAdvice = (master: string, masters: number, error: Errors.MasterNotAlive) => {
  if (error.state !== "STANDBY") {
    return `The master is ${error.state}: it takes over as leader once the workers and apps it knew have answered; ` +
      `try again in a moment. (${error.message})`
  }
  return masters === 1
    ? `The master at ${master} is a standby, which accepts no submissions, kills or queries until it is elected ` +
      `leader. Give every master of the cluster (kindling://host1:7077,host2:7077) and the leader is found. ` +
      `(${error.message})`
    : `No master of ${master} leads right now, every one that answered is a standby (is ZooKeeper reachable?); ` +
      `try again once one is elected. (${error.message})`
}

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

// Over RPC a worker runs the driver. An app file here is bundled into an artifact and uploaded to the master
// (which pulls it from this process's data plane and serves it to the worker that runs the driver), and run
// with the submission's configuration (`ClusterDriver`); an http(s) URL is run as it is by
// `@kindling/worker/DriverWrapper`, as a plain driver function.
const rpcGateway = (
  conf: Conf.Conf<Settings.Keys>,
  master: string,
  client: MasterClient.MasterClient,
  rpc: RpcEnv.RpcEnv
): Gateway => {
  const describe = (app: string, args: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      if (/^https?:\/\//.test(app)) {
        const appName = conf.get(DriverConf.keys.appName)
        return new Descriptions.DriverDescription({
          appUrl: app,
          mem: conf.get(DriverConf.keys.driverMemory),
          cores: conf.get(DriverConf.keys.driverCores),
          supervise: conf.get(DriverConf.keys.driverSupervise),
          command: new Descriptions.Command({
            mainModule: driverWrapper,
            arguments: ["{{WORKER_URL}}", "{{USER_JAR}}", ...args],
            environment: appName === undefined ? {} : { KINDLING_APP_NAME: appName },
            nodeOptions: []
          }),
          resourceReqs: []
        })
      }
      const clusterDriver = yield* Effect.promise(loadClusterDriver)
      const { artifact, name } = yield* clusterDriver.bundle(Url.fileURLToPath(yield* appUrl(app)))
      const uploaded = yield* upload(client, artifact, name)
      return clusterDriver.description({ appUrl: uploaded, master, conf, args })
    }).pipe(Effect.scoped, Effect.provideService(RpcEnv.RpcEnv, rpc))
  return {
    submit: (app, args) =>
      Effect.gen(function*() {
        const response = yield* client.submitDriver(yield* describe(app, args))
        if (!response.success || Option.isNone(response.driverId)) {
          return yield* new SubmissionRefused({ message: response.message })
        }
        yield* Effect.logInfo(response.message)
        return response.driverId.value
      }),
    status: (driverId) =>
      client.driverStatus(Ids.DriverId.make(driverId)).pipe(Effect.map((status) => ({
        driverId,
        state: Option.getOrNull(status.state),
        workerId: Option.getOrNull(status.workerId),
        workerHostPort: Option.getOrNull(status.workerHostPort),
        exception: Option.getOrNull(Option.map(status.exception, (e) => ({ name: e.name, message: e.message })))
      }))),
    kill: (driverId) =>
      client.killDriver(Ids.DriverId.make(driverId)).pipe(
        Effect.flatMap((response) =>
          response.success ? Effect.succeed(response.message) : new SubmissionRefused({ message: response.message })
        )
      )
  }
}

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
    yield* Effect.logInfo(`Uploaded ${name} (${digest.size} bytes, ${response.url})`)
    return response.url
  }).pipe(Effect.scoped)

// The exception a status answer carries in its message, as the REST server writes it.
const clusterException = (message: string | undefined) => {
  const prefix = "Exception from the cluster:\n"
  if (message === undefined || !message.startsWith(prefix)) return null
  const text = message.slice(prefix.length)
  const colon = text.indexOf(": ")
  return colon < 0
    ? { name: "Exception", message: text }
    : { name: text.slice(0, colon), message: text.slice(colon + 2) }
}

// Over REST the master's REST server builds the driver (`RestSubmissions`): the app goes as a file: URL of its
// path, which must be readable on the master's host, and the configuration as properties.
const restGateway = (conf: Conf.Conf<Settings.Keys>, client: RestClient.RestClient): Gateway => ({
  submit: (app, args) =>
    Effect.gen(function*() {
      const clusterDriver = yield* Effect.promise(loadClusterDriver)
      const response = yield* client.create(RestMessages.CreateSubmissionRequest.make({
        appResource: /^[a-z][a-z0-9+.-]*:/i.test(app) ? app : Url.pathToFileURL(Path.resolve(app)).href,
        appArgs: args,
        clientSparkVersion: packageJson.version,
        environmentVariables: {},
        sparkProperties: clusterDriver.settings(conf)
      }))
      const message = response.message ?? ""
      if (!response.success || response.submissionId === undefined) return yield* new SubmissionRefused({ message })
      yield* Effect.logInfo(message)
      return response.submissionId
    }),
  status: (driverId) =>
    client.status(driverId).pipe(Effect.flatMap((response): Effect.Effect<DriverStatus, Settings.Failure> => {
      if (!response.success) {
        return response.message === undefined
          ? Effect.fail(new Errors.DriverNotFound({ driverId: Ids.DriverId.make(driverId) }))
          : Effect.fail(new SubmissionRefused({ message: response.message }))
      }
      return Effect.succeed({
        driverId,
        state: response.driverState ?? null,
        workerId: response.workerId ?? null,
        workerHostPort: response.workerHostPort ?? null,
        exception: clusterException(response.message)
      })
    })),
  kill: (driverId) =>
    client.kill(driverId).pipe(Effect.flatMap((response) => {
      const message = response.message ?? ""
      return response.success ? Effect.succeed(message) : new SubmissionRefused({ message })
    }))
})

const printStatus = (gateway: Gateway, driverId: string) =>
  gateway.status(driverId).pipe(Effect.flatMap((status) => Console.log(JSON.stringify(status))), Effect.as(0))

const killDriver = (gateway: Gateway, driverId: string) =>
  gateway.kill(driverId).pipe(Effect.flatMap((message) => Console.log(message)), Effect.as(0))

const requireMaster = (conf: Conf.Conf<Settings.Keys>) => {
  const master = conf.get(DriverConf.keys.master)
  return master === undefined
    ? Effect.fail(new Settings.UsageError({ message: "No master given: use --master kindling://host:port" }))
    : Effect.succeed(master)
}

/**
 * Submits the app as a driver; with `--wait`, follows it to its end. The exit code is 0 only when it is
 * submitted (or, waiting, when it FINISHED). With `--status ID` or `--kill ID` it does that instead, as
 * `kindling status` and `kindling kill` do.
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
    const request = Option.orElse(
      Option.map(args.status, (driverId) => ({ driverId, run: printStatus })),
      () => Option.map(args.kill, (driverId) => ({ driverId, run: killDriver }))
    )
    if (Option.isSome(request)) {
      if (Option.isSome(args.app) || (Option.isSome(args.status) && Option.isSome(args.kill))) {
        return yield* new Settings.UsageError({ message: "--status and --kill take a driver id, and no app" })
      }
      const { driverId, run } = request.value
      return yield* withGateway(conf, yield* requireMaster(conf), (gateway) => run(gateway, driverId))
    }
    if (Option.isNone(args.app)) {
      return yield* new Settings.UsageError({ message: "Give the app to submit (or --status/--kill and a driver id)" })
    }
    const app = args.app.value
    if (args.check) {
      if (/^[a-z][a-z0-9+.-]*:\/\//i.test(app)) {
        return yield* new Settings.UsageError({ message: `--check type-checks an app file here, not ${app}` })
      }
      yield* AppCheck.check(app)
    }
    // Without --master an app runs embedded, on a thread per core, as Spark's default.
    const master = conf.get(DriverConf.keys.master) ?? "local[*]"
    // A REST server runs drivers on the cluster only.
    if (isRestUrl(master)) {
      if (Option.getOrUndefined(args.deployMode) === "client" || conf.get(DriverConf.keys.deployMode) === "client") {
        const explicit = conf.entries.some((entry) =>
          entry.key === DriverConf.keys.deployMode.name && entry.source !== "default"
        )
        if (explicit) {
          return yield* new Settings.UsageError({
            message: `${master} is a REST server, which runs drivers on the cluster: use --deploy-mode cluster`
          })
        }
      }
      return yield* submitToCluster(args, app, conf, master)
    }
    const spec = yield* Effect.mapError(
      MasterSpec.parse(master),
      (error) => new Settings.UsageError({ message: error.message })
    )
    // Spark's client deploy mode (the default) runs the driver here; cluster deploy mode asks the master to.
    if (spec._tag === "Cluster" && conf.get(DriverConf.keys.deployMode) === "cluster") {
      return yield* submitToCluster(args, app, conf, spec.url)
    }
    // The driver runs here: the app must be a file here, which is bundled before anything starts.
    const path = Path.resolve(app)
    if (!Fs.existsSync(path)) {
      return yield* new Settings.UsageError({ message: `The app ${app} does not exist (looked for ${path})` })
    }
    return yield* loaded(
      (): Promise<typeof AppRunner> => import("./AppRunner.js"),
      (runner) => runner.run({ app: path, args: args.args, spec, conf })
    )
  })

// The app bundler and what a cluster-mode driver is described by: loaded by a submission, not by status or kill.
const loadClusterDriver = (): Promise<typeof ClusterDriver> => import("./ClusterDriver.js")

const submitToCluster = (args: SubmitArgs, app: string, conf: Conf.Conf<Settings.Keys>, master: string) =>
  withGateway(conf, master, (gateway) =>
    Effect.gen(function*() {
      const driverId = yield* gateway.submit(app, args.args)
      yield* Console.log(driverId)
      if (!args.wait) return 0
      // Follow the driver until it ends, as Spark's client does with waitAppCompletion.
      for (;;) {
        yield* Effect.sleep(1000)
        const status = yield* gateway.status(driverId)
        const state = status.state ?? "UNKNOWN"
        if (States.isDriverFinished(state)) {
          yield* Console.log(`${driverId} ${state}`)
          // Why it failed, as its worker reported it (the end of the driver's stderr).
          if (status.exception !== null) {
            yield* Console.error(`kindling: ${driverId} ${state}: ${status.exception.message}`)
          }
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
  Effect.gen(function*() {
    const conf = yield* loadConf(args, {})
    return yield* withGateway(conf, yield* requireMaster(conf), (gateway) => printStatus(gateway, args.driverId))
  })

// The masters of --master, for a command that reaches them over RPC (a REST URL will not do).
const rpcMasters = (conf: Conf.Conf<Settings.Keys>, what: string) =>
  Effect.gen(function*() {
    const url = yield* requireMaster(conf)
    if (isRestUrl(url)) {
      return yield* new Settings.UsageError({ message: `${what} over RPC: give the masters' kindling:// URL` })
    }
    return yield* Effect.mapError(MasterUrl.parse(url), usage)
  })

/**
 * Each master's recovery state (ALIVE, STANDBY, RECOVERING, COMPLETING_RECOVERY) as JSON, one entry per master of
 * the URL, in its order: `kindling status` without a driver id. Exits 1 when no master answered.
 *
 * @since 0.1.0
 * @category running
 */
export const masters = (args: Common): Effect.Effect<number, Settings.Failure> =>
  Effect.gen(function*() {
    const conf = yield* loadConf(args, {})
    const addresses = yield* rpcMasters(conf, "Masters' states are read")
    const timeout = conf.get(ProtocolConf.keys.askTimeout)
    const states = yield* Effect.gen(function*() {
      const rpc = yield* RpcEnv.RpcEnv
      return yield* Effect.forEach(addresses, (address) =>
        rpc.ask(Endpoints.ref(address, Endpoints.master), new QueryMessages.RequestMasterState(), { timeout }).pipe(
          Effect.map((state) => ({
            master: address.url,
            status: state.status,
            workers: state.workers.filter((worker) =>
              worker.state === "ALIVE"
            ).length,
            activeApps: state.activeApps.length,
            activeDrivers: state.activeDrivers.length
          })),
          Effect.catchAll((error) => Effect.succeed({ master: address.url, error: error.message }))
        ), { concurrency: "unbounded" })
    }).pipe(Effect.provide(yield* rpcNetwork(conf)))
    yield* Console.log(JSON.stringify(states, null, 2))
    const answered = states.some((state) =>
      "status" in state
    )
    return answered ? 0 : 1
  })

/**
 * Decommissions workers, each named by its id (`worker-…`) or its host (every worker there): asks each master of
 * the URL — the leader acts, a standby answers 0 — and prints, per master, how many it decommissioned. Exits 1
 * when none was.
 *
 * @since 0.1.0
 * @category running
 */
export const decommission = (
  args: Common & { readonly workers: ReadonlyArray<string> }
): Effect.Effect<number, Settings.Failure> =>
  Effect.gen(function*() {
    const conf = yield* loadConf(args, {})
    const addresses = yield* rpcMasters(conf, "Workers are decommissioned")
    const workerIds = args.workers.filter((name) => name.startsWith("worker-")).map((id) => Ids.WorkerId.make(id))
    const hostnames = args.workers.filter((name) => !name.startsWith("worker-"))
    const timeout = conf.get(ProtocolConf.keys.askTimeout)
    const answers = yield* Effect.gen(function*() {
      const rpc = yield* RpcEnv.RpcEnv
      return yield* Effect.forEach(addresses, (address) => {
        const master = Endpoints.ref(address, Endpoints.master)
        return Effect.zipWith(
          workerIds.length === 0
            ? Effect.succeed(0)
            : rpc.ask(master, new QueryMessages.DecommissionWorkers({ workerIds }), { timeout }),
          hostnames.length === 0
            ? Effect.succeed(0)
            : rpc.ask(master, new QueryMessages.DecommissionWorkersOnHosts({ hostnames }), { timeout }),
          (byId, byHost) => ({ master: address.url, decommissioned: byId + byHost })
        ).pipe(Effect.catchAll((error) => Effect.succeed({ master: address.url, error: error.message })))
      }, { concurrency: "unbounded" })
    }).pipe(Effect.provide(yield* rpcNetwork(conf)))
    yield* Console.log(JSON.stringify(answers, null, 2))
    const total = answers.reduce((sum, answer) => sum + ("decommissioned" in answer ? answer.decommissioned : 0), 0)
    if (total === 0) yield* Console.error(`No live worker matched ${args.workers.join(", ")}`)
    return total > 0 ? 0 : 1
  })

/**
 * Asks the master to kill a driver.
 *
 * @since 0.1.0
 * @category running
 */
export const kill = (args: Common & { readonly driverId: string }): Effect.Effect<number, Settings.Failure> =>
  Effect.gen(function*() {
    const conf = yield* loadConf(args, {})
    return yield* withGateway(conf, yield* requireMaster(conf), (gateway) => killDriver(gateway, args.driverId))
  })
