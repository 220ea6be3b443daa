/**
 * `local[N]`: the driver and one executor with N task threads in this process, as Spark's local mode — each a
 * role on its own RpcEnv over an in-memory network, so that the driver's core is the same as on a cluster and
 * the executor's is the one `kindling executor` runs. The network hands messages over as values, unencoded.
 *
 * @since 0.1.0
 */
import { AppContext, Kindling } from "@kindling/app"
import type { Disk, ObjectStore } from "@kindling/data"
import { Executor, TaskThreads } from "@kindling/executor"
import { Ids, RpcAddress } from "@kindling/protocol"
import { RpcEnv, Transport } from "@kindling/rpc"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Os from "node:os"
import * as AppListeners from "./AppListeners.js"
import * as Driver from "./Driver.js"
import type * as DriverCore from "./DriverCore.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly appName: string
  /** Task threads: N of `local[N]`. */
  readonly threads: number
  /** The app module each task thread imports first (a `file:` URL), for functions that travel by name. */
  readonly appUrl?: string | undefined
  /** What the app module exports, to recognise its functions. */
  readonly appExports?: Readonly<Record<string, unknown>>
  readonly driver: DriverCore.Config
  /** `kindling.default.parallelism`, when set. */
  readonly defaultParallelism?: number | undefined
  /** The files its datasets read and write (the local file system, unbounded, unless given). */
  readonly files?: Disk.Files | undefined
  /** The object store its tasks read and write `s3://` paths in; without one, the AWS SDK's own defaults. */
  readonly objectStore?: ObjectStore.S3Settings | undefined
  readonly heartbeatIntervalMillis: number
  /** Results of more bytes go through the data plane (`kindling.task.maxDirectResultSize`). */
  readonly maxDirectResultSize?: number
  /** Bytes a task's shuffle or sort holds in memory before it spills (`kindling.shuffle.spill.threshold`). */
  readonly spillThreshold?: number
  readonly validateState?: boolean
  /** What watches the app (its UI, event log, progress bar): none unless given. */
  readonly listeners?: AppListeners.Start | undefined
}

/**
 * A failure of the local runtime itself (a task thread that cannot start, an RpcEnv that cannot be built).
 *
 * @since 0.1.0
 * @category errors
 */
export type StartFailed = TaskThreads.ThreadStartFailed | Transport.ListenFailed

const driverHost = "driver"
const executorHost = "executor-driver"

/**
 * The app context of a `local[N]` app, with its driver and executor; both stop when the layer's scope closes.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<Kindling, StartFailed> =>
  Layer.scoped(
    Kindling,
    Effect.gen(function*() {
      // The driver and executor hand each other their messages as values: nothing is encoded between them.
      const network = yield* Transport.makeMemoryWith({ handOverValues: true })
      const onRpc = <A, E, R>(host: string, effect: Effect.Effect<A, E, R>) =>
        Effect.flatMap(
          RpcEnv.make({ host, port: 7077 }).pipe(Effect.provideService(Transport.Transport, network)),
          (rpc) => Effect.provideService(effect, RpcEnv.RpcEnv, rpc)
        )
      // A role that stops by itself (it exits) leaves the app without it: say so, loudly, rather than hang. A
      // driver that stops has failed its jobs and told the executor to stop; nothing else here outlives the app.
      const onExit = (role: string) => (code: number, reason: string) =>
        code === 0 ? Effect.void : Effect.logError(`The local ${role} stopped (${code}): ${reason}`)
      const driver = yield* onRpc(
        driverHost,
        Driver.make({ config: options.driver, validateState: options.validateState ?? false, onExit: onExit("driver") })
      ).pipe(Effect.orDie)
      // Its listeners follow the app from before its executor registers.
      const startTime = yield* Clock.currentTimeMillis
      const listeners = yield* (options.listeners ?? AppListeners.none)({
        name: options.appName,
        master: `local[${options.threads}]`,
        user: Os.userInfo().username,
        startTime
      }, driver)
      // Spark's local app id: `local-<start time>`.
      listeners.setAppId(`local-${startTime}`)
      // The app's context is ready once its task threads are: one that cannot start fails the app's start.
      const threads = yield* TaskThreads.make({ size: options.threads, appUrl: options.appUrl })
      yield* threads.started
      const executor = yield* onRpc(
        executorHost,
        Executor.make({
          executorId: Ids.ExecutorId.make("driver"),
          driver: RpcAddress.make(driverHost, 7077),
          hostname: "localhost",
          threads,
          heartbeatIntervalMillis: options.heartbeatIntervalMillis,
          askTimeoutMillis: 120_000,
          ...(options.maxDirectResultSize === undefined ? {} : { maxDirectResultSize: options.maxDirectResultSize }),
          ...(options.spillThreshold === undefined ? {} : { spillThreshold: options.spillThreshold }),
          ...(options.objectStore === undefined ? {} : { objectStore: options.objectStore }),
          validateState: options.validateState ?? false,
          // The app's only executor: without it no job can end, so every job fails, and those to come.
          onExit: (code, reason) =>
            Effect.zipRight(
              onExit("executor")(code, reason),
              code === 0 ? Effect.void : driver.abort(`The local executor stopped: ${reason}`)
            )
        })
      ).pipe(Effect.catchTag("NotListening", "EndpointAlreadyRegistered", Effect.die))
      // Run first (finalizers run in reverse): the executor stops as told before its endpoint goes, and its going
      // is expected.
      yield* Effect.addFinalizer(() =>
        Effect.zipRight(driver.stop, Effect.timeoutOption(Effect.interruptible(executor.exited), "2 seconds"))
      )
      return AppContext.make({
        appName: options.appName,
        master: `local[${options.threads}]`,
        defaultParallelism: () => options.defaultParallelism ?? options.threads,
        configuredParallelism: options.defaultParallelism,
        files: options.files,
        driver,
        appExports: options.appExports,
        uiWebUrl: listeners.uiUrl
      })
    })
  )
