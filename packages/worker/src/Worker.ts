/**
 * The worker as a running role: its core (`WorkerCore`) in the kernel's shell on the RpcEnv in context, with the
 * worker's own commands carried out here — drivers and executors started and stopped through `Runners`, each in a
 * scope of its own, their ends reported back to the core, executor states synchronised with the master.
 *
 * @since 0.1.0
 */
import { Shell } from "@kindling/kernel"
import { Descriptions, Endpoints, Errors, Ids, type RpcAddress, RpcEnv, type States } from "@kindling/protocol"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import type * as DriverRunner from "./DriverRunner.js"
import type * as ExecutorRunner from "./ExecutorRunner.js"
import { Runners } from "./Runners.js"
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
  /** Where the runners keep their directories, for the state the worker reports. */
  readonly workDir: string
  readonly workerTimeoutMillis: number
  readonly registration: Omit<WorkerCore.RegistrationSchedule, "fuzz">
  /** Scales the registration intervals; drawn once per process in [0.5, 1.5) when not given. */
  readonly fuzz?: number
  readonly cleanup: WorkerCore.Config["cleanup"]
  readonly retainedExecutors: number
  readonly retainedDrivers: number
  readonly executorStateSyncMaxAttempts: number
  readonly askTimeoutMillis: number
  /** Check the core's invariants after every step (`kindling.debug.validateState`). */
  readonly validateState?: boolean
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

type Host = Shell.Host<WorkerCore.Local>
type CommandOf<Tag extends WorkerCore.WorkerCommand["_tag"]> = Extract<WorkerCore.WorkerCommand, { _tag: Tag }>

/**
 * Starts a worker on the RpcEnv in context and registers it with the masters; it stops, and stops everything
 * it started, when the scope closes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: Options
): Effect.Effect<
  Worker,
  Shell.NotListening | RpcEnv.EndpointAlreadyRegistered,
  RpcEnv.RpcEnv | Runners | Scope.Scope
> =>
  Effect.gen(function*() {
    const rpc = yield* RpcEnv.RpcEnv
    const runners = yield* Runners
    const address = yield* Shell.listeningAddress(Endpoints.worker)
    const self = Endpoints.ref(address, Endpoints.worker)
    const identity = { workerUrl: self.toString(), hostname: address.host, webUiUrl: options.webUiUrl }
    const drivers = new Map<Ids.DriverId, DriverRunner.DriverHandle>()
    const executors = new Map<string, ExecutorRunner.ExecutorHandle>()

    // Each runner gets a scope of its own, closed when it ends, so a long-lived worker does not accumulate them.
    // A stopping worker closes them all at once: each may wait out its terminate timeout, and the worker must be
    // gone within one timeout, not one per process.
    const allRunners = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.parallel)
    const runnerScope = Scope.fork(allRunners, ExecutionStrategy.sequential)

    // Each executor's state changes (and each driver's end) are asked in order, one at a time, each retried before
    // the next; different executors' go in parallel. Every attempt goes to the master of the moment, which may
    // have changed. An executor state no master takes stops the worker, as Spark; a driver's end is kept, and told
    // again when the worker next registers.
    const syncLocks = new Map<string, { readonly lock: Effect.Semaphore; pending: number }>()
    const syncOnce = (command: CommandOf<"SyncState">, host: Host) =>
      Effect.gen(function*() {
        const { message } = command
        for (let attempt = 1;; attempt++) {
          const to = (yield* shell.read(WorkerCore.activeMaster)) ?? command.to
          const outcome = yield* Effect.either(rpc.ask(to, message, { timeout: options.askTimeoutMillis }))
          if (outcome._tag === "Right") {
            if (message._tag !== "DriverStateChanged") return
            // A standby answers false: the end stays unheard, for the leader the worker registers with next.
            if (outcome.right) return host.feed({ _tag: "DriverEndHeard", driverId: message.driverId })
            return yield* Effect.logInfo(
              `The master is a standby; the end of driver ${message.driverId} is told to the next leader`
            )
          }
          if (attempt >= options.executorStateSyncMaxAttempts) {
            const reason = `Failed to send ${message._tag} to ${to.toString()} ${attempt} times ` +
              `(${outcome.left.message}); giving up`
            if (message._tag === "DriverStateChanged") {
              return yield* Effect.logWarning(`${reason}; it is told again when the worker next registers`)
            }
            // Spark's worker exits here. While it has no master at all, that would only lose what it runs: the
            // master it registers with next learns what still runs from it, and drops the rest.
            if (!(yield* shell.read(WorkerCore.isConnected))) {
              return yield* Effect.logWarning(`${reason}; the master reconciles it when the worker next registers`)
            }
            yield* Effect.logError(reason)
            return yield* options.onExit(1, reason)
          }
          yield* Effect.logWarning(`Failed to send ${message._tag} (attempt ${attempt}): ${outcome.left.message}`)
          // A timeout has already waited; anything else waits as long before trying again.
          if (!(outcome.left instanceof Errors.AskTimeout)) yield* Effect.sleep(options.askTimeoutMillis)
        }
      })
    const sync = (command: CommandOf<"SyncState">, host: Host) =>
      Effect.sync(() => {
        const { message } = command
        const key = message._tag === "DriverStateChanged"
          ? message.driverId
          : Ids.fullExecutorId(message.appId, message.execId)
        let entry = syncLocks.get(key)
        if (entry === undefined) {
          entry = { lock: Effect.unsafeMakeSemaphore(1), pending: 0 }
          syncLocks.set(key, entry)
        }
        const held = entry
        held.pending++
        host.fork(
          held.lock.withPermits(1)(syncOnce(command, host)).pipe(
            Effect.ensuring(Effect.sync(() => {
              // Forget the lock once nothing waits on it, so finished executors leave nothing behind.
              if (--held.pending === 0 && syncLocks.get(key) === held) syncLocks.delete(key)
            }))
          )
        )
      })

    // A launch that fails before its runner exists is reported as the runner would: ERROR for a driver, FAILED
    // for an executor.
    const launchDriver = (command: CommandOf<"LaunchDriver">, host: Host) =>
      Effect.gen(function*() {
        const scope = yield* runnerScope
        const handle = yield* runners.driver(command.driverId, command.desc, identity).pipe(Scope.extend(scope))
        drivers.set(command.driverId, handle)
        host.fork(
          handle.result.pipe(
            Effect.flatMap((result) =>
              Effect.sync(() => {
                drivers.delete(command.driverId)
                host.feed({
                  _tag: "DriverEnded",
                  driverId: command.driverId,
                  state: result.state,
                  exception: Option.getOrUndefined(result.exception)
                })
              })
            ),
            Effect.ensuring(Scope.close(scope, Exit.void))
          )
        )
      }).pipe(
        Effect.catchAllCause((cause) =>
          Effect.sync(() =>
            host.feed({
              _tag: "DriverEnded",
              driverId: command.driverId,
              state: "ERROR",
              exception: new Descriptions.RemoteException({
                name: "DriverLaunchFailed",
                message:
                  new Errors.DriverLaunchFailed({ driverId: command.driverId, reason: Cause.pretty(cause) }).message
              })
            })
          )
        )
      )

    const launchExecutor = (command: CommandOf<"LaunchExecutor">, host: Host) =>
      Effect.gen(function*() {
        const scope = yield* runnerScope
        const report = (state: States.ExecutorState, message?: string, exitStatus?: number) =>
          host.feed({
            _tag: "ExecutorChanged",
            appId: command.appId,
            execId: command.execId,
            state,
            message,
            exitStatus
          })
        const handle = yield* runners.executor(command, identity).pipe(
          Scope.extend(scope),
          Effect.tapError(() => Scope.close(scope, Exit.void))
        )
        const fullId = Ids.fullExecutorId(command.appId, command.execId)
        executors.set(fullId, handle)
        host.fork(
          Effect.gen(function*() {
            // `running` completes before `result` whenever the process started, and never otherwise.
            const started = yield* Effect.raceFirst(Effect.as(handle.running, true), Effect.as(handle.result, false))
            if (started) report("RUNNING")
            const result = yield* handle.result
            executors.delete(fullId)
            report(result.state, Option.getOrUndefined(result.message), Option.getOrUndefined(result.exitStatus))
          }).pipe(Effect.ensuring(Scope.close(scope, Exit.void)))
        )
      }).pipe(
        Effect.catchAllCause((cause) =>
          Effect.sync(() =>
            host.feed({
              _tag: "ExecutorChanged",
              appId: command.appId,
              execId: command.execId,
              state: "FAILED",
              message: new Errors.ExecutorLaunchFailed({
                appId: command.appId,
                execId: command.execId,
                reason: Option.match(Cause.failureOption(cause), {
                  onNone: () => Cause.pretty(cause),
                  onSome: (error) => error.message
                })
              }).message,
              exitStatus: undefined
            })
          )
        )
      )

    const interpret = (command: WorkerCore.WorkerCommand, host: Host): Effect.Effect<void> => {
      switch (command._tag) {
        case "SyncState":
          return sync(command, host)
        case "LaunchDriver":
          return launchDriver(command, host)
        case "KillDriver":
          return Effect.sync(() => {
            const handle = drivers.get(command.driverId)
            if (handle !== undefined) host.fork(handle.kill)
          })
        case "LaunchExecutor":
          return launchExecutor(command, host)
        case "KillExecutor":
          return Effect.sync(() => {
            const handle = executors.get(Ids.fullExecutorId(command.appId, command.execId))
            if (handle !== undefined) host.fork(handle.kill)
          })
        case "CleanupApplication":
          return Effect.sync(() => host.fork(runners.cleanupApplication(command.appId)))
        case "CleanupWorkDir":
          return Effect.sync(() => host.fork(runners.cleanupWorkDir(command.keep, command.ttlMillis)))
      }
    }

    yield* Effect.logInfo(
      `Starting Kindling worker ${address.hostPort} with ${options.cores} cores, ${options.memory} MB RAM`
    )
    const shell: Shell.Shell<WorkerCore.State, WorkerCore.Inbound, WorkerCore.Local> = yield* Shell.make({
      core: WorkerCore.core,
      state: WorkerCore.make({
        workerId: options.workerId,
        self,
        webUiUrl: options.webUiUrl,
        cores: options.cores,
        memory: options.memory,
        masters: options.masters.map((master) => Endpoints.ref(master, Endpoints.master)),
        workerTimeoutMillis: options.workerTimeoutMillis,
        registration: { ...options.registration, fuzz: options.fuzz ?? 0.5 + Math.random() },
        cleanup: options.cleanup,
        retainedExecutors: options.retainedExecutors,
        retainedDrivers: options.retainedDrivers,
        workDir: options.workDir
      }),
      interpret,
      validateState: options.validateState ?? false,
      onExit: options.onExit
    })

    return { id: options.workerId, address, state: shell.read(WorkerCore.workerState) }
  })
