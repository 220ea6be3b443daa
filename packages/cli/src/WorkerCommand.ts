/**
 * `kindling worker kindling://host:port[,host2:port2]`: starts a worker, registers it with the masters and
 * runs it until the process is stopped or the worker must exit.
 *
 * @since 0.1.0
 */
import { type Conf, ValueType } from "@kindling/conf"
import { NodeLoader } from "@kindling/conf/node"
import * as NodeDisk from "@kindling/data/NodeDisk"
import * as ExternalShuffleService from "@kindling/executor/shuffle/ExternalShuffleService"
import { DiskOperations, KernelConf, TlsConf } from "@kindling/kernel"
import { WebServer } from "@kindling/kernel/web"
import { WorkerUi } from "@kindling/monitoring"
import { Ids, MasterUrl, type RpcAddress } from "@kindling/protocol"
import { ProtocolConf, RpcEnv } from "@kindling/rpc"
import { NodeTransport } from "@kindling/rpc/node"
import { ProcessLauncher, Runners, Worker, WorkerConf } from "@kindling/worker"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import type * as Scope from "effect/Scope"
import * as NodeFs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Settings from "./Settings.js"
import { installation } from "./ThisInstallation.js"

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
 * Starts a worker of `cores` and `memory` MiB on `host:port` in the current scope, registering with the masters;
 * `onExit` is called when it must stop (registration refused or given up).
 *
 * @since 0.1.0
 * @category running
 */
export const start = (options: {
  readonly conf: Conf.Conf<Settings.Keys>
  readonly masters: ReadonlyArray<RpcAddress.RpcAddress>
  readonly cores: number
  readonly memory: number
  readonly host: string
  readonly port: number
  /** The UI's port, over the configuration's (0: any free one, as a local cluster's workers take). */
  readonly uiPort?: number
  readonly workDir: string
  /**
   * Whether the process's `kindling.worker.decommission.signal` decommissions this worker: a worker process's does,
   * a local cluster's in-process workers leave the signal alone.
   */
  readonly decommissionOnSignal: boolean
  readonly onExit: (code: number, reason: string) => Effect.Effect<void>
}): Effect.Effect<void, Settings.Failure, Scope.Scope> =>
  Effect.gen(function*() {
    const { conf, host, workDir } = options
    // Executors' scratch dirs: per worker, under the machine's temporary directory (Spark's local dirs), made as
    // the first executor needs it and removed, with what its apps left, when the worker stops — its executors
    // and the shuffle service serving their files stop before (an app's dir is otherwise removed when the master
    // says the app finished, which a worker stopping with its app may not hear).
    const localDir = Path.join(
      Os.tmpdir(),
      `kindling-worker-${process.pid}-${options.port}-${Math.random().toString(36).slice(2, 8)}`
    )
    yield* Effect.addFinalizer(() =>
      DiskOperations.removing(localDir, () => NodeFs.rmSync(localDir, { recursive: true, force: true }))
    )
    const shuffleService = conf.get(ProtocolConf.keys.shuffleServiceEnabled)
    const signal = `SIG${conf.get(WorkerConf.keys.decommissionSignal)}`
    if (!(signal in Os.constants.signals)) {
      return yield* new Settings.UsageError({
        message: `kindling.worker.decommission.signal: ${signal} is not a signal of this system`
      })
    }
    const rpcOptions = yield* ProtocolConf.rpcOptions(conf)
    yield* Settings.checkRpcExposure(conf, "The worker", host, rpcOptions.secret)
    const rpc = RpcEnv.layer({ ...rpcOptions, host, port: options.port }).pipe(
      Layer.provide(NodeTransport.layerFrom(conf))
    )
    yield* Effect.gen(function*() {
      const address = (yield* RpcEnv.RpcEnv).address!
      const workerId = Ids.makeWorkerId(new Date(yield* Clock.currentTimeMillis), address.host, address.port)
      const ui = yield* WebServer.bind({
        name: "worker UI",
        host,
        port: options.uiPort ?? conf.get(WorkerConf.keys.uiPort),
        maxRetries: conf.get(KernelConf.keys.portMaxRetries),
        tls: yield* TlsConf.serverTls(conf, "standalone")
      })
      const worker = yield* Worker.make({
        workerId,
        cores: options.cores,
        memory: options.memory,
        masters: options.masters,
        webUiUrl: ui.url,
        workDir,
        ...WorkerConf.workerConfig(conf),
        validateState: conf.get(KernelConf.keys.validateState),
        onExit: options.onExit
      })
      if (shuffleService) {
        yield* ExternalShuffleService.serve({ disk: NodeDisk.disk, localDir })
        yield* Effect.logInfo(`Serving its executors' map outputs (kindling.shuffle.service.enabled)`)
      }
      yield* ui.serve(WorkerUi.routes(worker))
      if (options.decommissionOnSignal) yield* onSignal(signal as NodeJS.Signals, worker.decommission)
    }).pipe(
      // Built in the caller's scope: the worker's network and runners live as long as it does.
      Effect.provide(
        yield* Layer.build(
          Runners.layerProcesses({
            workDir,
            localDir,
            ...WorkerConf.runnerTimeouts(conf),
            shuffleService: shuffleService
              ? { removeUnserved: (dir) => ExternalShuffleService.removeUnserved(NodeDisk.disk, dir) }
              : undefined,
            security: rpcOptions.secret === undefined ? undefined : {
              secret: rpcOptions.secret,
              encrypt: ProtocolConf.encryptionSecret(conf) !== undefined
            },
            installation
          }).pipe(
            Layer.provide(ProcessLauncher.layerNode),
            Layer.provide(DiskOperations.nodeFileSystem),
            Layer.provideMerge(rpc)
          )
        )
      )
    )
  })

// Runs the effect each time the process receives the signal, for as long as the scope is open.
const onSignal = (signal: NodeJS.Signals, effect: Effect.Effect<void>) =>
  Effect.gen(function*() {
    const run = Runtime.runFork(yield* Effect.runtime<never>())
    const handler = () => void run(effect)
    yield* Effect.acquireRelease(
      Effect.sync(() => process.on(signal, handler)),
      () => Effect.sync(() => process.off(signal, handler))
    )
  })

/**
 * Runs a worker until it must stop; the exit code says why.
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
    const exitCode = yield* Effect.makeLatch(false)
    let code = 0
    yield* Effect.gen(function*() {
      yield* start({
        conf,
        masters,
        cores,
        memory,
        host: Option.getOrElse(args.host, () =>
          Os.hostname()),
        port: args.port,
        workDir: Path.resolve(Option.getOrElse(args.workDir, () => Path.join(NodeLoader.home(), "work"))),
        decommissionOnSignal: true,
        onExit: (exit, reason) =>
          (exit === 0 ? Effect.logInfo : Effect.logError)(`Worker exiting with code ${exit}: ${reason}`).pipe(
            Effect.zipRight(Effect.sync(() => {
              code = exit
            })),
            Effect.zipRight(exitCode.open)
          )
      })
      yield* exitCode.await
    }).pipe(Effect.scoped)
    return code
  })
