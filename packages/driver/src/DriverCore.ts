/**
 * The driver's core (Spark's `CoarseGrainedSchedulerBackend` driver endpoint with its `DAGScheduler` and
 * `TaskSchedulerImpl`): the executors that registered with this app, and the jobs it runs. The DAG scheduler
 * (`DagScheduler`) cuts a job into stages and says which stage attempts run, as task sets; the task scheduler
 * (`TaskScheduler`) decides where each task runs; this core turns their decisions into messages — `LaunchTasks`
 * with the tasks' bytes, one per executor per step, `KillTask`, the map output locations reduce tasks ask for — and the jobs' results for
 * the shell.
 *
 * The two schedulers talk through a queue, as Spark's do through the DAG scheduler's event loop: what one decides
 * that the other must take (a task set to run, a stage aborted because a task failed too often) is queued, and
 * taken only once the batch of decisions that made it has been carried out whole. A batch is therefore always
 * carried out against the state it was decided in, and a decision never pulls the ground from under the ones
 * made beside it (a failing task's stage aborted, and its sibling stage cancelled, while the same batch still
 * held launches of that sibling's tasks). A launch whose task the DAG scheduler has dropped since is not sent,
 * and its attempt ends at once.
 *
 * The same core serves every mode: in `local` the executor is a role on the same node, on a cluster they are
 * processes that registered over TCP.
 *
 * Its records and transitions live in `internal/core/`: the records and the queue (`driverState`), the schedulers'
 * decisions carried out (`decisions`), executors (`executors`), status updates (`statusUpdates`), jobs (`jobs`),
 * where data is (`locations`), dynamic allocation (`allocation`), decommissioned executors (`decommissions`) and
 * the invariants (`validation`); the schedulers' own are in `internal/dag/` and `internal/tasks/`.
 *
 * @since 0.1.0
 */
import type { AppEvents } from "@kindling/app"
import { Core } from "@kindling/kernel"
import { ClusterMessages, Endpoints, type RpcAddress, type TaskPlan } from "@kindling/protocol"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type * as Schema from "effect/Schema"
import * as DagScheduler from "./DagScheduler.js"
import type * as DriverInputs from "./DriverInputs.js"
import type * as ExecutorAllocation from "./ExecutorAllocation.js"
import * as Allocation from "./internal/core/allocation.js"
import { sendLaunches, settle } from "./internal/core/decisions.js"
import * as Decommissions from "./internal/core/decommissions.js"
import type * as internal from "./internal/core/driverState.js"
import type { Step } from "./internal/core/driverState.js"
import { dag, schedule } from "./internal/core/driverState.js"
import {
  disconnected,
  executorHeartbeat,
  executorLost,
  executorRemoved,
  launchedExecutor,
  registerExecutor,
  timeOutExecutors
} from "./internal/core/executors.js"
import { cancelJob, submitJob } from "./internal/core/jobs.js"
import { mapOutputStatuses, unpersist, updateBlockInfo } from "./internal/core/locations.js"
import { statusUpdates } from "./internal/core/statusUpdates.js"
import * as validation from "./internal/core/validation.js"
import * as TaskScheduler from "./TaskScheduler.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Config {
  readonly scheduler: TaskScheduler.Config
  readonly dag: DagScheduler.Config
  /** How often offers are made again, besides on every event. */
  readonly reviveIntervalMillis: number
  /** An executor silent for this long is lost. */
  readonly executorTimeoutMillis: number
  /** How often stragglers are looked for, when speculation is on. */
  readonly speculationIntervalMillis: number
  /** The most bytes of results one job may bring back (0: no limit). */
  readonly maxResultSize: number
  /** How long a job may wait without any executor before the app says so (and again each time as long). */
  readonly starvationWarningMillis: number
  /** The app's configuration, as executors fetch it. */
  readonly properties: ReadonlyArray<readonly [string, string]>
  /** Dynamic allocation (`kindling.dynamicAllocation.*`), when it is on. */
  readonly allocation?: ExecutorAllocation.Config | undefined
  /** What decommissioning does (`Decommissions.defaults` unless given). */
  readonly decommission?: Decommissions.Config | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export type State = internal.State

/**
 * The driver's own inputs: its timers, and what the app and its cluster manager tell it (`DriverInputs`).
 *
 * @since 0.1.0
 * @category models
 */
export type Local = Schema.Schema.Type<typeof DriverInputs.Local>

/**
 * What the driver's shell does for the core.
 *
 * @since 0.1.0
 * @category models
 */
export type DriverCommand =
  /**
   * One task of the job succeeded; `outcome` is its `TaskPlan.TaskResult` (its value still encoded), or an
   * `IndirectTaskResult` to fetch from `from`, the executor's address — undefined when its bytes were unreadable.
   */
  | {
    readonly _tag: "TaskResult"
    readonly jobId: number
    readonly index: number
    readonly outcome: typeof TaskPlan.TaskOutcome.Encoded | undefined
    readonly from: RpcAddress.RpcAddress | undefined
  }
  | { readonly _tag: "JobSucceeded"; readonly jobId: number }
  | { readonly _tag: "JobFailed"; readonly jobId: number; readonly reason: string }
  /** A task succeeded having added these values to accumulators (by id): they count now, once. */
  | { readonly _tag: "AccumulatorUpdates"; readonly updates: ReadonlyArray<readonly [number, unknown]> }
  /** What the app's listeners hear of, in order. */
  | { readonly _tag: "Events"; readonly events: ReadonlyArray<AppEvents.AppEvent> }
  /** Dynamic allocation asks the cluster manager for this many executors in all. */
  | { readonly _tag: "RequestExecutors"; readonly total: number }
  /** Dynamic allocation gives these idle executors back. */
  | { readonly _tag: "KillExecutors"; readonly executorIds: ReadonlyArray<string> }

/**
 * @since 0.1.0
 * @category models
 */
export type Command = Core.Command<Local, DriverCommand>
type Inbound = ClusterMessages.ExecutorToDriver
type Input = Core.Input<Inbound, Local>

/**
 * @since 0.1.0
 * @category constructors
 */
export const make = (config: Config): State => ({
  config,
  scheduler: TaskScheduler.make(config.scheduler),
  dag: DagScheduler.make(config.dag),
  executors: new Map(),
  jobs: new Map(),
  blocks: new Map(),
  allocation: config.allocation === undefined ? undefined : Allocation.make(config.allocation),
  decommissions: new Map(),
  shuffleServices: new Map(),
  stopping: false,
  aborted: undefined
})

const handlers: Core.Handlers<Inbound, Step> = {
  RetrieveAppConfig: (step, _message, ask) =>
    Core.reply(
      step,
      ask,
      Exit.succeed(
        new ClusterMessages.AppConfig({
          properties: step.state.config.properties,
          ioEncryptionKey: Option.none(),
          delegationTokens: Option.none(),
          resourceProfile: new ClusterMessages.ResourceProfile({
            id: 0,
            executorCores: Option.none(),
            executorMemoryMb: Option.none(),
            executorResources: [],
            taskCpus: step.state.config.scheduler.cpusPerTask,
            taskResources: []
          })
        })
      )
    ),
  RegisterExecutor: registerExecutor,
  LaunchedExecutor: launchedExecutor,
  StatusUpdates: statusUpdates,
  ExecutorDecommissioning: (step, message, ask) => {
    Decommissions.decommission(step, message.executorId, "the executor asked to be decommissioned")
    Core.reply(step, ask, Exit.succeed(step.state.executors.has(message.executorId)))
  },
  ReadyToMigrate: Decommissions.readyToMigrate,
  BlocksMigrated: Decommissions.blocksMigrated,
  UpdateBlockInfo: updateBlockInfo,
  GetMapOutputStatuses: mapOutputStatuses,
  ShufflePushCompletion: () => {},
  IsExecutorAlive: (step, message, ask) =>
    Core.reply(step, ask, Exit.succeed(step.state.executors.has(message.executorId))),
  RemoveExecutor: (step, message) => executorLost(step, message.executorId, message.reason.message),
  ExecutorHeartbeat: executorHeartbeat
}

const handle = Core.inputs<Inbound, Local, Step>({
  Start: (step) => {
    const { state } = step
    Core.startTimer(
      step,
      "revive",
      { _tag: "ReviveOffers" },
      state.config.reviveIntervalMillis,
      state.config.reviveIntervalMillis
    )
    Core.startTimer(
      step,
      "executorTimeouts",
      { _tag: "CheckExecutorTimeouts" },
      state.config.executorTimeoutMillis,
      Math.max(1000, Math.floor(state.config.executorTimeoutMillis / 4))
    )
    Core.startTimer(
      step,
      "starvation",
      { _tag: "CheckStarvation" },
      state.config.starvationWarningMillis,
      state.config.starvationWarningMillis
    )
    if (state.allocation !== undefined) {
      const every = Allocation.intervalMillis
      Core.startTimer(step, "allocation", { _tag: "CheckAllocation" }, every, every)
    }
    const every = Decommissions.intervalMillis
    Core.startTimer(step, "decommissions", { _tag: "CheckDecommissions" }, every, every)
    if (state.config.scheduler.speculation.enabled) {
      const every = state.config.speculationIntervalMillis
      Core.startTimer(step, "speculation", { _tag: "CheckSpeculation" }, every, every)
    }
  },
  Receive: handlers,
  Disconnected: disconnected,
  SubmitJob: (step, input) => submitJob(step, input.job),
  ResubmitFailedStages: (step) => {
    dag(step, { _tag: "ResubmitFailedStages", now: step.now })
  },
  Unpersist: unpersist,
  CancelJob: (step, input) => cancelJob(step, input.jobId, input.reason),
  ExecutorRemoved: executorRemoved,
  ExecutorDecommissioned: (step, input) => Decommissions.decommission(step, input.executorId, input.reason),
  CheckDecommissions: Decommissions.check,
  ReviveOffers: (step) => {
    schedule(step, { _tag: "ReviveOffers", now: step.now })
  },
  CheckSpeculation: (step) => {
    schedule(step, { _tag: "CheckSpeculation", now: step.now })
  },
  CheckAllocation: Allocation.check,
  Stop: (step) => {
    const { state } = step
    state.stopping = true
    for (const executor of state.executors.values()) {
      Core.send(step, executor.ref, new ClusterMessages.StopExecutor())
    }
  },
  CheckStarvation: (step) => {
    const { state } = step
    if (state.dag.jobs.size > 0 && ![...state.executors.values()].some((executor) => executor.launched)) {
      Core.log(
        step,
        "Warning",
        "Initial job has not accepted any resources; check your cluster UI to ensure that workers are " +
          "registered and have sufficient resources"
      )
    }
  },
  Abort: (step, input) => {
    const { state } = step
    state.aborted = input.reason
    for (const jobId of [...state.dag.jobs.keys()]) cancelJob(step, jobId, input.reason)
  },
  CheckExecutorTimeouts: timeOutExecutors
})

/**
 * @since 0.1.0
 */
export const step = (state: State, input: Input): ReadonlyArray<Command> => {
  const step: Step = {
    state,
    now: input.now,
    commands: [],
    connection: input._tag === "Receive" ? input.connection : 0,
    work: [],
    launches: new Map(),
    events: undefined
  }
  handle(step, input)
  settle(step)
  sendLaunches(step)
  return step.commands
}

/**
 * What is wrong with the state, if anything: the invariants of both schedulers; every job known to the DAG
 * scheduler; every executor the task scheduler offers registered here; every task set of a stage the DAG
 * scheduler knows; and every running stage attempt with partitions to compute has a task set that can launch them
 * (else its job would wait for ever).
 *
 * @since 0.1.0
 */
export const validate: (state: State) => ReadonlyArray<string> = validation.validateDriver

/**
 * @since 0.1.0
 * @category models
 */
export const core: Core.Core<State, Inbound, Local, DriverCommand> = { endpoint: Endpoints.scheduler, step, validate }
