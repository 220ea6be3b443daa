/**
 * Runs an app in the `kindling submit` process, as Spark's client deploy mode does: in `local[N]` (the driver and
 * an executor with N task threads share the process), on `local-cluster[W,C,M]` (a master and W workers in this
 * process, executors as processes they start) or on a standalone cluster. The app is bundled into an artifact
 * first (`Artifact`), so it runs exactly as it would anywhere else, and executors import the same artifact.
 *
 * @since 0.1.0
 */
import type { Kindling } from "@kindling/app"
import type { Conf } from "@kindling/conf"
import { BoundedFiles } from "@kindling/data"
import { AppModule, Cluster, DriverConf, LocalMode, type MasterSpec } from "@kindling/driver"
import { KernelConf, TemporaryDirectory } from "@kindling/kernel"
import { MasterUrl, type RpcAddress } from "@kindling/protocol"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"
import type * as Layer from "effect/Layer"
import * as LogLevel from "effect/LogLevel"
import type * as Scope from "effect/Scope"
import * as Os from "node:os"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import * as Artifact from "./Artifact.js"
import * as ListenerConf from "./ListenerConf.js"
import * as Settings from "./Settings.js"

type Runtime = (app: AppModule.Loaded) => Layer.Layer<Kindling, Settings.Failure>

/**
 * Runs the app to its end; the exit code is 0 when its main succeeded and 1 when it failed (the failure's summary
 * is printed on stderr: `AppModule.summary`).
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
    const dir = yield* TemporaryDirectory.make("kindling-app-")
    const artifact = yield* Artifact.build(options.app, dir)
    const name = options.conf.get(DriverConf.keys.appName) ?? Path.basename(options.app)
    const runtime = yield* runtimeFor(options.spec, options.conf, name)
    const url = pathToFileURL(artifact).href
    const exit = yield* AppModule.run({ url, args: options.args, runtime })
    if (Exit.isSuccess(exit)) return 0
    // Kindling's own frames in the failure only for those who asked for the details (`--log-level debug`).
    const allFrames = LogLevel.lessThanEqual(yield* FiberRef.get(FiberRef.currentMinimumLogLevel), LogLevel.Debug)
    process.stderr.write(`${AppModule.summary(exit.cause, url, allFrames)}\n`)
    return 1
  }).pipe(Effect.scoped)

// The driver's own reads and writes of s3:// paths (and, in local mode, its tasks') go where the conf says, else
// where this process's environment does.
const objectStoreOf = (conf: Conf.Conf<Settings.Keys>) => DriverConf.objectStore(conf, process.env)

const runtimeFor = (
  spec: MasterSpec.MasterSpec,
  conf: Conf.Conf<Settings.Keys>,
  appName: string
): Effect.Effect<Runtime, Settings.Failure, Scope.Scope> =>
  Effect.gen(function*() {
    const validateState = conf.get(KernelConf.keys.validateState)
    const showProgress = conf.get(DriverConf.keys.showConsoleProgress) ?? process.stderr.isTTY === true
    switch (spec._tag) {
      case "Local": {
        const host = conf.get(DriverConf.keys.driverHost) ?? "127.0.0.1"
        const listeners = yield* ListenerConf.fromConf(conf, host, showProgress)
        const objectStore = objectStoreOf(conf)
        return (app) =>
          LocalMode.layer({
            appName,
            threads: spec.threads,
            appUrl: app.url,
            appExports: app.exports,
            driver: DriverConf.coreConfig(conf, spec.maxFailures, Math.floor(Math.random() * 2 ** 31)),
            defaultParallelism: conf.get(DriverConf.keys.defaultParallelism),
            files: BoundedFiles.make(conf.get(DriverConf.keys.fileTimeout), objectStore),
            objectStore,
            heartbeatIntervalMillis: conf.get(DriverConf.keys.executorHeartbeatInterval),
            maxDirectResultSize: conf.get(DriverConf.keys.maxDirectResultSize),
            spillThreshold: conf.get(DriverConf.keys.shuffleSpillThreshold) * 1024 * 1024,
            validateState,
            listeners
          })
      }
      case "LocalCluster": {
        // No worker could ever take an executor bigger than itself: the app would wait for ever. Spark refuses too.
        const executorMemory = conf.get(DriverConf.keys.executorMemory)
        if (executorMemory > spec.memoryPerWorker) {
          return yield* new Settings.UsageError({
            message:
              `local-cluster[${spec.workers},${spec.coresPerWorker},${spec.memoryPerWorker}] gives each worker ` +
              `${spec.memoryPerWorker} MiB, less than one executor's ${executorMemory} MiB ` +
              `(${DriverConf.keys.executorMemory.name}): lower it, or give the workers more`
          })
        }
        // A master and its workers on 127.0.0.1, as Spark's tests run them: real nodes, in this process, their
        // ports and their UIs' any free ones (as Spark's LocalSparkCluster binds them). Their code is loaded only
        // here: the other modes need none of it.
        const [MasterCommand, WorkerCommand] = yield* Effect.promise(() =>
          Promise.all([import("./MasterCommand.js"), import("./WorkerCommand.js")])
        )
        const master = yield* MasterCommand.start({
          conf,
          host: "127.0.0.1",
          port: 0,
          uiPort: 0,
          onExit: () => Effect.void
        })
        const workDir = yield* TemporaryDirectory.make("kindling-local-cluster-")
        for (let i = 0; i < spec.workers; i++) {
          yield* WorkerCommand.start({
            conf,
            masters: [master.address],
            cores: spec.coresPerWorker,
            memory: spec.memoryPerWorker,
            host: "127.0.0.1",
            port: 0,
            uiPort: 0,
            workDir: Path.join(workDir, `worker-${i}`),
            decommissionOnSignal: false,
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
  Effect.flatMap(
    ListenerConf.fromConf(conf, host, showProgress),
    (listeners) =>
      Cluster.fromConf(conf, { appName, masters, masterUrl, host, listeners, objectStore: objectStoreOf(conf) })
  )
