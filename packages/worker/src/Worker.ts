/**
 * The worker's Effect shell: the `Worker` endpoint on the RpcEnv, the timers, the driver and executor runners
 * and the work directory. It feeds every input to the core one at a time and carries out what it returns.
 *
 * @since 0.1.0
 */
import {
  Descriptions,
  EndpointNames,
  Errors,
  type Ids,
  Outbox,
  RpcAddress,
  RpcEnv,
  type WorkerMessages
} from "@kindling/protocol"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as FiberMap from "effect/FiberMap"
import * as FiberSet from "effect/FiberSet"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import * as DriverRunner from "./DriverRunner.js"
import * as ExecutorRunner from "./ExecutorRunner.js"
import { ProcessLauncher } from "./ProcessLauncher.js"
import * as WorkerCore from "./WorkerCore.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly workerId: Ids.WorkerId
  readonly cores: number
  readonly memory: number
  readonly masters: ReadonlyArray<RpcAddress.RpcAddress>
  readonly webUiUrl: string
  readonly workDir: string
  /** Executors' scratch directories, one per app, deleted when the app is finished (Spark's local dirs). */
  readonly localDir: string
  readonly workerTimeoutMillis: number
  readonly registration: Omit<WorkerCore.RegistrationSchedule, "fuzz">
  /** Scales the registration intervals; drawn once per process in [0.5, 1.5) when not given. */
  readonly fuzz?: number
  readonly cleanup: WorkerCore.Config["cleanup"]
  readonly retainedExecutors: number
  readonly retainedDrivers: number
  readonly driverTerminateTimeoutMillis: number
  readonly executorTerminateTimeoutMillis: number
  readonly superviseInitialBackoffMillis: number
  readonly executorStateSyncMaxAttempts: number
  readonly askTimeoutMillis: number
  /** Turns a command's module specifier into the file to run (default: Node's resolution from here). */
  readonly resolveModule?: (specifier: string) => string
  /** Called when the worker must exit (registration refused or given up, state sync failed). */
  readonly onExit: (code: number, reason: string) => Effect.Effect<void>
}

/**
 * A running worker.
 *
 * @since 0.1.0
 * @category models
 */
export interface Worker {
  readonly id: Ids.WorkerId
  readonly address: RpcAddress.RpcAddress
  readonly state: Effect.Effect<ReturnType<typeof WorkerCore.workerState>>
}

const defaultResolveModule = (specifier: string): string => {
  if (specifier.startsWith("file:")) return fileURLToPath(specifier)
  if (Path.isAbsolute(specifier)) return specifier
  return fileURLToPath(import.meta.resolve(specifier))
}

const timerInput: Record<WorkerCore.Timer, WorkerCore.Input> = {
  registration: { _tag: "ReregisterWithMaster" },
  heartbeat: { _tag: "SendHeartbeat" },
  cleanup: { _tag: "WorkDirCleanup" }
}

const inboundTags: ReadonlyArray<string> = WorkerCore.Inbound.members.flatMap((union) =>
  "members" in union ? union.members.map((member) => member._tag) : [(union as { _tag: string })._tag]
)

// The newest modification time of anything under `path`; links are not followed.
const newestChange = async (path: string): Promise<number> => {
  const stat = await Fs.lstat(path)
  if (!stat.isDirectory()) return stat.mtimeMs
  let newest = stat.mtimeMs
  for (const entry of await Fs.readdir(path)) newest = Math.max(newest, await newestChange(Path.join(path, entry)))
  return newest
}

/**
 * Starts a worker on the RpcEnv in context and registers it with the masters; it stops, and stops everything
 * it started, when the scope closes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: Options
): Effect.Effect<Worker, RpcEnv.EndpointAlreadyRegistered, RpcEnv.RpcEnv | ProcessLauncher | Scope.Scope> =>
  Effect.gen(function*() {
    const rpc = yield* RpcEnv.RpcEnv
    const address = rpc.address!
    const self = RpcAddress.endpoint(address, EndpointNames.worker)
    const workerUrl = self.toString()
    const resolveModule = options.resolveModule ?? defaultResolveModule
    const launcher = yield* ProcessLauncher
    yield* Effect.promise(() => Fs.mkdir(options.workDir, { recursive: true }))
    const core = WorkerCore.make({
      workerId: options.workerId,
      self,
      webUiUrl: options.webUiUrl,
      cores: options.cores,
      memory: options.memory,
      masters: options.masters.map((master) => RpcAddress.endpoint(master, EndpointNames.master)),
      workerTimeoutMillis: options.workerTimeoutMillis,
      registration: { ...options.registration, fuzz: options.fuzz ?? 0.5 + Math.random() },
      cleanup: options.cleanup,
      retainedExecutors: options.retainedExecutors,
      retainedDrivers: options.retainedDrivers,
      workDir: options.workDir
    })

    const lock = yield* Effect.makeSemaphore(1)
    const scope = yield* Effect.scope
    const timers = yield* FiberMap.make<WorkerCore.Timer>()
    const background = yield* FiberSet.make()
    const fork = yield* FiberSet.runtime(background)<never>()
    const post = yield* Outbox.make(rpc)
    const drivers = new Map<Ids.DriverId, DriverRunner.DriverHandle>()
    const executors = new Map<string, ExecutorRunner.ExecutorHandle>()
    // The apps whose scratch dirs this worker made: only those are ever deleted for an ApplicationFinished.
    const appDirectories = new Set<string>()

    // Each executor's state changes are asked in order, one at a time, each retried before the next; different
    // executors' go in parallel. Every attempt goes to the master of the moment, which may have changed.
    const syncLocks = new Map<string, { readonly lock: Effect.Semaphore; pending: number }>()
    const syncOnce = (command: WorkerCore.Command & { _tag: "SyncExecutorState" }) =>
      Effect.gen(function*() {
        for (let attempt = 1;; attempt++) {
          const to = WorkerCore.activeMaster(core) ?? command.to
          const outcome = yield* Effect.either(rpc.ask(to, command.message, { timeout: options.askTimeoutMillis }))
          if (outcome._tag === "Right") return
          if (attempt >= options.executorStateSyncMaxAttempts) {
            const reason = `Failed to send ${command.message._tag} to ${to.toString()} ` +
              `${attempt} times (${outcome.left.message}); giving up`
            yield* Effect.logError(reason)
            return yield* options.onExit(1, reason)
          }
          yield* Effect.logWarning(
            `Failed to send ${command.message._tag} (attempt ${attempt}): ${outcome.left.message}`
          )
          // A timeout has already waited; anything else waits as long before trying again.
          if (!(outcome.left instanceof Errors.AskTimeout)) yield* Effect.sleep(options.askTimeoutMillis)
        }
      })
    const sync = (command: WorkerCore.Command & { _tag: "SyncExecutorState" }) =>
      Effect.sync(() => {
        const key = `${command.message.appId}/${command.message.execId}`
        let entry = syncLocks.get(key)
        if (entry === undefined) {
          entry = { lock: Effect.unsafeMakeSemaphore(1), pending: 0 }
          syncLocks.set(key, entry)
        }
        const held = entry
        held.pending++
        fork(
          held.lock.withPermits(1)(syncOnce(command)).pipe(
            Effect.ensuring(Effect.sync(() => {
              // Forget the lock once nothing waits on it, so finished executors leave nothing behind.
              if (--held.pending === 0 && syncLocks.get(key) === held) syncLocks.delete(key)
            }))
          )
        )
      })

    // Each runner gets a scope of its own, closed when it ends, so a long-lived worker does not accumulate them.
    const runnerScope = Scope.fork(scope, ExecutionStrategy.sequential)
    const runInScope = <A>(start: Effect.Effect<A, never, Scope.Scope | ProcessLauncher>) =>
      Effect.flatMap(
        runnerScope,
        (child) =>
          start.pipe(
            Scope.extend(child),
            Effect.provideService(ProcessLauncher, launcher),
            Effect.map((handle) => ({ handle, close: Scope.close(child, Exit.void) }))
          )
      )

    // A launch that fails here (not in the runner, which reports its own failures) is reported as the runner
    // would: ERROR for a driver, FAILED for an executor. The report is fed later: this runs inside a step.
    const launchDriver = (command: WorkerCore.Command & { _tag: "LaunchDriver" }) =>
      Effect.gen(function*() {
        const { close, handle } = yield* runInScope(
          DriverRunner.start({
            driverId: command.driverId,
            description: command.desc,
            workDir: options.workDir,
            workerUrl,
            terminateTimeout: options.driverTerminateTimeoutMillis,
            initialBackoff: options.superviseInitialBackoffMillis,
            resolveModule
          })
        )
        drivers.set(command.driverId, handle)
        fork(
          handle.result.pipe(
            Effect.flatMap((result) => {
              drivers.delete(command.driverId)
              return feed({
                _tag: "DriverEnded",
                driverId: command.driverId,
                state: result.state,
                exception: Option.getOrUndefined(result.exception)
              })
            }),
            Effect.ensuring(close)
          )
        )
      }).pipe(
        Effect.catchAllCause((cause) =>
          Effect.sync(() =>
            fork(
              feed({
                _tag: "DriverEnded",
                driverId: command.driverId,
                state: "ERROR",
                exception: new Descriptions.RemoteException({ name: "LaunchFailed", message: Cause.pretty(cause) })
              }).pipe(Effect.asVoid)
            )
          )
        )
      )

    const launchExecutor = (command: WorkerCore.Command & { _tag: "LaunchExecutor" }) =>
      Effect.gen(function*() {
        const localDirs = Path.join(options.localDir, command.appId)
        const appDesc = new Descriptions.ApplicationDescription({
          ...command.appDesc,
          command: new Descriptions.Command({
            ...command.appDesc.command,
            environment: { ...command.appDesc.command.environment, KINDLING_EXECUTOR_DIRS: localDirs }
          })
        })
        yield* Effect.tryPromise(() => Fs.mkdir(localDirs, { recursive: true }))
        appDirectories.add(command.appId)
        const { close, handle } = yield* runInScope(
          ExecutorRunner.start({
            appId: command.appId,
            execId: command.execId,
            appDesc,
            cores: command.cores,
            memory: command.memory,
            hostname: address.host,
            workDir: options.workDir,
            workerUrl,
            terminateTimeout: options.executorTerminateTimeoutMillis,
            resolveModule
          })
        )
        const fullId = `${command.appId}/${command.execId}`
        executors.set(fullId, handle)
        const report = (state: WorkerMessages.ExecutorStateChanged["state"], message?: string, exitStatus?: number) =>
          feed({ _tag: "ExecutorChanged", appId: command.appId, execId: command.execId, state, message, exitStatus })
        fork(
          Effect.gen(function*() {
            // `running` completes before `result` whenever the process started, and never otherwise.
            const started = yield* Effect.raceFirst(
              Effect.as(handle.running, true),
              Effect.as(handle.result, false)
            )
            if (started) yield* report("RUNNING")
            const result = yield* handle.result
            executors.delete(fullId)
            yield* report(result.state, Option.getOrUndefined(result.message), Option.getOrUndefined(result.exitStatus))
          }).pipe(Effect.ensuring(close))
        )
      }).pipe(
        Effect.catchAllCause((cause) =>
          Effect.sync(() =>
            fork(
              feed({
                _tag: "ExecutorChanged",
                appId: command.appId,
                execId: command.execId,
                state: "FAILED",
                message: Cause.pretty(cause),
                exitStatus: undefined
              }).pipe(Effect.asVoid)
            )
          )
        )
      )

    const cleanupWorkDir = (keep: ReadonlyArray<string>, ttlMillis: number) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const entries = yield* Effect.promise(() => Fs.readdir(options.workDir))
        for (const entry of entries) {
          if (keep.includes(entry)) continue
          const path = Path.join(options.workDir, entry)
          // Only directories (an app's or a driver's), as Spark.
          if (!(yield* Effect.promise(() => Fs.lstat(path))).isDirectory()) continue
          const newest = yield* Effect.promise(() => newestChange(path))
          if (newest < now - ttlMillis) {
            yield* Effect.logInfo(`Removing old work dir ${path}`)
            yield* Effect.promise(() => Fs.rm(path, { recursive: true, force: true }))
          }
        }
      }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("Work dir cleanup failed", cause)))

    const interpret = (command: WorkerCore.Command): Effect.Effect<unknown> => {
      switch (command._tag) {
        case "Send":
          return Effect.sync(() => post(command.to, command.message))
        case "SyncExecutorState":
          return sync(command)
        case "StartTimer":
          return FiberMap.run(
            timers,
            command.timer,
            Effect.sleep(command.delayMillis).pipe(
              Effect.zipRight(
                Effect.repeat(feed(timerInput[command.timer]), Schedule.fixed(Duration.millis(command.periodMillis)))
              )
            )
          )
        case "CancelTimer":
          return FiberMap.remove(timers, command.timer)
        case "LaunchDriver":
          return launchDriver(command)
        case "KillDriver":
          return Effect.sync(() => {
            const handle = drivers.get(command.driverId)
            if (handle !== undefined) fork(handle.kill)
          })
        case "LaunchExecutor":
          return launchExecutor(command)
        case "KillExecutor":
          return Effect.sync(() => {
            const handle = executors.get(`${command.appId}/${command.execId}`)
            if (handle !== undefined) fork(handle.kill)
          })
        case "CleanupApplication":
          return Effect.sync(() => {
            if (!appDirectories.delete(command.appId)) return
            fork(
              Effect.tryPromise(() =>
                Fs.rm(Path.join(options.localDir, command.appId), { recursive: true, force: true })
              ).pipe(
                Effect.catchAllCause((cause) => Effect.logWarning(`Cleaning up ${command.appId} failed`, cause))
              )
            )
          })
        case "CleanupWorkDir":
          return Effect.sync(() => fork(cleanupWorkDir(command.keep, command.ttlMillis)))
        case "Reply":
          return Effect.void
        case "Exit":
          return options.onExit(command.code, command.reason)
        case "Log":
          return command.level === "Info"
            ? Effect.logInfo(command.message)
            : command.level === "Warning"
            ? Effect.logWarning(command.message)
            : Effect.logError(command.message)
      }
    }

    // Returns what the core replied, for the one query that has a reply.
    function feed(input: WorkerCore.Input): Effect.Effect<unknown> {
      return lock.withPermits(1)(
        Effect.suspend(() => {
          const commands = WorkerCore.step(core, input)
          const reply = commands.find((command) => command._tag === "Reply")
          return Effect.forEach(commands, interpret, { discard: true }).pipe(
            Effect.as(reply?._tag === "Reply" ? reply.value : undefined)
          )
        })
      )
    }

    const receive = (message: WorkerCore.Inbound) => feed({ _tag: "Receive", message })
    yield* rpc.register(EndpointNames.worker, {
      inbound: WorkerCore.Inbound,
      handlers: Object.fromEntries(inboundTags.map((tag) => [tag, receive])) as unknown as RpcEnv.Handlers<
        WorkerCore.Inbound,
        never
      >,
      onDisconnected: (peer) => feed({ _tag: "Disconnected", peer }).pipe(Effect.asVoid)
    })
    yield* Effect.logInfo(
      `Starting Kindling worker ${address.hostPort} with ${options.cores} cores, ${options.memory} MB RAM`
    )
    yield* feed({ _tag: "Start" })

    return {
      id: options.workerId,
      address,
      state: lock.withPermits(1)(Effect.sync(() => WorkerCore.workerState(core)))
    }
  })
