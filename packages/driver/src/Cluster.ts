/**
 * An app on a standalone cluster, with its driver in this process (Spark's client deploy mode, and what a driver
 * process started by a worker runs in cluster deploy mode): the driver's endpoint and the app client on one
 * RpcEnv over TCP. The app client registers the app with the masters, which start its executors on workers —
 * `kindling executor` processes that register with the driver here.
 *
 * @since 0.1.0
 */
import { AppContext, Kindling } from "@kindling/app"
import type { Conf, Problem } from "@kindling/conf"
import { BoundedFiles, type Disk, type ObjectStore } from "@kindling/data"
import { KernelConf } from "@kindling/kernel"
import { Descriptions, type RpcAddress } from "@kindling/protocol"
import { type DataPlane, ProtocolConf, RpcEnv, type Transport } from "@kindling/rpc"
import { NodeArtifacts, NodeTransport } from "@kindling/rpc/node"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Url from "node:url"
import * as AppClient from "./AppClient.js"
import * as AppListeners from "./AppListeners.js"
import type * as AppModule from "./AppModule.js"
import * as Driver from "./Driver.js"
import * as DriverConf from "./DriverConf.js"
import type * as DriverCore from "./DriverCore.js"
import * as ExecutorAllocation from "./ExecutorAllocation.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly appName: string
  readonly masters: ReadonlyArray<RpcAddress.RpcAddress>
  /** The master URL as given, for the app's context. */
  readonly masterUrl: string
  /** Where the driver listens: executors on other hosts must reach it there. */
  readonly host: string
  /**
   * The app's artifact, which executors import: a `file:` URL is served to them on the driver's data plane (they
   * are given its artifact URL); any other URL is passed on as it is.
   */
  readonly appUrl: string
  readonly appExports?: Readonly<Record<string, unknown>>
  /** The files its datasets read and write (the local file system, unbounded, unless given). */
  readonly files?: Disk.Files
  /** `kindling.default.parallelism`, when set. */
  readonly defaultParallelism?: number | undefined
  readonly driver: DriverCore.Config
  readonly executorMemoryMB: number
  readonly executorCores: number | undefined
  readonly maxCores: number | undefined
  /** The app starts once this share of `maxCores` has registered, or after `maxRegisteredWaitMillis`. */
  readonly minRegisteredRatio: number
  readonly maxRegisteredWaitMillis: number
  readonly rpc: Omit<RpcEnv.Options, "host" | "port">
  /** The transport under the RpcEnv (plain TCP unless given; `fromConf` gives the configured one). */
  readonly transport?: Layer.Layer<Transport.Transport | DataPlane.Crc32, Problem.InvalidConf> | undefined
  readonly validateState?: boolean
  /** What watches the app (its UI, event log, progress bar): none unless given. */
  readonly listeners?: AppListeners.Start | undefined
}

/**
 * The module workers run for an executor, and its arguments (`{{…}}` are filled in by the worker).
 *
 * @since 0.1.0
 */
export const executorCommand = (driverUrl: string, appUrl: string): Descriptions.Command =>
  new Descriptions.Command({
    mainModule: Descriptions.mainModules.executor[0],
    arguments: [
      "--driver-url",
      driverUrl,
      "--executor-id",
      "{{EXECUTOR_ID}}",
      "--hostname",
      "{{HOSTNAME}}",
      "--cores",
      "{{CORES}}",
      "--app-id",
      "{{APP_ID}}",
      "--worker-url",
      "{{WORKER_URL}}",
      "--app",
      appUrl
    ],
    environment: {},
    nodeOptions: []
  })

/**
 * The app context of an app whose executors a standalone cluster runs; the app is unregistered and its
 * executors stopped when the layer's scope closes.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<Kindling, Transport.ListenFailed | Problem.InvalidConf> =>
  Layer.scoped(Kindling, make(options)).pipe(
    Layer.provide(RpcEnv.layer({ ...options.rpc, host: options.host, port: 0 })),
    Layer.provide(options.transport ?? NodeTransport.layer)
  )

/**
 * The same app context on the RpcEnv in context (the simulated cluster's, say); the app is unregistered and its
 * executors stopped when the scope closes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options): Effect.Effect<Kindling["Type"], never, RpcEnv.RpcEnv | Scope.Scope> =>
  Effect.gen(function*() {
    // A driver stopped by a defect has failed its jobs; the app asks the master for no more executors before they
    // are told to stop (the master would replace them), and leaves it once they are gone (or after a while), which
    // frees its cores and has its workers end executors that did not hear the driver. (How is known once the app
    // client is made, after the driver.)
    const leaving = { leave: Effect.void }
    // Dynamic allocation's requests go to the master through the app client (which asks until they are taken),
    // made after the driver.
    const allocating: { allocate: NonNullable<Driver.Options["allocate"]> } = { allocate: () => Effect.void }
    const driver = yield* Driver.make({
      config: options.driver,
      validateState: options.validateState ?? false,
      allocate: (command) => Effect.suspend(() => allocating.allocate(command)),
      onExit: (code, reason) =>
        Effect.zipRight(
          Effect.logError(`The driver stopped (${code}): ${reason}`),
          Effect.suspend(() => leaving.leave)
        )
    }).pipe(Effect.orDie)
    const driverUrl = `kindling://CoarseGrainedScheduler@${driver.address.hostPort}`
    const appUrl = yield* servedToExecutors(options.appUrl, driver.address)
    // The listeners start first: the master lists the UI's address and the event log's folder with the app.
    const listeners = yield* (options.listeners ?? AppListeners.none)({
      name: options.appName,
      master: options.masterUrl,
      user: Os.userInfo().username,
      startTime: yield* Clock.currentTimeMillis
    }, driver)
    const granted = new Map<number, number>()
    const appClient = yield* AppClient.make({
      masters: options.masters,
      validateState: options.validateState ?? false,
      appDescription: new Descriptions.ApplicationDescription({
        name: options.appName,
        maxCores: Option.fromNullable(options.maxCores),
        memoryPerExecutorMB: options.executorMemoryMB,
        command: executorCommand(driverUrl, appUrl),
        appUiUrl: listeners.uiUrl ?? "",
        // As Spark's app description says where its log goes, for the master to show.
        eventLogDir: Option.map(Option.fromNullable(listeners.eventLog), (log) => log.dir),
        eventLogCodec: Option.flatMap(Option.fromNullable(listeners.eventLog), (log) => Option.fromNullable(log.codec)),
        coresPerExecutor: Option.fromNullable(options.executorCores),
        // With dynamic allocation the app starts with its initial executors, not all it could have.
        initialExecutorLimit: Option.map(
          Option.fromNullable(options.driver.allocation),
          ExecutorAllocation.initialTarget
        ),
        user: Os.userInfo().username,
        resourceReqsPerExecutor: []
      }),
      tell: (command) => {
        switch (command._tag) {
          case "AppRegistered":
            return Effect.sync(() => listeners.setAppId(command.appId))
          case "ExecutorGranted":
            return Effect.sync(() => granted.set(command.executorId, command.cores))
          case "ExecutorGone":
            granted.delete(command.executorId)
            return driver.executorRemoved(
              String(command.executorId),
              command.reason,
              command.started,
              command.workerLost
            )
          case "ExecutorDecommissioned":
            granted.delete(command.executorId)
            return driver.executorDecommissioned(String(command.executorId), command.reason)
          case "AppDead":
            return driver.abort(command.reason)
          case "MasterChanged":
            return Effect.void
        }
      },
      // The app's link to its master is part of its driver: a defect there ends the driver.
      onExit: (_code, reason) => driver.halt(`its app client stopped: ${reason}`)
    }).pipe(Effect.orDie)
    allocating.allocate = (command) =>
      Effect.sync(() =>
        appClient.allocate(
          command._tag === "KillExecutors"
            ? { _tag: "KillExecutors", executorIds: command.executorIds }
            : { _tag: "RequestTotal", total: command.total }
        )
      )
    // No executor more.
    const release = appClient.release
    leaving.leave = Effect.zipRight(release, Effect.asVoid(Effect.forkDaemon(appClient.leave)))
    if ((yield* driver.fatalError) !== undefined) yield* appClient.stop
    // Run first (finalizers run in reverse): the master is asked for no more executors, the executors are told to
    // stop, and once the master counts none of them (or after a while: the app client decides) the app leaves it —
    // which would otherwise have replaced them, or had workers kill them mid-goodbye. A driver that stopped on a
    // defect is leaving already.
    yield* Effect.addFinalizer(() =>
      Effect.flatMap(
        driver.fatalError,
        (fatal) =>
          fatal !== undefined ? appClient.leave : Effect.all(
            [release, driver.stop, Effect.interruptible(appClient.leave), appClient.stop],
            { discard: true }
          )
      )
    )
    // Spark's `waitBackendReady`: with a ratio and a core cap set, the app waits for enough executors.
    const expected = options.minRegisteredRatio * (options.maxCores ?? 0)
    if (expected > 0) {
      yield* driver.cores.pipe(
        Effect.repeat({ until: (cores) => cores >= expected, schedule: Schedule.spaced("100 millis") }),
        Effect.timeoutOption(options.maxRegisteredWaitMillis)
      )
    }
    return AppContext.make({
      appName: options.appName,
      master: options.masterUrl,
      defaultParallelism: () =>
        options.defaultParallelism ?? Math.max(2, [...granted.values()].reduce((a, b) => a + b, 0)),
      configuredParallelism: options.defaultParallelism,
      driver,
      appExports: options.appExports,
      uiWebUrl: listeners.uiUrl,
      files: options.files
    })
  })

// The driver serves its app to its executors, as Spark's driver serves jars from its file server: executors on
// other hosts cannot read the driver's files.
const servedToExecutors = (appUrl: string, driver: RpcAddress.RpcAddress) =>
  Effect.gen(function*() {
    if (!appUrl.startsWith("file:")) return appUrl
    const path = Url.fileURLToPath(appUrl)
    const digest = yield* NodeArtifacts.digestFile(path)
    const rpc = yield* RpcEnv.RpcEnv
    yield* NodeArtifacts.serve(
      rpc.data,
      (sha256) => Effect.succeed(sha256 === digest.sha256 ? Option.some(path) : Option.none())
    )
    return NodeArtifacts.url({ address: driver, sha256: digest.sha256, name: Path.basename(path) })
  }).pipe(Effect.orDie)

/**
 * The runtime of an app on the masters given, watched by `listeners`, with everything else from its
 * configuration: the layer each loaded app module runs with.
 *
 * @since 0.1.0
 * @category layers
 */
export const fromConf = (conf: Conf.Conf<DriverConf.AppKeys>, options: {
  readonly appName: string
  readonly masters: ReadonlyArray<RpcAddress.RpcAddress>
  readonly masterUrl: string
  readonly host: string
  readonly listeners?: AppListeners.Start | undefined
  /** The object store the driver reads and writes `s3://` paths in (`DriverConf.objectStore`). */
  readonly objectStore: ObjectStore.S3Settings
}): Either.Either<
  (app: AppModule.Loaded) => Layer.Layer<Kindling, Transport.ListenFailed | Problem.InvalidConf>,
  Problem.InvalidConf
> =>
  Either.map(
    ProtocolConf.rpcOptions(conf),
    (rpc) => (app: AppModule.Loaded) =>
      layer({
        ...options,
        appUrl: app.url,
        appExports: app.exports,
        driver: {
          ...DriverConf.coreConfig(
            conf,
            conf.get(DriverConf.keys.taskMaxFailures),
            Math.floor(Math.random() * 2 ** 31)
          ),
          allocation: DriverConf.allocationConfig(conf),
          decommission: DriverConf.decommissionConfig(conf)
        },
        executorMemoryMB: conf.get(DriverConf.keys.executorMemory),
        executorCores: conf.get(DriverConf.keys.executorCores),
        maxCores: conf.get(DriverConf.keys.coresMax),
        minRegisteredRatio: conf.get(DriverConf.keys.minRegisteredResourcesRatio),
        maxRegisteredWaitMillis: conf.get(DriverConf.keys.maxRegisteredResourcesWaitingTime),
        defaultParallelism: conf.get(DriverConf.keys.defaultParallelism),
        files: BoundedFiles.make(conf.get(DriverConf.keys.fileTimeout), options.objectStore),
        rpc,
        transport: NodeTransport.layerFrom(conf),
        validateState: conf.get(KernelConf.keys.validateState)
      })
  )
