/**
 * `kindling worker kindling://host:port[,host2:port2]`: starts a worker, registers it with the masters and
 * runs it until the process is stopped or the worker must exit.
 *
 * @since 0.1.0
 */
import { NodeFileSystem } from "@effect/platform-node"
import { ValueType } from "@kindling/conf"
import { NodeLoader } from "@kindling/conf/node"
import { KernelConf } from "@kindling/kernel"
import { Ids, MasterUrl, ProtocolConf, RpcEnv } from "@kindling/protocol"
import { NodeTransport } from "@kindling/protocol/node"
import { ProcessLauncher, Runners, Worker, WorkerConf } from "@kindling/worker"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Settings from "./Settings.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Args {
  readonly master: string
  readonly cores: Option.Option<number>
  readonly memory: Option.Option<string>
  readonly workDir: Option.Option<string>
  readonly host: Option.Option<string>
  readonly port: number
  readonly webuiPort: Option.Option<number>
  readonly propertiesFile: Option.Option<string>
  readonly conf: ReadonlyArray<string>
}

// Spark's defaults: every core of the host, and its RAM less 1 GiB (but at least 1 GiB).
const defaultCores = () => Os.availableParallelism()
const defaultMemory = () => Math.max(Math.floor(Os.totalmem() / (1024 * 1024)) - 1024, 1024)

/**
 * The exit code the worker asked for, if it asked.
 *
 * @since 0.1.0
 * @category running
 */
export const run = (args: Args): Effect.Effect<number, Settings.Failure> =>
  Effect.gen(function*() {
    const conf = yield* Settings.load({
      propertiesFile: args.propertiesFile,
      conf: args.conf,
      flags: { [WorkerConf.keys.uiPort.name]: Option.getOrUndefined(Option.map(args.webuiPort, String)) }
    })
    const masters = yield* MasterUrl.parse(args.master)
    const memory = Option.isSome(args.memory)
      ? yield* Either.mapLeft(ValueType.memory.decode(args.memory.value), (reason) =>
        new Settings.UsageError({ message: `--memory: ${reason}` }))
      : defaultMemory()
    const cores = Option.getOrElse(args.cores, defaultCores)
    if (!Number.isInteger(cores) || cores < 1) {
      return yield* new Settings.UsageError({ message: `--cores must be a whole number ≥ 1, not ${cores}` })
    }
    const host = Option.getOrElse(args.host, () =>
      Os.hostname())
    const workDir = Path.resolve(Option.getOrElse(args.workDir, () => Path.join(NodeLoader.home(), "work")))
    const rpc = RpcEnv.layer({ ...(yield* ProtocolConf.rpcOptions(conf)), host, port: args.port }).pipe(
      Layer.provide(NodeTransport.layer)
    )
    const exitCode = yield* Effect.makeLatch(false)
    let code = 0
    yield* Effect.gen(function*() {
      const address = (yield* RpcEnv.RpcEnv).address!
      const workerId = Ids.makeWorkerId(new Date(yield* Clock.currentTimeMillis), address.host, address.port)
      yield* Worker.make({
        workerId,
        cores,
        memory,
        masters,
        webUiUrl: `http://${host}:${conf.get(WorkerConf.keys.uiPort)}`,
        workDir,
        workerTimeoutMillis: conf.get(ProtocolConf.keys.workerTimeout),
        registration: {
          initialIntervalMillis: conf.get(WorkerConf.keys.registerInitialInterval),
          initialAttempts: conf.get(WorkerConf.keys.registerInitialAttempts),
          prolongedIntervalMillis: conf.get(WorkerConf.keys.registerProlongedInterval),
          maxAttempts: conf.get(WorkerConf.keys.registerMaxAttempts)
        },
        cleanup: {
          enabled: conf.get(WorkerConf.keys.cleanupEnabled),
          intervalMillis: conf.get(WorkerConf.keys.cleanupInterval),
          appDataTtlMillis: conf.get(WorkerConf.keys.cleanupAppDataTtl)
        },
        retainedExecutors: conf.get(WorkerConf.keys.uiRetainedExecutors),
        retainedDrivers: conf.get(WorkerConf.keys.uiRetainedDrivers),
        executorStateSyncMaxAttempts: conf.get(WorkerConf.keys.executorStateSyncMaxAttempts),
        askTimeoutMillis: conf.get(ProtocolConf.keys.askTimeout),
        validateState: conf.get(KernelConf.keys.validateState),
        onExit: (exit: number, reason: string) =>
          Effect.logError(`Worker exiting with code ${exit}: ${reason}`).pipe(
            Effect.zipRight(Effect.sync(() => {
              code = exit
            })),
            Effect.zipRight(exitCode.open)
          )
      })
      yield* exitCode.await
    }).pipe(
      Effect.scoped,
      Effect.provide(rpc),
      Effect.provide(
        Runners.layerProcesses({
          workDir,
          // Executors' scratch dirs: per worker process, under the machine's temporary directory (Spark's local dirs).
          localDir: Path.join(Os.tmpdir(), `kindling-worker-${process.pid}`),
          driverTerminateTimeoutMillis: conf.get(WorkerConf.keys.driverTerminateTimeout),
          executorTerminateTimeoutMillis: conf.get(WorkerConf.keys.executorTerminateTimeout),
          superviseInitialBackoffMillis: conf.get(WorkerConf.keys.superviseInitialBackoff)
        }).pipe(Layer.provide(ProcessLauncher.layerNode), Layer.provide(NodeFileSystem.layer))
      )
    )
    return code
  })
