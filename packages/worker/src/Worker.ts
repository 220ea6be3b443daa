/**
 * The worker as a running role: its core (`WorkerCore`) in the kernel's shell on the RpcEnv in context, with the
 * worker's own commands carried out here — drivers and executors started and stopped through `Runners`, each in a
 * scope of its own, their ends reported back to the core, executor states synchronised with the master.
 *
 * @since 0.1.0
 */
import { DiskOperations, Shell } from "@kindling/kernel"
import { Descriptions, Endpoints, Errors, Ids, type RpcAddress, type States } from "@kindling/protocol"
import { RpcEnv } from "@kindling/rpc"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as DriverRunner from "./DriverRunner.js"
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
  readonly driverFencing: WorkerCore.Config["driverFencing"]
  /** The first wait before a failed supervised driver runs again (`kindling.worker.supervise.initialBackoff`). */
  readonly superviseInitialBackoffMillis: number
  /** `kindling.decommission.enabled` (on unless given). */
  readonly decommissionEnabled?: boolean
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
  /** Decommissions the worker, as its decommission signal does: it tells its master, and exits once empty. */
  readonly decommission: Effect.Effect<void>
}

type Host = Shell.Host<WorkerCore.Local>
type RunEnded = Extract<WorkerCore.Local, { _tag: "DriverProcessEnded" | "DriverLaunchFailed" }>
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
    const drivers = new Map<
      Ids.DriverId,
      { readonly handle: DriverRunner.DriverHandle; readonly scope: Scope.CloseableScope }
    >()
    const executors = new Map<string, ExecutorRunner.ExecutorHandle>()

    // Each runner gets a scope of its own, closed when it ends, so a long-lived worker does not accumulate them.
    // A stopping worker closes them all at once: each may wait out its terminate timeout, and the worker must be
    // gone within one timeout, not one per process.
    const allRunners = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.parallel)
    const runnerScope = Scope.fork(allRunners, ExecutionStrategy.sequential)

    // One ask of the master; the core decides what follows from the outcome it is told (`internal/stateSync.ts`).
    const sync = (command: CommandOf<"SyncState">, host: Host) =>
      Effect.sync(() =>
        host.fork(
          Effect.either(rpc.ask(command.to, command.message, { timeout: options.askTimeoutMillis })).pipe(
            Effect.map((outcome) => {
              const { askId, key } = command
              if (outcome._tag === "Left") {
                const { left: error } = outcome
                return host.feed({
                  _tag: "StateSyncFailed",
                  key,
                  askId,
                  reason: error.message,
                  timedOut: error instanceof Errors.AskTimeout
                })
              }
              // A standby answers a driver's end with false; an executor's state has no answer but the reply.
              return host.feed({ _tag: "StateSyncAnswered", key, askId, taken: outcome.right !== false })
            })
          )
        )
      )

    // One run of a driver's process, its end told to the core, which decides what follows: the driver's end, or
    // (supervised and failed) another run after its back-off, which it asks for with `RestartDriver`.
    const runDriver = (driverId: Ids.DriverId, handle: DriverRunner.DriverHandle, host: Host) =>
      host.fork(
        Effect.map(handle.run, (end) =>
          host.feed(DriverRunner.RunEnd.$match(end, {
            Exited: ({ exitCode, failure }): RunEnded => ({
              _tag: "DriverProcessEnded",
              driverId,
              exitCode,
              exception: Option.getOrUndefined(failure)
            }),
            NotStarted: (): RunEnded => ({
              _tag: "DriverProcessEnded",
              driverId,
              exitCode: undefined,
              exception: undefined
            }),
            LaunchFailed: ({ exception }): RunEnded => ({ _tag: "DriverLaunchFailed", driverId, exception })
          })))
      )

    // A launch that fails before its runner exists is reported as a run's would be: ERROR.
    const launchDriver = (command: CommandOf<"LaunchDriver">, host: Host) =>
      Effect.gen(function*() {
        const scope = yield* runnerScope
        const mirrors = command.master === undefined ? [] : [command.master]
        const handle = yield* runners.driver(command.driverId, command.desc, identity, mirrors).pipe(
          Scope.extend(scope),
          Effect.onError(() => Scope.close(scope, Exit.void))
        )
        drivers.set(command.driverId, { handle, scope })
        runDriver(command.driverId, handle, host)
      }).pipe(
        Effect.catchAllCause((cause) =>
          Effect.sync(() =>
            host.feed({
              _tag: "DriverLaunchFailed",
              driverId: command.driverId,
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
        case "RestartDriver":
          return Effect.sync(() => {
            const driver = drivers.get(command.driverId)
            if (driver !== undefined) runDriver(command.driverId, driver.handle, host)
          })
        case "KillDriver":
          return Effect.sync(() => {
            const driver = drivers.get(command.driverId)
            if (driver !== undefined) host.fork(driver.handle.kill)
          })
        // Closing its scope lets go of what the runner holds; each runner gets a scope of its own, so that a
        // long-lived worker does not accumulate them.
        case "ReleaseDriver":
          return Effect.sync(() => {
            const driver = drivers.get(command.driverId)
            if (driver === undefined) return
            drivers.delete(command.driverId)
            host.fork(Scope.close(driver.scope, Exit.void))
          })
        case "LaunchExecutor":
          return launchExecutor(command, host)
        case "KillExecutor":
          return Effect.sync(() => {
            const handle = executors.get(Ids.fullExecutorId(command.appId, command.execId))
            if (handle !== undefined) host.fork(handle.kill)
          })
        // A cleanup that fails is logged here, never a failure of the worker: what it leaves behind only takes
        // space.
        case "CleanupApplication":
          return Effect.sync(() => host.fork(DiskOperations.logged(runners.cleanupApplication(command.appId))))
        case "CleanupWorkDir":
          return Effect.sync(() =>
            host.fork(DiskOperations.logged(runners.cleanupWorkDir(command.keep, command.ttlMillis)))
          )
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
        workDir: options.workDir,
        executorStateSyncMaxAttempts: options.executorStateSyncMaxAttempts,
        askTimeoutMillis: options.askTimeoutMillis,
        driverFencing: options.driverFencing,
        superviseInitialBackoffMillis: options.superviseInitialBackoffMillis,
        decommissionEnabled: options.decommissionEnabled
      }),
      interpret,
      validateState: options.validateState ?? false,
      onExit: options.onExit
    })

    return {
      id: options.workerId,
      address,
      state: shell.read(WorkerCore.workerState),
      decommission: Effect.sync(() => shell.feed({ _tag: "DecommissionSignal" }))
    }
  })
