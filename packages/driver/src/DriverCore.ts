/**
 * The driver's core (Spark's `CoarseGrainedSchedulerBackend` driver endpoint with its `TaskSchedulerImpl`): the
 * executors that registered with this app, and the jobs it runs. A job is one task set over the partitions of a
 * stage; the task scheduler (`TaskScheduler`) decides where each task runs, and this core turns its decisions
 * into messages: `LaunchTask` with the task's bytes, `KillTask`, and the job's results for the shell.
 *
 * The same core serves every mode: in `local` the executor is a role on the same node, on a cluster they are
 * processes that registered over TCP.
 *
 * @since 0.1.0
 */
import { Core } from "@kindling/kernel"
import {
  ClusterMessages,
  Endpoints,
  Errors,
  Ids,
  Records,
  type RpcAddress,
  type RpcEnv,
  type States,
  type TaskPlan
} from "@kindling/protocol"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type { AppEvent } from "./AppEvents.js"
import * as TaskScheduler from "./TaskScheduler.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Config {
  readonly scheduler: TaskScheduler.Config
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
}

interface Executor {
  readonly id: Ids.ExecutorId
  readonly ref: RpcAddress.Ref<ClusterMessages.DriverToExecutor>
  readonly host: string
  readonly cores: number
  readonly connection: RpcEnv.ConnectionId
  /** Offered tasks once it said it is ready (`LaunchedExecutor`). */
  launched: boolean
  lastHeard: number
}

interface Job {
  readonly id: number
  readonly stageId: number
  readonly taskSet: string
  /** The encoded `TaskPlan.Task` of each of its tasks, by index. */
  readonly tasks: ReadonlyArray<Uint8Array>
  resultBytes: number
  succeeded: number
  /** Why the job must fail though its tasks may all succeed (its results passed kindling.driver.maxResultSize). */
  failure: string | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface State {
  readonly config: Config
  readonly scheduler: TaskScheduler.State
  readonly executors: Map<Ids.ExecutorId, Executor>
  readonly jobs: Map<number, Job>
  readonly jobOfTaskSet: Map<string, number>
  nextStageId: number
  stopping: boolean
  aborted: string | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export type Local =
  /** Runs a job: one task per encoded task, in partition order. */
  /** `pool`: the scheduler pool its tasks share cores in (under FAIR scheduling). */
  | {
    readonly _tag: "SubmitJob"
    readonly jobId: number
    readonly tasks: ReadonlyArray<Uint8Array>
    readonly pool: string
  }
  | { readonly _tag: "CancelJob"; readonly jobId: number; readonly reason: string }
  /**
   * An executor is gone, as its cluster manager tells (its process exited, its worker was lost); `started` is
   * false when its process never ran.
   */
  | {
    readonly _tag: "ExecutorRemoved"
    readonly executorId: Ids.ExecutorId
    readonly reason: string
    readonly started: boolean
  }
  | { readonly _tag: "ReviveOffers" }
  | { readonly _tag: "CheckSpeculation" }
  | { readonly _tag: "CheckExecutorTimeouts" }
  | { readonly _tag: "CheckStarvation" }
  /** The app is stopping: its executors are told to stop, and their going is expected. */
  | { readonly _tag: "Stop" }
  /** The app cannot go on (its cluster manager removed it): every job, running or to come, fails with the reason. */
  | { readonly _tag: "Abort"; readonly reason: string }

/**
 * What the driver's shell does for the core.
 *
 * @since 0.1.0
 * @category models
 */
export type DriverCommand =
  /**
   * One task of the job succeeded; `outcome` is its encoded `TaskPlan.TaskResult`, or an `IndirectTaskResult`
   * to fetch from `from`, the executor's address.
   */
  | {
    readonly _tag: "TaskResult"
    readonly jobId: number
    readonly index: number
    readonly outcome: Uint8Array
    readonly from: RpcAddress.RpcAddress | undefined
  }
  | { readonly _tag: "JobSucceeded"; readonly jobId: number }
  | { readonly _tag: "JobFailed"; readonly jobId: number; readonly reason: string }
  /** Something the app's listeners hear of. */
  | { readonly _tag: "Event"; readonly event: AppEvent }

/**
 * @since 0.1.0
 * @category models
 */
export type Command = Core.Command<Local, DriverCommand>
type Inbound = ClusterMessages.ExecutorToDriver
type Input = Core.Input<Inbound, Local>
type Step = Core.Out<Local, DriverCommand> & {
  readonly state: State
  /** The connection the message being handled came on. */
  readonly connection: RpcEnv.ConnectionId
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const make = (config: Config): State => ({
  config,
  scheduler: TaskScheduler.make(config.scheduler),
  executors: new Map(),
  jobs: new Map(),
  jobOfTaskSet: new Map(),
  nextStageId: 0,
  stopping: false,
  aborted: undefined
})

// The failure a task reported, as Spark prints it: the error's stack (which starts with its class and message).
const failureText = (data: Uint8Array): string => {
  try {
    const outcome = Records.decode(data) as typeof TaskPlan.TaskOutcome.Encoded
    if (outcome._tag === "TaskFailure") return outcome.stack
  } catch {
    // an executor that sent no readable failure
  }
  return "the task failed without saying why"
}

// Messages built here from the core's own state are valid by construction; checking each one again is most of
// the cost of launching a small task.
const trusted = { disableValidation: true }

// Runs the task scheduler on one input and carries out what it decided.
const schedule = (step: Step, input: TaskScheduler.Input) =>
  carryOut(step, TaskScheduler.step(step.state.scheduler, input))

const carryOut = (step: Step, commands: ReadonlyArray<TaskScheduler.Command>) => {
  const { state } = step
  for (const command of commands) {
    switch (command._tag) {
      case "LaunchTask": {
        const job = state.jobs.get(state.jobOfTaskSet.get(command.taskSet)!)!
        const executor = state.executors.get(Ids.ExecutorId.make(command.executorId))!
        Core.send(
          step,
          executor.ref,
          new ClusterMessages.LaunchTask({
            taskId: command.taskId,
            attemptNumber: command.attempt,
            executorId: executor.id,
            name: `task ${command.index}.${command.attempt} in stage ${job.stageId}.0`,
            index: command.index,
            partitionId: command.partition,
            stageId: job.stageId,
            stageAttemptId: 0,
            cpus: state.config.scheduler.cpusPerTask,
            properties: {},
            resources: {},
            serializedTask: job.tasks[command.index]!
          }, trusted)
        )
        event(step, {
          _tag: "TaskStart",
          stageId: job.stageId,
          taskId: command.taskId,
          index: command.index,
          executorId: executor.id,
          time: step.now
        })
        break
      }
      case "KillTask": {
        const executor = state.executors.get(Ids.ExecutorId.make(command.executorId))
        if (executor === undefined) break
        Core.send(
          step,
          executor.ref,
          new ClusterMessages.KillTask({
            taskId: command.taskId,
            executor: executor.id,
            interruptThread: true,
            reason: command.reason
          }, trusted)
        )
        break
      }
      case "TaskSucceeded":
        // Its result came with the status update that made it succeed: `statusUpdate` hands it over.
        break
      case "TaskSetFinished":
      case "TaskSetFailed": {
        const jobId = state.jobOfTaskSet.get(command.taskSet)
        if (jobId === undefined) break
        const overLimit = state.jobs.get(jobId)?.failure
        const succeeded = command._tag === "TaskSetFinished" && overLimit === undefined
        endJob(step, jobId, succeeded)
        step.commands.push(
          succeeded
            ? { _tag: "JobSucceeded", jobId }
            : {
              _tag: "JobFailed",
              jobId,
              reason: overLimit ??
                `Job aborted due to stage failure: ${command._tag === "TaskSetFailed" ? command.reason : ""}`
            }
        )
        break
      }
      case "Log":
        Core.log(step, command.level, command.message)
        break
    }
  }
}

const event = (step: Step, appEvent: AppEvent) => step.commands.push({ _tag: "Event", event: appEvent })

const endJob = (step: Step, jobId: number, succeeded: boolean) => {
  const job = step.state.jobs.get(jobId)
  if (job === undefined) return
  forgetJob(step.state, jobId)
  event(step, { _tag: "JobEnd", jobId, stageId: job.stageId, succeeded, time: step.now })
}

const forgetJob = (state: State, jobId: number) => {
  const job = state.jobs.get(jobId)
  if (job === undefined) return
  state.jobs.delete(jobId)
  state.jobOfTaskSet.delete(job.taskSet)
}

const executorLost = (step: Step, executorId: Ids.ExecutorId, reason: string) => {
  const { state } = step
  const executor = state.executors.get(executorId)
  if (executor === undefined) return
  state.executors.delete(executorId)
  if (state.stopping) Core.log(step, "Info", `Executor ${executorId} on ${executor.host} stopped`)
  else Core.log(step, "Warning", `Lost executor ${executorId} on ${executor.host}: ${reason}`)
  for (const taskId of TaskScheduler.runningOn(state.scheduler, executorId)) taskEnded(step, taskId, false)
  schedule(step, { _tag: "ExecutorLost", executorId, reason, now: step.now })
  event(step, { _tag: "ExecutorRemoved", executorId, reason, time: step.now })
}

const schedulerState = (state: States.TaskState): Extract<TaskScheduler.Input, { _tag: "StatusUpdate" }>["state"] => {
  switch (state) {
    case "LAUNCHING":
    case "RUNNING":
      return "RUNNING"
    case "FINISHED":
    case "KILLED":
    case "LOST":
    case "FAILED":
      return state
  }
}

// A running attempt ended (as its executor reports, or with its executor): its stage's listeners hear of it.
const taskEnded = (step: Step, taskId: number, succeeded: boolean) => {
  const stageId = TaskScheduler.stageOf(step.state.scheduler, taskId)
  if (stageId !== undefined) event(step, { _tag: "TaskEnd", stageId, taskId, succeeded, time: step.now })
}

// A result's size as kindling.driver.maxResultSize counts it: an indirect one (a few bytes) says its own.
const resultSize = (data: Uint8Array): number => {
  if (data.length > 256) return data.length
  try {
    const outcome = Records.decode(data) as { readonly _tag?: string; readonly size?: number }
    return outcome._tag === "IndirectTaskResult" && typeof outcome.size === "number" ? outcome.size : data.length
  } catch {
    return data.length // unreadable: the shell fails the job when it reads it
  }
}

const statusUpdate = (step: Step, message: ClusterMessages.StatusUpdate) => {
  const { state } = step
  const executor = state.executors.get(message.executorId)
  if (executor !== undefined) executor.lastHeard = step.now
  const status = schedulerState(message.state)
  if (status !== "RUNNING") taskEnded(step, message.taskId, status === "FINISHED")
  const commands = TaskScheduler.step(state.scheduler, {
    _tag: "StatusUpdate",
    taskId: message.taskId,
    state: status,
    reason: status === "FAILED" || status === "KILLED" ? failureText(message.data) : "",
    now: step.now
  })
  // The result goes to the job only when the scheduler takes this attempt as its task's success.
  for (const command of commands) {
    if (command._tag !== "TaskSucceeded") continue
    const job = state.jobs.get(state.jobOfTaskSet.get(command.taskSet)!)!
    if (job.failure !== undefined) continue
    job.succeeded++
    job.resultBytes += resultSize(message.data)
    const limit = state.config.maxResultSize
    if (limit > 0 && job.resultBytes > limit) {
      job.failure = `Job aborted due to stage failure: Total size of serialized results of ${job.succeeded} tasks ` +
        `(${job.resultBytes} bytes) is bigger than kindling.driver.maxResultSize (${limit} bytes)`
      continue
    }
    step.commands.push({
      _tag: "TaskResult",
      jobId: job.id,
      index: command.index,
      outcome: message.data,
      from: executor?.ref.address
    })
  }
  // Everything the scheduler decided is carried out (launches of other tasks included) before a job that went
  // over its result limit is cancelled.
  carryOut(step, commands)
  for (const job of [...state.jobs.values()]) if (job.failure !== undefined) cancelJob(step, job.id, job.failure)
}

const cancelJob = (step: Step, jobId: number, reason: string) => {
  const job = step.state.jobs.get(jobId)
  if (job === undefined) return
  schedule(step, { _tag: "CancelTaskSet", taskSet: job.taskSet, reason, now: step.now })
  endJob(step, jobId, false)
  step.commands.push({ _tag: "JobFailed", jobId, reason })
}

const submitJob = (step: Step, jobId: number, tasks: ReadonlyArray<Uint8Array>, pool: string) => {
  const { state } = step
  if (state.aborted !== undefined) {
    step.commands.push({ _tag: "JobFailed", jobId, reason: state.aborted })
    return
  }
  const stageId = state.nextStageId++
  const taskSet = `${stageId}.0`
  state.jobs.set(jobId, { id: jobId, stageId, taskSet, tasks, resultBytes: 0, succeeded: 0, failure: undefined })
  state.jobOfTaskSet.set(taskSet, jobId)
  Core.log(step, "Info", `Got job ${jobId} with ${tasks.length} output partitions`)
  event(step, { _tag: "JobStart", jobId, stageId, tasks: tasks.length, pool, time: step.now })
  schedule(step, {
    _tag: "SubmitTaskSet",
    taskSet,
    stageId,
    stageAttempt: 0,
    jobId,
    pool,
    partitions: tasks.map((_, i) => i),
    now: step.now
  })
  if (state.executors.size === 0) {
    Core.log(step, "Info", `Job ${jobId} waits for executors`)
  }
}

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
  RegisterExecutor: (step, message, ask) => {
    const { state } = step
    if (state.executors.has(message.executorId)) {
      return Core.reply(
        step,
        ask,
        Exit.fail(
          new Errors.ExecutorRegistrationRejected({ executorId: message.executorId, reason: "Duplicate executor ID" })
        )
      )
    }
    state.executors.set(message.executorId, {
      id: message.executorId,
      ref: message.executorRef,
      host: message.hostname,
      cores: message.cores,
      connection: step.connection,
      launched: false,
      lastHeard: step.now
    })
    Core.log(
      step,
      "Info",
      `Registered executor ${message.executorId} on ${message.hostname} with ${message.cores} cores`
    )
    Core.reply(step, ask, Exit.succeed(true))
    // Too late for this app: it is told to stop at once, as the others were.
    if (state.stopping) Core.send(step, message.executorRef, new ClusterMessages.StopExecutor())
  },
  LaunchedExecutor: (step, message) => {
    const executor = step.state.executors.get(message.executorId)
    if (executor === undefined || executor.launched) return
    executor.launched = true
    schedule(step, {
      _tag: "ExecutorAdded",
      executorId: executor.id,
      host: executor.host,
      cores: executor.cores,
      now: step.now
    })
    event(step, {
      _tag: "ExecutorAdded",
      executorId: executor.id,
      host: executor.host,
      cores: executor.cores,
      time: step.now
    })
  },
  StatusUpdate: statusUpdate,
  ExecutorDecommissioning: (step, _message, ask) => Core.reply(step, ask, Exit.succeed(true)),
  ShufflePushCompletion: () => {},
  IsExecutorAlive: (step, message, ask) =>
    Core.reply(step, ask, Exit.succeed(step.state.executors.has(message.executorId))),
  RemoveExecutor: (step, message) => executorLost(step, message.executorId, message.reason.message),
  ExecutorHeartbeat: (step, message, ask) => {
    const executor = step.state.executors.get(message.executorId)
    if (executor !== undefined) {
      executor.lastHeard = step.now
      event(step, {
        _tag: "ExecutorMetricsUpdate",
        executorId: executor.id,
        executorMetrics: message.executorMetrics,
        tasks: message.taskMetrics.map(({ metrics, taskId }) => ({ taskId, metrics })),
        time: step.now
      })
    }
    Core.reply(
      step,
      ask,
      Exit.succeed(new ClusterMessages.HeartbeatResponse({ reregisterBlockManager: executor === undefined }))
    )
  }
}

const receive = Core.dispatch(handlers)

/**
 * @since 0.1.0
 */
export const step = (state: State, input: Input): ReadonlyArray<Command> => {
  const step: Step = {
    state,
    now: input.now,
    commands: [],
    connection: input._tag === "Receive" ? input.connection : 0
  }
  switch (input._tag) {
    case "Start":
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
      if (state.config.scheduler.speculation.enabled) {
        const every = state.config.speculationIntervalMillis
        Core.startTimer(step, "speculation", { _tag: "CheckSpeculation" }, every, every)
      }
      break
    case "Receive":
      receive(step, input.message, input.ask)
      break
    case "Connected":
      break
    case "Disconnected":
      // An executor's connection is its life: when it closes, the executor is gone (Spark's onDisconnected).
      for (const executor of [...state.executors.values()]) {
        if (executor.connection === input.connection && input.connection !== 0) {
          executorLost(step, executor.id, `its connection from ${input.peer.hostPort} closed`)
        }
      }
      break
    case "SubmitJob":
      submitJob(step, input.jobId, input.tasks, input.pool)
      break
    case "CancelJob":
      cancelJob(step, input.jobId, input.reason)
      break
    case "ExecutorRemoved":
      if (!input.started) {
        Core.log(step, "Warning", `Executor ${input.executorId} could not be launched: ${input.reason}`)
        event(step, {
          _tag: "ExecutorLaunchFailed",
          executorId: input.executorId,
          reason: input.reason,
          time: step.now
        })
      }
      executorLost(step, input.executorId, input.reason)
      break
    case "ReviveOffers":
      schedule(step, { _tag: "ReviveOffers", now: step.now })
      break
    case "CheckSpeculation":
      schedule(step, { _tag: "CheckSpeculation", now: step.now })
      break
    case "Stop":
      state.stopping = true
      for (const executor of state.executors.values()) {
        Core.send(step, executor.ref, new ClusterMessages.StopExecutor())
      }
      break
    case "CheckStarvation":
      if (state.jobs.size > 0 && ![...state.executors.values()].some((executor) => executor.launched)) {
        Core.log(
          step,
          "Warning",
          "Initial job has not accepted any resources; check your cluster UI to ensure that workers are " +
            "registered and have sufficient resources"
        )
      }
      break
    case "Abort":
      state.aborted = input.reason
      for (const jobId of [...state.jobs.keys()]) cancelJob(step, jobId, input.reason)
      break
    case "CheckExecutorTimeouts":
      for (const executor of [...state.executors.values()]) {
        if (step.now - executor.lastHeard > state.config.executorTimeoutMillis) {
          executorLost(step, executor.id, `no heartbeat for ${step.now - executor.lastHeard} ms`)
        }
      }
      break
  }
  return step.commands
}

/**
 * What is wrong with the state, if anything: the task scheduler's invariants, every job's task set known to
 * the scheduler, every executor the scheduler offers to registered here.
 *
 * @since 0.1.0
 */
export const validate = (state: State): ReadonlyArray<string> => {
  const problems = [...TaskScheduler.validate(state.scheduler)]
  for (const job of state.jobs.values()) {
    if (state.jobOfTaskSet.get(job.taskSet) !== job.id) problems.push(`job ${job.id} is not indexed by its task set`)
  }
  for (const executorId of state.scheduler.executors.keys()) {
    if (!state.executors.has(Ids.ExecutorId.make(executorId))) {
      problems.push(`the scheduler offers executor ${executorId}, which is not registered`)
    }
  }
  return problems
}

/**
 * @since 0.1.0
 * @category models
 */
export const core: Core.Core<State, Inbound, Local, DriverCommand> = { endpoint: Endpoints.scheduler, step, validate }
