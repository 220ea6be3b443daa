/**
 * The driver's task scheduler (Spark's `TaskSchedulerImpl` and `TaskSetManager`) as a pure core:
 * `step(state, input) → commands`. It keeps a task set per stage attempt, matches pending tasks to the free cores
 * of live executors, counts failures per task against `maxFailures`, resubmits the tasks of a lost executor,
 * launches speculative copies of stragglers, and says when a task set has finished or failed. It does not know
 * what a task computes; the shell holds the tasks' bytes and results by task id.
 *
 * Offers follow Spark: task sets in priority order (FIFO: by job, then stage; FAIR: the pool with the fewest
 * running tasks relative to its share first), executors shuffled, one task per executor per round so that
 * work spreads. Beyond Spark, once every free core is taken an executor may be sent a few tasks more
 * (`queuedTasksPerCore`), which wait there for a core: the scheduler keeps them in order and counts a task's
 * running time from when it takes a core.
 *
 * Its records and transitions live in `internal/tasks/`: task sets (`taskSets`), the ends of attempts
 * (`attemptEnds`), offers (`offers`) and speculation (`speculation`).
 *
 * @since 0.1.0
 */
import * as attemptEnds from "./internal/tasks/attemptEnds.js"
import { executorLost, statusUpdate } from "./internal/tasks/attemptEnds.js"
import * as offers from "./internal/tasks/offers.js"
import { offer } from "./internal/tasks/offers.js"
import { checkSpeculation, copyOffDecommissioned } from "./internal/tasks/speculation.js"
import type * as internal from "./internal/tasks/taskSets.js"
import { becomeZombie, cancel, decommissioned, submit } from "./internal/tasks/taskSets.js"
import * as validation from "./internal/tasks/validation.js"
import * as TaskSetId from "./TaskSetId.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Config {
  readonly maxFailures: number
  readonly cpusPerTask: number
  readonly mode: "FIFO" | "FAIR"
  readonly speculation: {
    readonly enabled: boolean
    /** A task is a straggler once it has run this many times the median of the successful ones… */
    readonly multiplier: number
    /** …once this fraction of its set has succeeded… */
    readonly quantile: number
    /** …and for at least this long. */
    readonly minTaskRuntimeMillis: number
  }
  /** Seeds the shuffle of offers. */
  readonly seed: number
  /**
   * How long a task set with location preferences waits for a free core at a better level (PROCESS_LOCAL, then
   * NODE_LOCAL) before it takes one further away (`kindling.locality.wait`; 3 s in Spark).
   */
  readonly localityWaitMillis?: number
  /**
   * Tasks per core an executor is sent beyond those it can run at once (`kindling.scheduler.queuedTasksPerCore`):
   * they wait there for a core, so that a task's end and the next launch need not cross the wire in between, and
   * a batch of ends is answered by a batch of launches. Only a task set whose tasks are short is queued (see
   * `queuedTaskMaxMillis`), and free cores everywhere are filled before any queue; 0 (the default here) sends no
   * more than the free cores, as Spark does.
   */
  readonly queuedTasksPerCore?: number
  /**
   * A task set's tasks are queued only once most of its successful ones (their median) ran under this long
   * (default 25 ms): a queue hides a round trip per task, which matters only for short tasks, and a long task
   * queued behind another could have run at once on a core that comes free elsewhere.
   */
  readonly queuedTaskMaxMillis?: number
}

/**
 * Where a task would rather run: the executors holding what it reads (and their hosts).
 *
 * @since 0.1.0
 * @category models
 */
export interface Location {
  readonly executorId: string
  readonly host: string
}

/**
 * Locality levels, best first: on an executor holding what the task reads, on its host, anywhere.
 *
 * @since 0.1.0
 */
export const localityLevels: typeof offers.localityLevels = offers.localityLevels

/**
 * @since 0.1.0
 * @category models
 */
export type State = internal.State

/**
 * @since 0.1.0
 * @category models
 */
export type Input =
  & (
    | {
      readonly _tag: "SubmitTaskSet"
      readonly taskSet: TaskSetId.TaskSetId
      readonly jobId: number
      readonly pool: string
      readonly partitions: ReadonlyArray<number>
      /** Where each task would rather run (by index), if anywhere. */
      readonly preferences?: ReadonlyArray<ReadonlyArray<Location>>
    }
    /** No job needs the stage any more: every task set of it is dropped, and their running attempts killed. */
    | { readonly _tag: "CancelStage"; readonly stageId: number; readonly reason: string }
    /** Make the set a zombie: no further launches. */
    | { readonly _tag: "StopTaskSet"; readonly taskSet: TaskSetId.TaskSetId }
    | { readonly _tag: "ExecutorAdded"; readonly executorId: string; readonly host: string; readonly cores: number }
    | { readonly _tag: "ExecutorLost"; readonly executorId: string; readonly reason: string }
    /**
     * The executor is being decommissioned: it is offered nothing more, its running attempts go on, and those
     * still running at `killAt` (if given) get a copy on another executor.
     */
    | { readonly _tag: "ExecutorDecommissioned"; readonly executorId: string; readonly killAt: number | undefined }
    | {
      readonly _tag: "StatusUpdate"
      readonly taskId: number
      readonly state: "RUNNING" | "FINISHED" | "FAILED" | "KILLED" | "LOST"
      /** Why it failed or was killed. */
      readonly reason: string
      /**
       * It failed to fetch a shuffle block: not its fault, and not worth retrying here — the DAG scheduler
       * resubmits the stage — so the set becomes a zombie.
       */
      readonly fetchFailed?: boolean
    }
    | { readonly _tag: "ReviveOffers" }
    | { readonly _tag: "CheckSpeculation" }
  )
  & { readonly now: number }

/**
 * @since 0.1.0
 * @category models
 */
export type Command =
  | {
    readonly _tag: "LaunchTask"
    readonly taskId: number
    readonly taskSet: TaskSetId.TaskSetId
    readonly index: number
    readonly partition: number
    readonly attempt: number
    readonly executorId: string
    readonly speculative: boolean
    /** The locality level it was launched at. */
    readonly locality: typeof localityLevels[number]
  }
  | { readonly _tag: "KillTask"; readonly taskId: number; readonly executorId: string; readonly reason: string }
  /** The result of `taskId` is the result of task `index` (partition `partition`) of the set. */
  | {
    readonly _tag: "TaskSucceeded"
    readonly taskSet: TaskSetId.TaskSetId
    readonly index: number
    readonly partition: number
    readonly taskId: number
    readonly executorId: string
  }
  /** Every task of the set has succeeded. */
  | { readonly _tag: "TaskSetFinished"; readonly taskSet: TaskSetId.TaskSetId }
  /** The set was aborted; its job fails with the reason. */
  | { readonly _tag: "TaskSetFailed"; readonly taskSet: TaskSetId.TaskSetId; readonly reason: string }
  | { readonly _tag: "Log"; readonly level: "Debug" | "Info" | "Warning"; readonly message: string }

/**
 * The reason a killed attempt lost to another.
 *
 * @since 0.1.0
 */
export const anotherAttemptSucceeded: typeof attemptEnds.anotherAttemptSucceeded = attemptEnds.anotherAttemptSucceeded

/**
 * @since 0.1.0
 * @category constructors
 */
export const make = (config: Config): State => ({
  config,
  executors: new Map(),
  taskSets: new Map(),
  attempts: new Map(),
  nextTaskId: 0,
  random: config.seed >>> 0 || 1
})

/**
 * @since 0.1.0
 */
export const step = (state: State, input: Input): Array<Command> => {
  const out: Array<Command> = []
  switch (input._tag) {
    case "SubmitTaskSet":
      submit(state, input, out)
      break
    case "CancelStage":
      for (const taskSet of [...state.taskSets.values()]) {
        if (taskSet.id.stageId === input.stageId) cancel(state, taskSet, input.reason, out)
      }
      break
    case "StopTaskSet": {
      const taskSet = state.taskSets.get(TaskSetId.key(input.taskSet))
      if (taskSet !== undefined) becomeZombie(state, taskSet)
      break
    }
    case "ExecutorAdded":
      if (!state.executors.has(input.executorId)) {
        state.executors.set(input.executorId, {
          id: input.executorId,
          host: input.host,
          cores: input.cores,
          freeCores: input.cores,
          queued: []
        })
      }
      break
    case "ExecutorLost":
      executorLost(state, input.executorId, input.reason, input.now, out)
      break
    case "ExecutorDecommissioned":
      decommissioned(state, input.executorId, input.killAt, out)
      break
    case "StatusUpdate":
      statusUpdate(state, input, out)
      break
    case "ReviveOffers":
      break
    case "CheckSpeculation":
      checkSpeculation(state, input.now)
      break
  }
  copyOffDecommissioned(state, input.now)
  // Every event may free cores or bring work: offer after each, as Spark revives offers on events.
  offer(state, input.now, out)
  return out
}

/**
 * Running attempts, by executor: what a lost executor takes with it.
 *
 * @since 0.1.0
 */
export const runningOn = (state: State, executorId: string): Array<number> =>
  [...state.attempts.values()].filter((a) => a.executorId === executorId).map((a) => a.taskId)

/**
 * The work waiting and running: tasks waiting for a core (or for their speculative copy) in task sets that still
 * launch, and running attempts by executor — what dynamic allocation sizes the app by.
 *
 * @since 0.1.0
 */
export const backlog = (state: State): { readonly pending: number; readonly running: ReadonlyMap<string, number> } => {
  let pending = 0
  for (const taskSet of state.taskSets.values()) {
    if (taskSet.zombie) continue
    for (const task of taskSet.tasks) if (!task.done && (task.pending || task.speculatable)) pending++
  }
  const running = new Map<string, number>()
  for (const attempt of state.attempts.values()) {
    running.set(attempt.executorId, (running.get(attempt.executorId) ?? 0) + 1)
  }
  return { pending, running }
}

/**
 * What is wrong with the state, if anything: no executor's cores are double-booked or negative; every attempt
 * runs on a live executor for a task that lists it, either on a core (with the time it took it) or queued there
 * (without); no executor queues past its limit, nor while a core of it is free; a task is pending, running (at
 * most an original and a speculative copy) or done, never pending while it runs.
 *
 * @since 0.1.0
 */
export const validate: (state: State) => Array<string> = validation.validateTaskScheduler
