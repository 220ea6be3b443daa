/**
 * The port through which a worker runs what it is asked to run: drivers and executors, and the directories they
 * leave. `layerProcesses` runs them as real processes (`DriverRunner`, `ExecutorRunner`) in the worker's work
 * dir; the simulated cluster runs them as simulated ones, so the worker's shell is the same in both.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import type { Installation } from "@kindling/installation"
import * as WorkDirs from "@kindling/installation/WorkDirs"
import { DiskError, DiskOperations } from "@kindling/kernel"
import { Descriptions, type Ids, type RpcAddress } from "@kindling/protocol"
import { RpcEnv } from "@kindling/rpc"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import * as DriverRunner from "./DriverRunner.js"
import * as ExecutorRunner from "./ExecutorRunner.js"
import { type NodeSecurity, ProcessLauncher } from "./ProcessLauncher.js"

/**
 * Who is asking: the worker's endpoint URL (`{{WORKER_URL}}`), host (`{{HOSTNAME}}`) and web UI.
 *
 * @since 0.1.0
 * @category models
 */
export interface WorkerIdentity {
  readonly workerUrl: string
  readonly hostname: string
  /** The worker's web UI, whose log pages show what its drivers and executors write. */
  readonly webUiUrl: string
}

// The worker UI's log pages of a process, as environment variables; none when the worker has no UI.
const logUrls = (webUiUrl: string, query: string): Record<string, string> =>
  webUiUrl === "" ? {} : {
    KINDLING_LOG_URL_STDOUT: `${webUiUrl}/logPage/?${query}&logType=stdout`,
    KINDLING_LOG_URL_STDERR: `${webUiUrl}/logPage/?${query}&logType=stderr`
  }

/**
 * The work directory cannot be created.
 *
 * @since 0.1.0
 * @category errors
 */
export class WorkDirUnusable extends Data.TaggedError("WorkDirUnusable")<{
  readonly path: string
  readonly reason: string
}> {
  override get message(): string {
    return `Cannot use the work dir ${this.path}: ${this.reason}`
  }
}

/**
 * An executor could not be set up before its process was started (its scratch directory, say).
 *
 * @since 0.1.0
 * @category errors
 */
export class ExecutorSetupFailed extends Data.TaggedError("ExecutorSetupFailed")<{ readonly reason: string }> {
  override get message(): string {
    return `Cannot set up the executor: ${this.reason}`
  }
}

/**
 * @since 0.1.0
 * @category models
 */
export interface RunnersService {
  /** Makes a driver's runner, which runs its process when asked; closing the scope stops it. */
  readonly driver: (
    driverId: Ids.DriverId,
    description: Descriptions.DriverDescription,
    worker: WorkerIdentity,
    /** Where else the app's artifact may be had by its digest (see `DriverRunner.Options`). */
    artifactMirrors: ReadonlyArray<RpcAddress.RpcAddress>
  ) => Effect.Effect<DriverRunner.DriverHandle, never, Scope.Scope>
  /** Starts an executor in the background of the scope; closing the scope stops it. */
  readonly executor: (
    launch: {
      readonly appId: Ids.AppId
      readonly execId: number
      readonly appDesc: Descriptions.ApplicationDescription
      readonly cores: number
      readonly memory: number
    },
    worker: WorkerIdentity
  ) => Effect.Effect<ExecutorRunner.ExecutorHandle, ExecutorSetupFailed, Scope.Scope>
  /** Deletes the scratch directories of a finished app, if this worker made them. */
  readonly cleanupApplication: (appId: Ids.AppId) => Effect.Effect<void, DiskError.DiskError>
  /**
   * Deletes entries of the work dir not named in `keep` that have nothing newer than the TTL; the first that
   * fails ends the sweep (the next one tries again).
   */
  readonly cleanupWorkDir: (keep: ReadonlyArray<string>, ttlMillis: number) => Effect.Effect<void, DiskError.DiskError>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class Runners extends Context.Tag("@kindling/worker/Runners")<Runners, RunnersService>() {}

/**
 * @since 0.1.0
 * @category models
 */
export interface ProcessOptions {
  /** Where drivers (`<workDir>/<driverId>`) and executors (`<workDir>/<appId>/<execId>`) run. */
  readonly workDir: string
  /** Executors' scratch directories, one per app, deleted when the app is finished (Spark's local dirs). */
  readonly localDir: string
  readonly driverTerminateTimeoutMillis: number
  readonly executorTerminateTimeoutMillis: number
  /** The cluster's secret and whether connections are encrypted, handed to drivers and executors. */
  readonly security?: NodeSecurity | undefined
  /**
   * The Kindling installation drivers and executors run from: the files of its entry modules (a command's
   * specifier is one of `Descriptions.mainModules`, checked before) and the packages an app imports from it.
   */
  readonly installation: Installation.Installation
  /**
   * The worker's shuffle service, when it runs one: its executors learn where it is, those of apps that ask for it
   * keep their files where it serves them, and what else they leave there is removed when they exit.
   */
  readonly shuffleService?: {
    /** Removes what an executor that has exited left in its directory besides what the service serves. */
    readonly removeUnserved: (executorDir: string) => Effect.Effect<void>
  } | undefined
}

// The newest modification time of anything under `path`. Links are not followed, which the platform's FileSystem
// cannot promise (it has no lstat), so the periodic cleanup reads the disk directly.
const newestChange = async (path: string): Promise<number> => {
  const stat = await Fs.lstat(path)
  if (!stat.isDirectory()) return stat.mtimeMs
  let newest = stat.mtimeMs
  for (const entry of await Fs.readdir(path)) newest = Math.max(newest, await newestChange(Path.join(path, entry)))
  return newest
}

/**
 * Runs drivers and executors as real processes, through the `ProcessLauncher`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeProcesses = (
  options: ProcessOptions
): Effect.Effect<RunnersService, WorkDirUnusable, ProcessLauncher | FileSystem.FileSystem | RpcEnv.RpcEnv> =>
  Effect.gen(function*() {
    const launcher = yield* ProcessLauncher
    const fs = yield* FileSystem.FileSystem
    const machine = Effect.provideService(ProcessLauncher, launcher)
    const files = Effect.provideService(FileSystem.FileSystem, fs)
    // Artifacts are fetched on the worker's own network.
    const network = Effect.provideService(RpcEnv.RpcEnv, yield* RpcEnv.RpcEnv)
    yield* Effect.mapError(
      fs.makeDirectory(options.workDir, { recursive: true }),
      (error) => new WorkDirUnusable({ path: options.workDir, reason: error.message })
    )
    // The apps whose scratch dirs this worker made: only those are ever deleted for an ApplicationFinished.
    const appDirectories = new Set<string>()

    const driver: RunnersService["driver"] = (driverId, description, worker, artifactMirrors) =>
      DriverRunner.start({
        driverId,
        description,
        artifactMirrors,
        workDir: options.workDir,
        workerUrl: worker.workerUrl,
        terminateTimeout: options.driverTerminateTimeoutMillis,
        installation: options.installation,
        security: options.security
      }).pipe(machine, files, network)

    // The service listens where the worker does.
    const serviceAddress = (yield* RpcEnv.RpcEnv).address
    const service = options.shuffleService === undefined || serviceAddress === undefined
      ? undefined
      : { address: serviceAddress, removeUnserved: options.shuffleService.removeUnserved }
    const executor: RunnersService["executor"] = (launch, worker) =>
      Effect.gen(function*() {
        const localDirs = Path.join(options.localDir, launch.appId)
        yield* Effect.mapError(
          fs.makeDirectory(localDirs, { recursive: true }),
          (error) => new ExecutorSetupFailed({ reason: `cannot create ${localDirs}: ${error.message}` })
        )
        appDirectories.add(launch.appId)
        const appDesc = new Descriptions.ApplicationDescription({
          ...launch.appDesc,
          command: new Descriptions.Command({
            ...launch.appDesc.command,
            environment: {
              ...launch.appDesc.command.environment,
              KINDLING_EXECUTOR_DIRS: localDirs,
              ...(service === undefined ? {} : { [WorkDirs.shuffleServiceVariable]: service.address.url }),
              // Where the executor's logs can be read, which it tells its driver (Spark's SPARK_LOG_URL_*).
              ...logUrls(worker.webUiUrl, `appId=${launch.appId}&executorId=${launch.execId}`)
            }
          })
        })
        return yield* ExecutorRunner.start({
          appId: launch.appId,
          execId: launch.execId,
          appDesc,
          cores: launch.cores,
          memory: launch.memory,
          hostname: worker.hostname,
          workDir: options.workDir,
          workerUrl: worker.workerUrl,
          terminateTimeout: options.executorTerminateTimeoutMillis,
          installation: options.installation,
          security: options.security,
          ...(service === undefined
            ? {}
            : { afterExit: service.removeUnserved(WorkDirs.servedExecutorDir(localDirs, String(launch.execId))) })
        }).pipe(machine, files, network)
      })

    const cleanupApplication = (appId: Ids.AppId) =>
      Effect.suspend(() => {
        if (!appDirectories.delete(appId)) return Effect.void
        const path = Path.join(options.localDir, appId)
        return fs.remove(path, { recursive: true }).pipe(
          Effect.mapError((error) => DiskError.fromCause("remove", path, error))
        )
      })

    const cleanupWorkDir = (keep: ReadonlyArray<string>, ttlMillis: number) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const entries = yield* DiskOperations.attemptPromise("list", options.workDir, () => Fs.readdir(options.workDir))
        for (const entry of entries) {
          if (keep.includes(entry)) continue
          const path = Path.join(options.workDir, entry)
          // Only directories (an app's or a driver's), as Spark.
          if (!(yield* DiskOperations.attemptPromise("stat", path, () => Fs.lstat(path))).isDirectory()) continue
          const newest = yield* DiskOperations.attemptPromise("stat", path, () => newestChange(path))
          if (newest < now - ttlMillis) {
            yield* Effect.logInfo(`Removing old work dir ${path}`)
            yield* DiskOperations.attemptPromise("remove", path, () => Fs.rm(path, { recursive: true, force: true }))
          }
        }
      })

    return { driver, executor, cleanupApplication, cleanupWorkDir }
  })

/**
 * @since 0.1.0
 * @category layers
 */
export const layerProcesses = (
  options: ProcessOptions
): Layer.Layer<Runners, WorkDirUnusable, ProcessLauncher | FileSystem.FileSystem | RpcEnv.RpcEnv> =>
  Layer.effect(Runners, makeProcesses(options))
