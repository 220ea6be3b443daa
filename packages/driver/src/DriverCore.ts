/**
 * The driver's core (Spark's `CoarseGrainedSchedulerBackend` driver endpoint with its `DAGScheduler` and
 * `TaskSchedulerImpl`): the executors that registered with this app, and the jobs it runs. The DAG scheduler
 * (`DagScheduler`) cuts a job into stages and says which stage attempts run, as task sets; the task scheduler
 * (`TaskScheduler`) decides where each task runs; this core turns their decisions into messages — `LaunchTask`
 * with the task's bytes, `KillTask`, the map output locations reduce tasks ask for — and the jobs' results for
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
 * @since 0.1.0
 */
import { Core } from "@kindling/kernel"
import { type AppEvents } from "@kindling/monitoring"
import {
  ClusterMessages,
  Endpoints,
  Errors,
  Ids,
  Records,
  type RpcAddress,
  type States,
  type TaskPlan
} from "@kindling/protocol"
import { type RpcEnv } from "@kindling/rpc"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type * as Schema from "effect/Schema"
import * as DagScheduler from "./DagScheduler.js"
import type * as DriverInputs from "./DriverInputs.js"
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
}

interface Executor {
  readonly id: Ids.ExecutorId
  readonly ref: RpcAddress.Ref<ClusterMessages.DriverToExecutor>
  readonly host: string
  readonly cores: number
  /** Where its logs can be read, as it said when it registered. */
  readonly logUrls: Readonly<Record<string, string>>
  readonly connection: RpcEnv.ConnectionId
  /** Offered tasks once it said it is ready (`LaunchedExecutor`). */
  launched: boolean
  lastHeard: number
}

// What the driver counts of a running job besides what its stages do.
interface Job {
  readonly id: number
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
  readonly dag: DagScheduler.State
  readonly executors: Map<Ids.ExecutorId, Executor>
  readonly jobs: Map<number, Job>
  /** Where the persisted partitions are (Spark's block manager master): executors by block id. */
  readonly blocks: Map<string, Set<Ids.ExecutorId>>
  stopping: boolean
  aborted: string | undefined
}

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
  /** Something the app's listeners hear of. */
  | { readonly _tag: "Event"; readonly event: AppEvents.AppEvent }

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
  /** Inputs of the schedulers waiting for their turn, oldest first. */
  readonly work: Array<Work>
}

// An input for one of the two schedulers; a DAG input about a successful task comes with what the task brought.
type Work =
  | { readonly _tag: "Tasks"; readonly input: TaskScheduler.Input }
  | { readonly _tag: "Dag"; readonly input: DagScheduler.Input; readonly outcome: TaskOutcome | undefined }

// What becomes of a successful task's outcome, as the DAG scheduler decides.
interface TaskOutcome {
  /** It is the result of task `index` of job `jobId`. */
  readonly result: (jobId: number, index: number) => void
  /** Its updates to accumulators count. */
  readonly counted: () => void
}

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
  stopping: false,
  aborted: undefined
})

// What a task that did not finish reported: a fetch failure, or a failure as Spark prints it (the error's
// stack, which starts with its class and message).
const failureOf = (
  data: Uint8Array
): { readonly text: string; readonly fetchFailed?: typeof TaskPlan.FetchFailed.Encoded } => {
  try {
    const outcome = Records.decode(data) as typeof TaskPlan.TaskOutcome.Encoded
    if (outcome._tag === "TaskFailure") return { text: outcome.stack }
    if (outcome._tag === "FetchFailed") return { text: outcome.message, fetchFailed: outcome }
  } catch {
    // an executor that sent no readable failure
  }
  return { text: "the task failed without saying why" }
}

// Messages built here from the core's own state are valid by construction; checking each one again is most of
// the cost of launching a small task.
const trusted = { disableValidation: true }

// Queues an input for the task scheduler.
const schedule = (step: Step, input: TaskScheduler.Input) => {
  step.work.push({ _tag: "Tasks", input })
}

// Queues an input for the DAG scheduler, with the outcome of the task it reports a success of.
const dag = (step: Step, input: DagScheduler.Input, outcome?: TaskOutcome) => {
  step.work.push({ _tag: "Dag", input, outcome })
}

// Takes the queued inputs in order, each batch of decisions carried out before the next input is taken; then the
// jobs whose results passed kindling.driver.maxResultSize are cancelled, once all of their results are counted.
const settle = (step: Step) => {
  const { state } = step
  for (;;) {
    const work = step.work.shift()
    if (work !== undefined) {
      if (work._tag === "Tasks") carryOut(step, TaskScheduler.step(state.scheduler, work.input))
      else carryOutDag(step, DagScheduler.step(state.dag, work.input), work.outcome)
      continue
    }
    const overLimit = [...state.jobs.values()].filter((job) => job.failure !== undefined && state.dag.jobs.has(job.id))
    if (overLimit.length === 0) return
    for (const job of overLimit) dag(step, { _tag: "CancelJob", jobId: job.id, reason: job.failure!, now: step.now })
  }
}

// Carries out what the task scheduler decided; `onSucceeded` takes the successes (only a status update has them).
const carryOut = (
  step: Step,
  commands: ReadonlyArray<TaskScheduler.Command>,
  onSucceeded?: (command: Extract<TaskScheduler.Command, { _tag: "TaskSucceeded" }>) => void
) => {
  const { state } = step
  for (const command of commands) {
    switch (command._tag) {
      case "LaunchTask": {
        const taskSet = state.scheduler.taskSets.get(command.taskSet)
        const executor = state.executors.get(Ids.ExecutorId.make(command.executorId))
        const bytes = taskSet === undefined
          ? undefined
          : DagScheduler.taskBytes(state.dag, taskSet.stageId, command.partition)
        if (taskSet === undefined || executor === undefined || bytes === undefined) {
          // Its task set, stage or executor was dropped after the decision was queued: nothing is sent, and the
          // attempt ends here, so that its core is free again.
          schedule(step, {
            _tag: "StatusUpdate",
            taskId: command.taskId,
            state: "KILLED",
            reason: "its stage was dropped before it was launched",
            now: step.now
          })
          break
        }
        Core.send(
          step,
          executor.ref,
          new ClusterMessages.LaunchTask({
            taskId: command.taskId,
            attemptNumber: command.attempt,
            executorId: executor.id,
            name: `task ${command.index}.${command.attempt} in stage ${taskSet.stageId}.${taskSet.stageAttempt}`,
            index: command.index,
            partitionId: command.partition,
            stageId: taskSet.stageId,
            stageAttemptId: taskSet.stageAttempt,
            cpus: state.config.scheduler.cpusPerTask,
            properties: {},
            resources: {},
            serializedTask: bytes
          }, trusted)
        )
        event(step, {
          _tag: "TaskStart",
          stageId: taskSet.stageId,
          stageAttempt: taskSet.stageAttempt,
          taskId: command.taskId,
          index: command.index,
          executorId: executor.id,
          locality: command.locality,
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
        onSucceeded?.(command)
        break
      case "TaskSetFinished":
        // The DAG scheduler ends stages by their partitions, which it has been told of task by task.
        break
      case "TaskSetFailed": {
        const taskSet = command.taskSet.split(".")
        dag(step, { _tag: "StageAborted", stageId: Number(taskSet[0]), reason: command.reason, now: step.now })
        break
      }
      case "Log":
        Core.log(step, command.level, command.message)
        break
    }
  }
}

// Carries out what the DAG scheduler decided.
const carryOutDag = (
  step: Step,
  commands: ReadonlyArray<DagScheduler.Command>,
  outcome: TaskOutcome | undefined
) => {
  const { state } = step
  for (const command of commands) {
    switch (command._tag) {
      case "SubmitTaskSet":
        schedule(step, {
          _tag: "SubmitTaskSet",
          taskSet: `${command.stageId}.${command.stageAttempt}`,
          stageId: command.stageId,
          stageAttempt: command.stageAttempt,
          jobId: command.jobId,
          pool: command.pool,
          partitions: command.partitions,
          preferences: command.preferredBlocks.map((blockId) => locationsOf(state, blockId)),
          now: step.now
        })
        break
      case "CancelStage":
        schedule(step, { _tag: "CancelStage", stageId: command.stageId, reason: command.reason, now: step.now })
        break
      case "StopStageAttempt":
        schedule(step, { _tag: "StopTaskSet", taskSet: `${command.stageId}.${command.stageAttempt}`, now: step.now })
        break
      case "ResultTask":
        outcome?.result(command.jobId, command.index)
        break
      case "TaskCounted":
        outcome?.counted()
        break
      case "JobSucceeded":
      case "JobFailed": {
        const overLimit = state.jobs.get(command.jobId)?.failure
        state.jobs.delete(command.jobId)
        step.commands.push(
          command._tag === "JobSucceeded" && overLimit === undefined
            ? command
            : {
              _tag: "JobFailed",
              jobId: command.jobId,
              reason: command._tag === "JobFailed" ? command.reason : overLimit!
            }
        )
        break
      }
      case "ScheduleResubmit":
        Core.startTimer(step, "resubmitFailedStages", { _tag: "ResubmitFailedStages" }, command.delayMillis)
        break
      case "JobStarted":
        event(step, {
          _tag: "JobStart",
          jobId: command.jobId,
          stageIds: command.stageIds,
          stages: command.stages,
          pool: state.dag.jobs.get(command.jobId)?.pool ?? "default",
          time: step.now
        })
        break
      case "JobEnded":
        event(step, { _tag: "JobEnd", jobId: command.jobId, succeeded: command.succeeded, time: step.now })
        break
      case "StageSubmitted":
        event(step, {
          _tag: "StageSubmitted",
          stageId: command.stageId,
          stageAttempt: command.stageAttempt,
          name: command.name,
          tasks: command.tasks,
          parentIds: command.parents,
          time: step.now
        })
        break
      case "StageCompleted":
        event(step, {
          _tag: "StageCompleted",
          stageId: command.stageId,
          stageAttempt: command.stageAttempt,
          ...(command.failureReason === undefined ? {} : { failureReason: command.failureReason }),
          time: step.now
        })
        break
      case "Log":
        Core.log(step, command.level, command.message)
        break
    }
  }
}

// The executors holding a block, with their hosts: where a task reading it would rather run.
const locationsOf = (state: State, blockId: string | undefined): Array<TaskScheduler.Location> =>
  blockId === undefined ? [] : [...state.blocks.get(blockId) ?? []].flatMap((executorId) => {
    const executor = state.executors.get(executorId)
    return executor === undefined ? [] : [{ executorId, host: executor.host }]
  })

const event = (step: Step, appEvent: AppEvents.AppEvent) => step.commands.push({ _tag: "Event", event: appEvent })

const executorLost = (step: Step, executorId: Ids.ExecutorId, reason: string) => {
  const { state } = step
  const executor = state.executors.get(executorId)
  if (executor === undefined) return
  state.executors.delete(executorId)
  if (state.stopping) Core.log(step, "Info", `Executor ${executorId} on ${executor.host} stopped`)
  else Core.log(step, "Warning", `Lost executor ${executorId} on ${executor.host}: ${reason}`)
  for (const taskId of TaskScheduler.runningOn(state.scheduler, executorId)) {
    taskEnded(step, taskId, false, {}, `ExecutorLostFailure (executor ${executorId} exited: ${reason})`)
  }
  schedule(step, { _tag: "ExecutorLost", executorId, reason, now: step.now })
  dag(step, { _tag: "ExecutorLost", executorId, now: step.now })
  // Its persisted partitions went with it: later tasks compute them again, from their lineage.
  for (const [blockId, holders] of state.blocks) {
    if (holders.delete(executorId) && holders.size === 0) state.blocks.delete(blockId)
  }
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
const taskEnded = (
  step: Step,
  taskId: number,
  succeeded: boolean,
  metrics: Readonly<Record<string, number>> = {},
  reason?: string
) => {
  const attempt = step.state.scheduler.attempts.get(taskId)
  if (attempt === undefined) return
  const stageAttempt = step.state.scheduler.taskSets.get(attempt.taskSet)?.stageAttempt ?? 0
  event(step, {
    _tag: "TaskEnd",
    stageId: attempt.stageId,
    stageAttempt,
    taskId,
    succeeded,
    ...(reason === undefined ? {} : { reason }),
    metrics: { ...metrics, duration: step.now - attempt.startedAt },
    time: step.now
  })
}

// A result's size as kindling.driver.maxResultSize counts it: an indirect one (a few bytes) says its own.
const resultSize = (data: Uint8Array, outcome: typeof TaskPlan.TaskOutcome.Encoded | undefined): number =>
  outcome?._tag === "IndirectTaskResult" ? outcome.size : data.length

// A finished task's result, but its value (left encoded): a few fields, cheap to read.
const finishedOutcome = (data: Uint8Array): typeof TaskPlan.TaskOutcome.Encoded | undefined => {
  try {
    return Records.decode(data) as typeof TaskPlan.TaskOutcome.Encoded
  } catch {
    return undefined // unreadable: the shell fails the job
  }
}

// A map task's result value is its `MapStatus`: the bytes it wrote per reduce partition.
const mapSizes = (outcome: typeof TaskPlan.TaskOutcome.Encoded | undefined): ReadonlyArray<number> => {
  if (outcome?._tag !== "TaskResult") return []
  try {
    const status = Records.decode(outcome.value) as { readonly sizes?: ReadonlyArray<number> } | undefined
    return Array.isArray(status?.sizes) ? status.sizes : []
  } catch {
    return []
  }
}

const statusUpdate = (step: Step, message: ClusterMessages.StatusUpdate) => {
  const { state } = step
  const executor = state.executors.get(message.executorId)
  if (executor !== undefined) executor.lastHeard = step.now
  const status = schedulerState(message.state)
  const finished = status === "FINISHED" ? finishedOutcome(message.data) : undefined
  const failure = status === "FAILED" || status === "KILLED" ? failureOf(message.data) : undefined
  if (status !== "RUNNING") {
    taskEnded(
      step,
      message.taskId,
      status === "FINISHED",
      finished?._tag === "TaskResult" ? finished.metrics : undefined,
      status === "FINISHED" ? undefined : failure?.text ?? status
    )
  }
  const taskSetId = state.scheduler.attempts.get(message.taskId)?.taskSet
  // The first thing the step does, so that nothing waits in the queue before it.
  const commands = TaskScheduler.step(state.scheduler, {
    _tag: "StatusUpdate",
    taskId: message.taskId,
    state: status,
    reason: failure?.text ?? "",
    ...(failure?.fetchFailed === undefined ? {} : { fetchFailed: true }),
    now: step.now
  })
  // What the task brought back goes where the DAG scheduler says: a result to its job, the task's updates to
  // accumulators when they count.
  const outcome: TaskOutcome = {
    result: (jobId, index) => takeResult(step, jobId, index, message.data, finished, executor?.ref.address),
    counted: () => {
      if (finished?._tag === "TaskResult" && finished.accumulators !== undefined && finished.accumulators.length > 0) {
        step.commands.push({ _tag: "AccumulatorUpdates", updates: finished.accumulators })
      }
    }
  }
  carryOut(step, commands, (command) => {
    const isMap = state.dag.stages.get(command.stageId)?.shuffleId !== undefined
    dag(step, {
      _tag: "TaskSucceeded",
      stageId: command.stageId,
      stageAttempt: command.stageAttempt,
      partition: command.partition,
      executorId: command.executorId,
      ...(isMap ? { sizes: mapSizes(finished) } : {}),
      now: step.now
    }, outcome)
  })
  if (failure?.fetchFailed !== undefined && taskSetId !== undefined) {
    const [stageId, stageAttempt] = taskSetId.split(".").map(Number) as [number, number]
    dag(step, {
      _tag: "FetchFailed",
      stageId,
      stageAttempt,
      shuffleId: failure.fetchFailed.shuffleId,
      mapIndex: failure.fetchFailed.mapIndex,
      executorId: failure.fetchFailed.executorId,
      message: failure.text,
      now: step.now
    })
  }
}

// A result task's result goes to its job, unless the job's results passed kindling.driver.maxResultSize.
const takeResult = (
  step: Step,
  jobId: number,
  index: number,
  data: Uint8Array,
  outcome: typeof TaskPlan.TaskOutcome.Encoded | undefined,
  from: RpcAddress.RpcAddress | undefined
) => {
  const job = step.state.jobs.get(jobId)
  if (job === undefined || job.failure !== undefined) return
  job.succeeded++
  job.resultBytes += resultSize(data, outcome)
  const limit = step.state.config.maxResultSize
  if (limit > 0 && job.resultBytes > limit) {
    job.failure = `Job aborted due to stage failure: Total size of serialized results of ${job.succeeded} tasks ` +
      `(${job.resultBytes} bytes) is bigger than kindling.driver.maxResultSize (${limit} bytes)`
    return
  }
  step.commands.push({ _tag: "TaskResult", jobId, index, outcome, from })
}

const cancelJob = (step: Step, jobId: number, reason: string) => {
  if (!step.state.dag.jobs.has(jobId)) return
  dag(step, { _tag: "CancelJob", jobId, reason, now: step.now })
}

const submitJob = (step: Step, job: DagScheduler.JobSpec) => {
  const { state } = step
  if (state.aborted !== undefined) {
    step.commands.push({ _tag: "JobFailed", jobId: job.jobId, reason: state.aborted })
    return
  }
  state.jobs.set(job.jobId, { id: job.jobId, resultBytes: 0, succeeded: 0, failure: undefined })
  dag(step, { _tag: "SubmitJob", job, now: step.now })
  if (state.executors.size === 0 && job.tasks.length > 0) {
    Core.log(step, "Info", `Job ${job.jobId} waits for executors`)
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
      logUrls: message.logUrls,
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
    // Listeners hear of the executor before of the tasks offered to it.
    event(step, {
      _tag: "ExecutorAdded",
      executorId: executor.id,
      host: executor.host,
      port: executor.ref.address.port,
      cores: executor.cores,
      logUrls: executor.logUrls,
      time: step.now
    })
    schedule(step, {
      _tag: "ExecutorAdded",
      executorId: executor.id,
      host: executor.host,
      cores: executor.cores,
      now: step.now
    })
  },
  StatusUpdate: statusUpdate,
  ExecutorDecommissioning: (step, _message, ask) => Core.reply(step, ask, Exit.succeed(true)),
  UpdateBlockInfo: (step, message) => {
    if (!step.state.executors.has(message.executorId)) return
    const holders = step.state.blocks.get(message.blockId) ?? new Set()
    holders.add(message.executorId)
    step.state.blocks.set(message.blockId, holders)
    event(step, {
      _tag: "BlockUpdated",
      executorId: message.executorId,
      blockId: message.blockId,
      storageLevel: message.storageLevel,
      memSize: message.memSize,
      diskSize: message.diskSize,
      time: step.now
    })
  },
  GetMapOutputStatuses: (step, message, ask) => {
    const { state } = step
    const found = DagScheduler.locations(state.dag, message.shuffleId, message.reduceId)
    const missing = (mapIndex: number) =>
      Core.reply(step, ask, Exit.fail(new Errors.MapOutputMissing({ shuffleId: message.shuffleId, mapIndex })))
    if (found._tag === "Missing") return missing(found.mapIndex)
    const locations: Array<ClusterMessages.MapOutputLocation> = []
    for (let mapIndex = 0; mapIndex < found.blocks.length; mapIndex++) {
      const block = found.blocks[mapIndex]!
      const executor = state.executors.get(Ids.ExecutorId.make(block.executorId))
      if (executor === undefined) return missing(mapIndex)
      locations.push(
        new ClusterMessages.MapOutputLocation({
          mapIndex,
          executorId: executor.id,
          address: executor.ref.address,
          size: block.size
        }, trusted)
      )
    }
    Core.reply(
      step,
      ask,
      Exit.succeed(
        new ClusterMessages.MapOutputStatuses({
          shuffleId: message.shuffleId,
          reduceId: message.reduceId,
          locations
        }, trusted)
      )
    )
  },
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
    if (state.config.scheduler.speculation.enabled) {
      const every = state.config.speculationIntervalMillis
      Core.startTimer(step, "speculation", { _tag: "CheckSpeculation" }, every, every)
    }
  },
  Receive: handlers,
  Disconnected: (step, input) => {
    const { state } = step
    // An executor's connection is its life: when it closes, the executor is gone (Spark's onDisconnected).
    for (const executor of [...state.executors.values()]) {
      if (executor.connection === input.connection && input.connection !== 0) {
        executorLost(step, executor.id, `its connection from ${input.peer.hostPort} closed`)
      }
    }
  },
  SubmitJob: (step, input) => submitJob(step, input.job),
  ResubmitFailedStages: (step) => {
    dag(step, { _tag: "ResubmitFailedStages", now: step.now })
  },
  Unpersist: (step, input) => {
    const { state } = step
    for (const blockId of [...state.blocks.keys()]) {
      if (blockId.startsWith(`rdd_${input.rddId}_`)) state.blocks.delete(blockId)
    }
    for (const executor of state.executors.values()) {
      Core.send(step, executor.ref, new ClusterMessages.RemoveRdd({ rddId: input.rddId }))
    }
    event(step, { _tag: "DatasetUnpersisted", datasetId: input.rddId, time: step.now })
  },
  CancelJob: (step, input) => cancelJob(step, input.jobId, input.reason),
  ExecutorRemoved: (step, input) => {
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
  },
  ReviveOffers: (step) => {
    schedule(step, { _tag: "ReviveOffers", now: step.now })
  },
  CheckSpeculation: (step) => {
    schedule(step, { _tag: "CheckSpeculation", now: step.now })
  },
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
  CheckExecutorTimeouts: (step) => {
    const { state } = step
    for (const executor of [...state.executors.values()]) {
      if (step.now - executor.lastHeard > state.config.executorTimeoutMillis) {
        executorLost(step, executor.id, `no heartbeat for ${step.now - executor.lastHeard} ms`)
      }
    }
  }
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
    work: []
  }
  handle(step, input)
  settle(step)
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
export const validate = (state: State): ReadonlyArray<string> => {
  const problems = [...TaskScheduler.validate(state.scheduler), ...DagScheduler.validate(state.dag)]
  for (const jobId of state.jobs.keys()) {
    if (!state.dag.jobs.has(jobId)) problems.push(`job ${jobId} is not known to the DAG scheduler`)
  }
  for (const executorId of state.scheduler.executors.keys()) {
    if (!state.executors.has(Ids.ExecutorId.make(executorId))) {
      problems.push(`the scheduler offers executor ${executorId}, which is not registered`)
    }
  }
  for (const taskSet of state.scheduler.taskSets.values()) {
    if (!state.dag.stages.has(taskSet.stageId)) {
      problems.push(`task set ${taskSet.id} runs stage ${taskSet.stageId}, which the DAG scheduler dropped`)
    }
  }
  for (const stageId of state.dag.running) {
    const stage = state.dag.stages.get(stageId)
    if (stage === undefined || stage.pending.size === 0) continue
    const taskSet = state.scheduler.taskSets.get(`${stageId}.${stage.nextAttempt - 1}`)
    if (taskSet === undefined || taskSet.zombie) {
      problems.push(`stage ${stageId} waits for ${stage.pending.size} partitions that no task set will run`)
    }
  }
  return problems
}

/**
 * @since 0.1.0
 * @category models
 */
export const core: Core.Core<State, Inbound, Local, DriverCommand> = { endpoint: Endpoints.scheduler, step, validate }
