/**
 * What an executor process does from its command line on (Spark's `CoarseGrainedExecutorBackend` main): it reads
 * its arguments, fetches the app's settings from the driver and registers, while it fetches the app and starts
 * its task runner on it, then runs tasks until it is told to stop or loses its driver. `@kindling/executor/main`
 * runs it on TCP with task threads; the simulated cluster runs it on its own network with inline tasks.
 *
 * @since 0.1.0
 */
// The layout alone: the package's main entry would load the installation's linking (and @effect/platform) into
// every executor, some 12 MB of it.
import { type Disk, ObjectStore } from "@kindling/data"
import * as NodeDisk from "@kindling/data/NodeDisk"
import * as WorkDirs from "@kindling/installation/WorkDirs"
import { type DiskError, DiskOperations, type Shell } from "@kindling/kernel"
import { ClusterMessages, type Errors, Ids, MasterUrl, RpcAddress } from "@kindling/protocol"
// By its own path, not the index: an executor's bundle then leaves out the other roles' messages (see Endpoints).
import * as Endpoints from "@kindling/protocol/Endpoints"
import { RpcEnv } from "@kindling/rpc"
import { NodeArtifacts } from "@kindling/rpc/node"
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Path from "node:path"
import * as Url from "node:url"
import * as LateThreads from "../tasks/LateThreads.js"
import type * as TaskThreads from "../tasks/TaskThreads.js"
import * as Executor from "./Executor.js"
import * as MemoryBudget from "./MemoryBudget.js"

/**
 * @since 0.1.0
 */
export const usage =
  "usage: executor --driver-url URL --executor-id ID --hostname HOST --cores N --app-id APP --app URL"

/**
 * The command line is not one an executor can run with.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidArguments extends Data.TaggedError("InvalidArguments")<{ readonly reason: string }> {
  override get message() {
    return `${this.reason}; ${usage}`
  }
}

/**
 * An executor's command line, read.
 *
 * @since 0.1.0
 * @category models
 */
export interface Arguments {
  readonly driver: RpcAddress.RpcAddress
  readonly executorId: Ids.ExecutorId
  readonly hostname: string
  readonly cores: number
  readonly appId: string
  readonly appUrl: string
}

/**
 * Reads `--name value` pairs.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseArguments = (argv: ReadonlyArray<string>): Effect.Effect<Arguments, InvalidArguments> =>
  Effect.suspend(() => {
    const given = new Map<string, string>()
    for (let i = 0; i + 1 < argv.length; i += 2) given.set(argv[i]!.replace(/^--/, ""), argv[i + 1]!)
    const missing = ["driver-url", "executor-id", "hostname", "cores", "app-id", "app"].find((n) => !given.has(n))
    if (missing !== undefined) return Effect.fail(new InvalidArguments({ reason: `missing --${missing}` }))
    const driverUrl = /^kindling:\/\/(?:[^@/]+@)?([^:/]+):(\d+)$/.exec(given.get("driver-url")!)
    if (driverUrl === null) {
      return Effect.fail(new InvalidArguments({ reason: `not a driver URL: ${given.get("driver-url")}` }))
    }
    const cores = Number(given.get("cores"))
    if (!Number.isInteger(cores) || cores < 1) {
      return Effect.fail(new InvalidArguments({ reason: `--cores must be a positive integer: ${given.get("cores")}` }))
    }
    return Effect.succeed({
      driver: RpcAddress.make(driverUrl[1]!, Number(driverUrl[2])),
      executorId: Ids.ExecutorId.make(given.get("executor-id")!),
      hostname: given.get("hostname")!,
      cores,
      appId: given.get("app-id")!,
      appUrl: given.get("app")!
    })
  })

/**
 * The app could not be fetched from the driver.
 *
 * @since 0.1.0
 * @category errors
 */
export class AppUnavailable
  extends Data.TaggedError("AppUnavailable")<{ readonly url: string; readonly reason: string }>
{
  override get message() {
    return `Cannot fetch the app ${this.url}: ${this.reason}`
  }
}

// An artifact URL (the driver serves its app) is fetched into the executor's working directory, its work dir on
// the worker, which links the installation's packages there; any other URL is imported as it is.
const localArtifact = (appUrl: string, workDir: string): Effect.Effect<string, AppUnavailable, RpcEnv.RpcEnv> =>
  Option.match(NodeArtifacts.parseUrl(appUrl), {
    onNone: () => Effect.succeed(appUrl),
    onSome: (location) =>
      Effect.gen(function*() {
        const rpc = yield* RpcEnv.RpcEnv
        const path = Path.resolve(workDir, location.name)
        yield* NodeArtifacts.fetchTo(rpc.data, location, path)
        return Url.pathToFileURL(path).href
      }).pipe(Effect.mapError((error) => new AppUnavailable({ url: appUrl, reason: error.message })))
  })

// The directory of this executor's shuffle files and spills, in its working directory (its work dir on the
// worker, which removes it when the process ends however it ends), removed when the executor stops. Without it
// the executor cannot start; a removal that fails is only logged, the worker tries again.
const blockManagerDir = (disk: Disk.Disk, workDir: string) => {
  const dir = Path.resolve(workDir, WorkDirs.blockManagerDirName)
  return Effect.acquireRelease(
    DiskOperations.attempt("mkdir", dir, () => disk.makeDirectory(dir)),
    () => DiskOperations.removing(dir, () => disk.remove(dir))
  ).pipe(Effect.as(dir))
}

// Where the worker that started this executor serves its logs (Spark's SPARK_LOG_URL_STDOUT/STDERR).
const logUrlsFromEnvironment = (variables: Variables): Record<string, string> => {
  const urls: Record<string, string> = {}
  for (const logType of ["stdout", "stderr"]) {
    const url = variables[`KINDLING_LOG_URL_${logType.toUpperCase()}`]
    if (url !== undefined && url !== "") urls[logType] = url
  }
  return urls
}

type Variables = Readonly<Record<string, string | undefined>>

// The worker's shuffle service, when the app asks for it (`kindling.shuffle.service.enabled`) and the worker runs
// one: its address, and the directory it serves this executor's map outputs from, which outlives the executor.
const shuffleServiceOf = (variables: Variables, executorId: string, wanted: boolean) =>
  Effect.gen(function*() {
    if (!wanted) return undefined
    const url = variables[WorkDirs.shuffleServiceVariable]
    const appDir = variables["KINDLING_EXECUTOR_DIRS"]
    const address = url === undefined ? undefined : Either.getOrUndefined(MasterUrl.parse(url))?.[0]
    if (address === undefined || appDir === undefined) {
      yield* Effect.logWarning(
        "kindling.shuffle.service.enabled, but this executor's worker runs no shuffle service: its map outputs go " +
          "with it"
      )
      return undefined
    }
    return { address, dir: WorkDirs.servedExecutorDir(appDir, executorId) }
  })

/**
 * @since 0.1.0
 * @category models
 */
export interface Environment<E, NE, R> {
  /** The task runner for `cores` tasks at once over the app at `appUrl`. */
  readonly tasks: (cores: number, appUrl: string) => Effect.Effect<TaskThreads.TaskThreads, E, Scope.Scope>
  /** The network, listening on `host`. */
  readonly network: (host: string) => Layer.Layer<RpcEnv.RpcEnv, NE, R>
  /** The files it works on (the local file system unless given). */
  readonly disk?: Disk.Disk
  /** Its working directory, its work dir on the worker (the process's current directory unless given). */
  readonly workDir?: string
  /** What its worker put in its environment (the process's unless given). */
  readonly variables?: Variables
  readonly validateState?: boolean
}

/**
 * Runs an executor from its command line; succeeds with the process's exit code once it has stopped: 0 when told
 * to, 1 otherwise.
 *
 * @since 0.1.0
 * @category running
 */
export const run = <E, NE, R>(
  argv: ReadonlyArray<string>,
  environment: Environment<E, NE, R>
): Effect.Effect<
  number,
  | E
  | NE
  | InvalidArguments
  | AppUnavailable
  | Errors.RpcError
  | Shell.NotListening
  | RpcEnv.EndpointAlreadyRegistered
  | DiskError.DiskError,
  R | Scope.Scope
> =>
  Effect.gen(function*() {
    const args = yield* parseArguments(argv)
    const exit = yield* Deferred.make<number, E | AppUnavailable>()
    const disk = environment.disk ?? NodeDisk.disk
    const workDir = environment.workDir ?? process.cwd()
    const variables = environment.variables ?? process.env
    yield* Effect.logInfo(`Started executor ${args.executorId} of ${args.appId} with ${args.cores} cores`)
    // Built in the process's scope: the executor's network lives as long as the executor.
    const network = yield* Layer.build(environment.network(args.hostname))
    const registered = Effect.gen(function*() {
      const rpc = yield* RpcEnv.RpcEnv
      // The app is fetched, and its task threads started on it, while the executor asks for its settings and
      // registers: only tasks need the app, and a task launched before a thread is ready waits for it.
      const late = yield* LateThreads.make(
        args.cores,
        Effect.flatMap(localArtifact(args.appUrl, workDir), (appUrl) => environment.tasks(args.cores, appUrl))
      )
      // An app it cannot fetch fails the executor with why, a thread that cannot start ends it as a failure, at
      // whatever point of its start-up: either way it cannot run its tasks (its driver then runs them elsewhere).
      yield* late.made.pipe(
        Effect.flatMap((made) =>
          made.started.pipe(
            Effect.catchAll((error) => Effect.zipRight(Effect.logError(error.message), Deferred.succeed(exit, 1)))
          )
        ),
        Effect.catchAll((error) => Deferred.fail(exit, error)),
        Effect.forkScoped
      )
      // The app's settings for its executors, as Spark's executors fetch them before registering.
      const config = yield* rpc.ask(
        Endpoints.ref(args.driver, Endpoints.scheduler),
        new ClusterMessages.RetrieveAppConfig({ resourceProfileId: 0 }),
        { timeout: 120_000 }
      )
      // Tasks read and write object storage as the app says, else as this process's environment does.
      const objectStore = ObjectStore.settingsOf(Object.fromEntries(config.properties), variables)
      const setting = (key: string, fallback: number) => {
        const value = Number(config.properties.find(([name]) => name === key)?.[1])
        return Number.isFinite(value) && value > 0 ? value : fallback
      }
      const asked = {
        spillThreshold: setting("kindling.shuffle.spill.threshold", 64 * 1024 * 1024),
        maxBytesInFlight: setting("kindling.reducer.maxSizeInFlight", 48 * 1024 * 1024)
      }
      // An executor of known memory shares what is left of it once started (measured now, before any task runs,
      // with what its task threads will hold once up, as they are still starting); otherwise it keeps to what the
      // app asked for.
      let budget: typeof asked & Partial<MemoryBudget.Budget> = asked
      const memory = setting("kindling.executor.memory", 0)
      if (memory > 0) {
        const baseline = process.memoryUsage.rss() + args.cores * MemoryBudget.threadStart
        const shared = MemoryBudget.share({ memory, baseline, cores: args.cores, ...asked })
        yield* Effect.logInfo(
          `Memory ${mib(memory)}: a task spills past ${mib(shared.spillThreshold)}, fetches hold ${
            mib(shared.maxBytesInFlight)
          }, the cache ${mib(shared.storageMemory)}`
        )
        budget = shared
      }
      // With the worker's shuffle service, the executor's files are in a directory of the worker's that stays when
      // it exits (the worker removes what it does not serve then, and the rest when the app has finished).
      const service = yield* shuffleServiceOf(
        variables,
        args.executorId,
        config.properties.some(([key, value]) => key === "kindling.shuffle.service.enabled" && value === "true")
      )
      yield* Executor.make({
        executorId: args.executorId,
        driver: args.driver,
        hostname: args.hostname,
        logUrls: logUrlsFromEnvironment(variables),
        threads: late.threads,
        heartbeatIntervalMillis: setting("kindling.executor.heartbeatInterval", 10_000),
        askTimeoutMillis: setting("kindling.rpc.askTimeout", 120_000),
        maxDirectResultSize: setting("kindling.task.maxDirectResultSize", 1024 * 1024),
        ...budget,
        maxInMemoryBlock: setting("kindling.network.maxRemoteBlockSizeFetchToMem", 1024 * 1024),
        objectStore,
        disk,
        localDir: service === undefined
          ? yield* blockManagerDir(disk, workDir)
          : yield* DiskOperations.attempt("mkdir", service.dir, () => disk.makeDirectory(service.dir)).pipe(
            Effect.as(service.dir)
          ),
        appId: args.appId,
        ...(service === undefined ? {} : { shuffleService: service.address }),
        validateState: environment.validateState ?? false,
        onExit: (code, reason) =>
          Effect.zipRight(
            code === 0 ? Effect.logInfo(reason) : Effect.logError(reason),
            Deferred.succeed(exit, code)
          )
      })
    }).pipe(Effect.provide(network))
    // Its exit may come before it has registered (its app cannot be fetched while it waits for its settings).
    return yield* Effect.raceFirst(Effect.zipRight(registered, Deferred.await(exit)), Deferred.await(exit))
  })

const mib = (bytes: number) => `${Math.round(bytes / 2 ** 20)} MiB`
