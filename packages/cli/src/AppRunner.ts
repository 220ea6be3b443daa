/**
 * Runs an app in the `kindling submit` process, as Spark's client deploy mode does: in `local[N]` (the driver and
 * an executor with N task threads share the process), on `local-cluster[W,C,M]` (a master and W workers in this
 * process, executors as processes they start) or on a standalone cluster. The app is bundled into an artifact
 * first (`Artifact`), so it runs exactly as it would anywhere else, and executors import the same artifact.
 *
 * @since 0.1.0
 */
import type { Conf } from "@kindling/conf"
import { App, Cluster, DriverConf, type Kindling, Local, type MasterSpec } from "@kindling/driver"
import { KernelConf } from "@kindling/kernel"
import { MasterUrl, ProtocolConf, type RpcAddress } from "@kindling/protocol"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import * as Artifact from "./Artifact.js"
import * as MasterCommand from "./MasterCommand.js"
import type * as Settings from "./Settings.js"
import * as WorkerCommand from "./WorkerCommand.js"

// The gist of an app's failure: a typed error's message, else the whole cause.
const describe = (cause: Cause.Cause<unknown>): string => {
  const failure = Cause.failureOption(cause)
  if (failure._tag === "Some") {
    const error = failure.value
    return error instanceof Error ? `${error.name}: ${error.message}` : String(error)
  }
  return Cause.pretty(cause)
}

const temporaryDirectory = (prefix: string) =>
  Effect.acquireRelease(
    Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), prefix))),
    (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
  )

interface Loaded {
  readonly appUrl: string
  readonly exports: Readonly<Record<string, unknown>>
}

type Runtime = (app: Loaded) => Layer.Layer<Kindling, Settings.Failure>

/**
 * Runs the app to its end; the exit code is 0 when its main succeeded and 1 when it failed (the failure is
 * printed on stderr).
 *
 * @since 0.1.0
 * @category running
 */
export const run = (options: {
  readonly app: string
  readonly args: ReadonlyArray<string>
  readonly spec: MasterSpec.MasterSpec
  readonly conf: Conf.Conf<Settings.Keys>
}): Effect.Effect<number, Settings.Failure> =>
  Effect.gen(function*() {
    const dir = yield* temporaryDirectory("kindling-app-")
    const artifact = yield* Artifact.build(options.app, dir)
    const appUrl = pathToFileURL(artifact).href
    const exports = yield* Effect.promise(() => import(appUrl) as Promise<Record<string, unknown>>)
    const main = exports.default
    const name = options.conf.get(DriverConf.keys.appName) ?? Path.basename(options.app)
    let exit: Exit.Exit<unknown, unknown>
    if (App.isApp(main)) {
      const runtime = yield* runtimeFor(options.spec, options.conf, name)
      exit = yield* Effect.exit(main.main(options.args).pipe(Effect.provide(runtime({ appUrl, exports }))))
    } else if (typeof main === "function") {
      // A plain driver function, as before apps had a context.
      exit = yield* Effect.exit(Effect.tryPromise({
        try: async () => {
          await main(options.args)
        },
        catch: (error) => error
      }))
    } else {
      exit = Exit.fail(`The app ${options.app} must have a default export: App.make(…) or a function (args) => …`)
    }
    if (Exit.isSuccess(exit)) return 0
    process.stderr.write(`${describe(exit.cause)}\n`)
    return 1
  }).pipe(Effect.scoped)

const runtimeFor = (
  spec: MasterSpec.MasterSpec,
  conf: Conf.Conf<Settings.Keys>,
  appName: string
): Effect.Effect<Runtime, Settings.Failure, Scope.Scope> =>
  Effect.gen(function*() {
    const validateState = conf.get(KernelConf.keys.validateState)
    const showProgress = conf.get(DriverConf.keys.showConsoleProgress) ?? process.stderr.isTTY === true
    switch (spec._tag) {
      case "Local":
        return (app) =>
          Local.layer({
            appName,
            threads: spec.threads,
            appUrl: app.appUrl,
            appExports: app.exports,
            driver: DriverConf.coreConfig(conf, spec.maxFailures),
            heartbeatIntervalMillis: conf.get(DriverConf.keys.executorHeartbeatInterval),
            validateState,
            showProgress
          })
      case "LocalCluster": {
        // A master and its workers on 127.0.0.1, as Spark's tests run them: real nodes, in this process.
        const master = yield* MasterCommand.start({ conf, host: "127.0.0.1", port: 0, onExit: () => Effect.void })
        const workDir = yield* temporaryDirectory("kindling-local-cluster-")
        for (let i = 0; i < spec.workers; i++) {
          yield* WorkerCommand.start({
            conf,
            masters: [master.address],
            cores: spec.coresPerWorker,
            memory: spec.memoryPerWorker,
            host: "127.0.0.1",
            port: 0,
            workDir: Path.join(workDir, `worker-${i}`),
            onExit: (code, reason) => Effect.logError(`Worker ${i} stopped (${code}): ${reason}`)
          })
        }
        const url = `local-cluster[${spec.workers},${spec.coresPerWorker},${spec.memoryPerWorker}]`
        return yield* onCluster(conf, appName, [master.address], url, "127.0.0.1", showProgress)
      }
      case "Cluster": {
        const masters = yield* MasterUrl.parse(spec.url)
        const host = conf.get(DriverConf.keys.driverHost) ?? Os.hostname()
        return yield* onCluster(conf, appName, masters, spec.url, host, showProgress)
      }
    }
  })

const onCluster = (
  conf: Conf.Conf<Settings.Keys>,
  appName: string,
  masters: ReadonlyArray<RpcAddress.RpcAddress>,
  masterUrl: string,
  host: string,
  showProgress: boolean
): Effect.Effect<Runtime, Settings.Failure> =>
  Effect.map(ProtocolConf.rpcOptions(conf), (rpc) => (app: Loaded) =>
    Cluster.layer({
      appName,
      masters,
      masterUrl,
      host,
      appUrl: app.appUrl,
      appExports: app.exports,
      driver: DriverConf.coreConfig(conf, conf.get(DriverConf.keys.taskMaxFailures)),
      executorMemoryMB: conf.get(DriverConf.keys.executorMemory),
      executorCores: conf.get(DriverConf.keys.executorCores),
      maxCores: conf.get(DriverConf.keys.coresMax),
      rpc,
      validateState: conf.get(KernelConf.keys.validateState),
      showProgress
    }))
