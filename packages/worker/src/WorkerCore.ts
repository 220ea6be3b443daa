/**
 * The worker's logic as a role core (`@kindling/kernel`'s `Core`), in the shape of `MasterCore`:
 * `step(state, input)` applies one input — a message from a master, a timer tick, a runner's report, a lost
 * connection — and returns commands: messages to send, processes to start or kill, timers to arm, directories to
 * clean, or an exit. Semantics are Spark 3.3's `Worker`. The transitions live in `internal/`, one module per
 * subject (registration, workload, snapshots).
 *
 * @since 0.1.0
 */
import { Core } from "@kindling/kernel"
import type { Descriptions, Ids, QueryMessages, RpcAddress, WorkerMessages } from "@kindling/protocol"
import { Endpoints } from "@kindling/protocol"
import * as Exit from "effect/Exit"
import type * as Schema from "effect/Schema"
import * as fencing from "./internal/fencing.js"
import * as registration from "./internal/registration.js"
import * as snapshots from "./internal/snapshots.js"
import type * as internal from "./internal/state.js"
import { exitIfDrained } from "./internal/state.js"
import * as stateSync from "./internal/stateSync.js"
import * as supervision from "./internal/supervision.js"
import * as validation from "./internal/validation.js"
import * as workload from "./internal/workload.js"
import type * as WorkerInputs from "./WorkerInputs.js"

/**
 * Everything the worker endpoint accepts.
 *
 * @since 0.1.0
 * @category models
 */
export type Inbound = Endpoints.Inbound["Worker"]

/**
 * Spark's registration schedule: 6 attempts about 10 s apart, then 10 more about 60 s apart, each interval
 * scaled by a factor drawn once per process so that workers restarted together do not retry in step.
 *
 * @since 0.1.0
 * @category models
 */
export interface RegistrationSchedule {
  readonly initialIntervalMillis: number
  readonly initialAttempts: number
  readonly prolongedIntervalMillis: number
  readonly maxAttempts: number
  /** In [0.5, 1.5). */
  readonly fuzz: number
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Config {
  readonly workerId: Ids.WorkerId
  /** This worker's endpoint, as masters should address it. */
  readonly self: RpcAddress.RefOf<"Worker">
  readonly webUiUrl: string
  readonly cores: number
  readonly memory: number
  /** The masters to register with, in the order given. */
  readonly masters: ReadonlyArray<RpcAddress.RefOf<"Master">>
  readonly workerTimeoutMillis: number
  readonly registration: RegistrationSchedule
  readonly cleanup: { readonly enabled: boolean; readonly intervalMillis: number; readonly appDataTtlMillis: number }
  readonly retainedExecutors: number
  readonly retainedDrivers: number
  /** Where the runners keep their directories, for the state the worker reports. */
  readonly workDir: string
  /** How many times an executor's state or a driver's end is asked of the master before giving up. */
  readonly executorStateSyncMaxAttempts: number
  /** How long the shell waits for an answer to an ask; after a failure that was not a timeout, the wait to retry. */
  readonly askTimeoutMillis: number
  /**
   * The fencing of supervised drivers, when on: `leaseMillis` after sending the last heartbeat a master acknowledged,
   * the worker stops them so that a master that lost it can relaunch them elsewhere without two copies running;
   * stopping one takes up to `terminateMillis` (the drivers' terminate timeout).
   */
  readonly driverFencing: { readonly leaseMillis: number; readonly terminateMillis: number } | undefined
  /**
   * The first wait before a supervised driver whose process failed runs again (Spark: 1 s); it doubles with each
   * failure in a row, and starts over after a run longer than `Supervision.successfulRunMillis`.
   */
  readonly superviseInitialBackoffMillis: number
  /**
   * Whether it can be decommissioned (`kindling.decommission.enabled`, on unless given): asked to, or signalled, it
   * takes no new work and exits once its executors and drivers have ended.
   */
  readonly decommissionEnabled?: boolean | undefined
}

/**
 * The worker's own inputs: its timers, its runners' reports and the outcomes of its state syncs (`WorkerInputs`).
 *
 * @since 0.1.0
 * @category models
 */
export type Local = Schema.Schema.Type<typeof WorkerInputs.Local>

/**
 * @since 0.1.0
 * @category models
 */
export type Input = Core.Input<Inbound, Local>

/**
 * The worker's own commands, besides the kernel's (send, reply, timers, logs, exit).
 *
 * @since 0.1.0
 * @category models
 */
export type WorkerCommand =
  /**
   * One ask of an executor's state or a driver's end, answered with `StateSyncAnswered` or `StateSyncFailed`
   * (with `key` and `askId`). The core decides what follows: the next message, a retry, or giving up
   * (`internal/stateSync.ts`).
   */
  | {
    readonly _tag: "SyncState"
    readonly key: string
    readonly askId: number
    readonly to: RpcAddress.RefOf<"Master">
    readonly message: WorkerMessages.ExecutorStateChanged | WorkerMessages.DriverStateChanged
  }
  | {
    readonly _tag: "LaunchDriver"
    readonly driverId: Ids.DriverId
    readonly desc: Descriptions.DriverDescription
    /** The master that launched it, which has the app's artifact by its digest if it took an upload of it. */
    readonly master: RpcAddress.RpcAddress | undefined
  }
  /** Starts a supervised driver's process again, in the work dir and with the artifact its launch prepared. */
  | { readonly _tag: "RestartDriver"; readonly driverId: Ids.DriverId }
  /** Stops the driver's process; its run ends with `DriverProcessEnded`, and the core decides how it ended. */
  | { readonly _tag: "KillDriver"; readonly driverId: Ids.DriverId }
  /** The driver has ended for good: what its runner holds is let go (its work dir stays, for the cleanup). */
  | { readonly _tag: "ReleaseDriver"; readonly driverId: Ids.DriverId }
  | {
    readonly _tag: "LaunchExecutor"
    readonly appId: Ids.AppId
    readonly execId: number
    readonly appDesc: Descriptions.ApplicationDescription
    readonly cores: number
    readonly memory: number
  }
  | { readonly _tag: "KillExecutor"; readonly appId: Ids.AppId; readonly execId: number }
  /** Deletes the app's local scratch directories: it is finished and none of its executors is left here. */
  | { readonly _tag: "CleanupApplication"; readonly appId: Ids.AppId }
  /** Deletes work-dir entries not named in `keep` that have nothing newer than the TTL. */
  | { readonly _tag: "CleanupWorkDir"; readonly keep: ReadonlyArray<string>; readonly ttlMillis: number }

/**
 * @since 0.1.0
 * @category models
 */
export type Command = Core.Command<Local, WorkerCommand>

/**
 * The worker's state; owned by the core, read through the accessors.
 *
 * @since 0.1.0
 * @category models
 */
export type State = internal.State

/**
 * @since 0.1.0
 * @category constructors
 */
export const make = (config: Config): State => ({
  config,
  registered: false,
  connected: false,
  master: undefined,
  masterWebUiUrl: undefined,
  registrationAttempts: 0,
  registrationTimer: "none",
  lastHeardAt: undefined,
  decommissioned: false,
  coresUsed: 0,
  memoryUsed: 0,
  drivers: new Map(),
  finishedDrivers: [],
  executors: new Map(),
  finishedExecutors: [],
  finishedApps: new Set(),
  appsWithData: new Set(),
  unheard: new Map(),
  syncs: new Map(),
  nextSyncAskId: 0,
  heartbeatsOut: new Map(),
  nextHeartbeat: 0,
  leaseFrom: undefined
})

const handle = Core.inputs<Inbound, Local, internal.Step>({
  Start: registration.registerWithMaster,
  Receive: {
    RegisteredWorker: registration.registered,
    RegisterWorkerFailed: registration.registrationFailed,
    MasterInStandby: registration.masterInStandby,
    HeartbeatAcknowledged: fencing.acknowledged,
    ReconnectWorker: registration.reconnect,
    MasterChanged: registration.masterChanged,
    LaunchExecutor: workload.launchExecutor,
    KillExecutor: workload.killExecutor,
    LaunchDriver: workload.launchDriver,
    KillDriver: supervision.killDriver,
    ApplicationFinished: workload.applicationFinished,
    DecommissionWorker: (step) => workload.decommission(step, "the master asked"),
    RequestWorkerState: (step, _, ask) => Core.reply(step, ask, Exit.succeed(snapshots.workerState(step.state)))
  },
  Disconnected: (step, input) => registration.disconnected(step, input.peer),
  DecommissionSignal: (step) => workload.decommission(step, "signalled"),
  ReregisterWithMaster: registration.reregisterWithMaster,
  SendHeartbeat: registration.sendHeartbeat,
  LeaseLapsed: (step) => {
    for (const driver of fencing.lapsed(step)) supervision.stop(step, driver, "fence")
  },
  WorkDirCleanup: workload.workDirCleanup,
  DriverLaunchFailed: (step, input) => supervision.ended(step, input.driverId, "ERROR", input.exception),
  DriverProcessEnded: supervision.processEnded,
  RelaunchDriver: supervision.relaunch,
  ExecutorChanged: workload.executorChanged,
  StateSyncAnswered: (step, input) => {
    stateSync.answered(step, input)
    exitIfDrained(step)
  },
  StateSyncFailed: (step, input) => {
    stateSync.failed(step, input)
    exitIfDrained(step)
  },
  RetryStateSync: (step, input) => stateSync.retry(step, input.key)
})

/**
 * Applies one input.
 *
 * @since 0.1.0
 * @category transitions
 */
export const step = (state: State, input: Input): ReadonlyArray<Command> => {
  const current: internal.Step = {
    state,
    now: input.now,
    commands: [],
    sender: input._tag === "Receive" ? input.sender : undefined
  }
  handle(current, input)
  return current.commands
}

/**
 * What is wrong with the state, if anything: resources counted as used are exactly what runs, a registered
 * worker has a master and no retry pending, the finished lists stay within their bounds.
 *
 * @since 0.1.0
 * @category validation
 */
export const validate: (state: State) => ReadonlyArray<string> = validation.validate

/**
 * The worker as a role for the kernel's shell.
 *
 * @since 0.1.0
 * @category constructors
 */
export const core: Core.Core<State, Inbound, Local, WorkerCommand> = { endpoint: Endpoints.worker, step, validate }

/**
 * The worker's state as the `RequestWorkerState` reply.
 *
 * @since 0.1.0
 * @category accessors
 */
export const workerState: (state: State) => QueryMessages.WorkerStateResponse = snapshots.workerState
