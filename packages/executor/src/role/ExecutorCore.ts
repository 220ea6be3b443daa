/**
 * The executor's core (Spark's `CoarseGrainedExecutorBackend`): it registers with its driver, then runs the tasks
 * the driver launches — up to its cores at once, the rest waiting for a core in the order they came (a driver
 * sends a few beyond its cores, `kindling.scheduler.queuedTasksPerCore`) — and reports their ends, those of one turn of the event loop in
 * one message; it kills tasks when asked, beats its heart with the running tasks (the driver's only news of a
 * task between its launch and its end: no `RUNNING` update is sent), and stops when told to or when its driver
 * goes away. Decommissioned, it takes no new work: once its tasks are over it offers its blocks for migration and
 * serves them until the driver, having had them copied to peers, stops it.
 *
 * @since 0.1.0
 */
import { Core } from "@kindling/kernel"
import { ClusterMessages, type Ids, type RpcAddress, type SharedVariables, type TaskPlan } from "@kindling/protocol"
// By its own path, not the index: an executor's bundle then leaves out the other roles' messages (see Endpoints).
import * as Endpoints from "@kindling/protocol/Endpoints"
import type * as Schema from "effect/Schema"
import type * as ExecutorInputs from "./ExecutorInputs.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Config {
  readonly executorId: Ids.ExecutorId
  readonly self: RpcAddress.Ref<ClusterMessages.DriverToExecutor>
  readonly driver: RpcAddress.Ref<ClusterMessages.ExecutorToDriver>
  readonly hostname: string
  readonly cores: number
  readonly heartbeatIntervalMillis: number
  /** Where its stdout and stderr can be read (its worker's log pages), for the app's UI. */
  readonly logUrls?: Readonly<Record<string, string>>
  /** Its worker's shuffle service, which serves its map outputs too: told to the driver when it registers. */
  readonly shuffleService?: RpcAddress.RpcAddress
}

/**
 * @since 0.1.0
 * @category models
 */
export interface State {
  readonly config: Config
  registered: boolean
  stopping: boolean
  /** Told to decommission; `offered` once its tasks were over and its blocks offered for migration. */
  decommission: "no" | "draining" | "offered"
  /** Running tasks, with the time they started. */
  readonly running: Map<number, number>
  /**
   * The highest task id launched here. The driver numbers tasks in increasing order and sends them on one
   * connection, so a launch at or below it is a repeated frame, never new work.
   */
  highestTaskId: number
}

/**
 * The executor's own inputs: its heartbeat timer, the driver's answer to its registration and its tasks' ends
 * (`ExecutorInputs`).
 *
 * @since 0.1.0
 * @category models
 */
export type Local = Schema.Schema.Type<typeof ExecutorInputs.Local>

/**
 * What the executor's shell does for the core.
 *
 * @since 0.1.0
 * @category models
 */
export type ExecutorCommand =
  /** Ask the driver to take this executor, and feed back `Registered` or `RegistrationFailed`. */
  | { readonly _tag: "Register"; readonly message: ClusterMessages.RegisterExecutor }
  /** Run the task: its encoded `TaskPlan.Task`, what it needs, and which attempt of which task it is. */
  | {
    readonly _tag: "RunTask"
    readonly taskId: number
    readonly task: Uint8Array
    readonly needs: TaskPlan.TaskNeeds
    readonly info: SharedVariables.TaskInfo
  }
  | { readonly _tag: "KillTask"; readonly taskId: number }
  /** Drop the blocks of a persisted dataset. */
  | { readonly _tag: "RemoveRdd"; readonly rddId: number }
  /** Fail the fetches from a lost executor, now and later. */
  | { readonly _tag: "ForgetPeer"; readonly address: RpcAddress.RpcAddress; readonly executorId: string }
  /** Serve this executor's blocks for migration, and tell the driver what they are (`ReadyToMigrate`). */
  | { readonly _tag: "OfferMigration" }
  /** Copy blocks from a decommissioning executor, and feed back `Migrated`. */
  | { readonly _tag: "Migrate"; readonly message: ClusterMessages.MigrateBlocks }
  /** Ask the driver; a failed heartbeat comes back as `HeartbeatFailed`. */
  | { readonly _tag: "Heartbeat"; readonly message: ClusterMessages.ExecutorHeartbeat }

/**
 * @since 0.1.0
 * @category models
 */
export type Command = Core.Command<Local, ExecutorCommand>
type Inbound = ClusterMessages.DriverToExecutor
type Input = Core.Input<Inbound, Local>
type Step = Core.Out<Local, ExecutorCommand> & { readonly state: State }

/**
 * @since 0.1.0
 * @category constructors
 */
export const make = (config: Config): State => ({
  config,
  registered: false,
  stopping: false,
  decommission: "no",
  running: new Map(),
  highestTaskId: -1
})

// Status updates are built from the core's own state: valid by construction, and checking each again is a good
// part of the cost of a small task.
const trusted = { disableValidation: true }

const stop = (step: Step, code: number, reason: string) => {
  const { state } = step
  if (state.stopping) return
  state.stopping = true
  for (const taskId of state.running.keys()) step.commands.push({ _tag: "KillTask", taskId })
  Core.exit(step, code, reason)
}

// A decommissioning executor whose last task is over offers its blocks, once.
const offerWhenDrained = (step: Step) => {
  const { state } = step
  if (state.decommission !== "draining" || state.running.size > 0 || state.stopping) return
  state.decommission = "offered"
  Core.log(step, "Info", "Decommissioning: no task runs here any more; offering this executor's blocks to peers")
  step.commands.push({ _tag: "OfferMigration" })
}

const tellStored = (step: Step, block: Schema.Schema.Type<typeof ExecutorInputs.Migrated>["stored"][number]) => {
  const { config } = step.state
  Core.send(
    step,
    config.driver,
    new ClusterMessages.UpdateBlockInfo({
      executorId: config.executorId,
      blockId: block.blockId,
      storageLevel: block.level,
      memSize: block.memSize,
      diskSize: block.diskSize
    }, trusted)
  )
}

const handlers: Core.Handlers<Inbound, Step> = {
  LaunchTasks: (step, message) => {
    const { state } = step
    for (const task of message.tasks) {
      if (state.stopping || task.taskId <= state.highestTaskId) continue
      state.highestTaskId = task.taskId
      state.running.set(task.taskId, step.now)
      step.commands.push({
        _tag: "RunTask",
        taskId: task.taskId,
        task: task.serializedTask,
        needs: task.needs,
        info: {
          stageId: task.stageId,
          stageAttemptNumber: task.stageAttemptId,
          partitionId: task.partitionId,
          attemptNumber: task.attemptNumber,
          taskAttemptId: task.taskId
        }
      })
    }
  },
  KillTask: (step, message) => {
    if (!step.state.running.has(message.taskId)) return
    Core.log(step, "Info", `Executor is trying to kill TID ${message.taskId}, reason: ${message.reason}`)
    step.commands.push({ _tag: "KillTask", taskId: message.taskId })
  },
  StopExecutor: (step) =>
    stop(step, 0, step.state.decommission === "no" ? "Driver commanded a shutdown" : "Decommissioned"),
  DecommissionExecutor: (step) => {
    const { state } = step
    if (state.stopping || state.decommission !== "no") return
    // The driver offers it no task from now on; the ones it runs (and any launched before this message) finish.
    Core.log(step, "Info", `Decommissioning: ${state.running.size} running task(s) finish, no new ones are taken`)
    state.decommission = "draining"
    offerWhenDrained(step)
  },
  MigrateBlocks: (step, message) => {
    if (step.state.stopping) return
    Core.log(
      step,
      "Info",
      `Copying ${message.mapOutputs.length} map output(s) and ${message.blocks.length} cached block(s) from ` +
        `decommissioning executor ${message.from}`
    )
    step.commands.push({ _tag: "Migrate", message })
  },
  UpdateDelegationTokens: () => {},
  RemoveRdd: (step, message) => step.commands.push({ _tag: "RemoveRdd", rddId: message.rddId }),
  PeerLost: (step, message) => {
    Core.log(
      step,
      "Info",
      `Executor ${message.executorId} at ${message.address.hostPort} is lost; not fetching from it`
    )
    step.commands.push({ _tag: "ForgetPeer", address: message.address, executorId: message.executorId })
  }
}

const handle = Core.inputs<Inbound, Local, Step>({
  Start: (step) => {
    const { config } = step.state
    // Said where the driver is another process: a local app's executor is the driver's own, with Spark's id for
    // it, `driver`.
    if (config.executorId !== "driver") Core.log(step, "Info", `Connecting to driver: ${config.driver.toString()}`)
    step.commands.push({
      _tag: "Register",
      message: new ClusterMessages.RegisterExecutor({
        executorId: config.executorId,
        executorRef: config.self,
        hostname: config.hostname,
        cores: config.cores,
        logUrls: config.logUrls ?? {},
        attributes: {},
        resources: {},
        resourceProfileId: 0,
        ...(config.shuffleService === undefined ? {} : { shuffleService: config.shuffleService })
      })
    })
  },
  Receive: handlers,
  Disconnected: (step, input) => {
    if (input.peer.hostPort === step.state.config.driver.address.hostPort) {
      stop(step, 1, `Driver ${input.peer.hostPort} disassociated! Shutting down.`)
    }
  },
  Registered: (step) => {
    const { config } = step.state
    step.state.registered = true
    Core.log(step, "Info", "Successfully registered with driver")
    Core.send(step, config.driver, new ClusterMessages.LaunchedExecutor({ executorId: config.executorId }))
    Core.startTimer(
      step,
      "heartbeat",
      { _tag: "SendHeartbeat" },
      config.heartbeatIntervalMillis,
      config.heartbeatIntervalMillis
    )
  },
  RegistrationFailed: (step, input) => stop(step, 1, `Cannot register with driver: ${input.reason}`),
  TasksEnded: (step, input) => {
    const { config } = step.state
    const updates: Array<ClusterMessages.TaskStatus> = []
    for (const end of input.ends) {
      if (!step.state.running.delete(end.taskId)) continue
      // The driver learns of the blocks before the task's end, so the next job finds them.
      for (const block of end.stored ?? []) tellStored(step, block)
      updates.push(
        new ClusterMessages.TaskStatus(
          { taskId: end.taskId, state: end.state, data: end.outcome, resources: {} },
          trusted
        )
      )
    }
    if (updates.length > 0) {
      Core.send(
        step,
        config.driver,
        new ClusterMessages.StatusUpdates({ executorId: config.executorId, updates }, trusted)
      )
    }
    offerWhenDrained(step)
  },
  Migrated: (step, input) => {
    const { config } = step.state
    if (step.state.stopping) return
    for (const block of input.stored) tellStored(step, block)
    for (const failure of input.failures) Core.log(step, "Warning", `Not migrated from ${input.from}: ${failure}`)
    Core.send(
      step,
      config.driver,
      new ClusterMessages.BlocksMigrated({
        executorId: config.executorId,
        from: input.from,
        mapOutputs: input.mapOutputs,
        blocks: input.stored.map((block) => block.blockId),
        failures: input.failures
      }, trusted)
    )
  },
  SendHeartbeat: (step) => {
    const { config } = step.state
    if (step.state.stopping) return
    step.commands.push({
      _tag: "Heartbeat",
      message: new ClusterMessages.ExecutorHeartbeat({
        executorId: config.executorId,
        taskMetrics: [...step.state.running].map(([taskId, started]) =>
          new ClusterMessages.TaskMetricsUpdate({ taskId, metrics: { executorRunTime: step.now - started } })
        ),
        executorMetrics: {}
      })
    })
  },
  HeartbeatFailed: (step, input) =>
    Core.log(step, "Warning", `Issue communicating with driver in heartbeater: ${input.reason}`)
})

/**
 * @since 0.1.0
 */
export const step = (state: State, input: Input): ReadonlyArray<Command> => {
  const step: Step = { state, now: input.now, commands: [] }
  handle(step, input)
  return step.commands
}

/**
 * What is wrong with the state, if anything: tasks run only once registered.
 *
 * @since 0.1.0
 */
export const validate = (state: State): ReadonlyArray<string> =>
  !state.registered && state.running.size > 0 ? ["tasks run before the executor registered"] : []

/**
 * @since 0.1.0
 * @category models
 */
export const core: Core.Core<State, Inbound, Local, ExecutorCommand> = { endpoint: Endpoints.executor, step, validate }
