// The task scheduler's records (executors, task sets, tasks, attempts), and task sets added, made zombies or dropped.
import type { Command, Config, Input, Location } from "../../TaskScheduler.js"
import * as TaskSetId from "../../TaskSetId.js"

export interface TaskEntry {
  readonly index: number
  readonly partition: number
  failures: number
  /** Attempts started so far (the next attempt's number). */
  attempts: number
  done: boolean
  /** Task ids of its running attempts. */
  readonly running: Set<number>
  /** Waiting for a core (a first attempt, or a retry). */
  pending: boolean
  /** Marked as a straggler: one speculative copy is to be launched. */
  speculatable: boolean
  readonly preferred: ReadonlyArray<Location>
}

export interface TaskSet {
  readonly id: TaskSetId.TaskSetId
  readonly jobId: number
  readonly pool: string
  readonly tasks: Array<TaskEntry>
  /** Indexes of tasks that became pending, oldest first; an index that has since launched is skipped. */
  readonly pendingQueue: Array<number>
  pendingHead: number
  succeeded: number
  /** How long the successful attempts ran, for speculation. */
  readonly durations: Array<number>
  /** How many of them ran under `queuedTaskMaxMillis`: while they are most, its tasks may be queued. */
  shortSuccesses: number
  /**
   * Launches nothing more (a fetch failure showed its stage attempt cannot finish): its running attempts go on,
   * and it is forgotten once none runs.
   */
  zombie: boolean
  /** Some task has a preferred location: offers follow delay scheduling. */
  readonly localityAware: boolean
  /** The best level it may still insist on (an index of `localityLevels`), and since when. */
  level: number
  levelSince: number
}

export interface Attempt {
  readonly taskId: number
  readonly taskSet: TaskSetId.TaskSetId
  readonly index: number
  readonly attempt: number
  readonly executorId: string
  /** When it was sent to its executor. */
  readonly launchedAt: number
  /**
   * When it took a core there: at once when it was sent to a free core; for one queued on its executor, when the
   * attempt ahead of it ended (the executor runs what waits in the order it came). Undefined while queued.
   */
  runningSince: number | undefined
  readonly speculative: boolean
  /** Set once the scheduler has asked for it to be killed: its end then counts for nothing. */
  killed: boolean
}

export interface Executor {
  readonly id: string
  readonly host: string
  readonly cores: number
  /** Cores no running attempt takes. */
  freeCores: number
  /**
   * Attempts sent beyond its free cores (`queuedTasksPerCore`), oldest first: they wait on the executor, each
   * taking a core as one comes free, so that the next task is there when one ends.
   */
  readonly queued: Array<number>
  /** Being decommissioned: offered nothing; past `killAt`, what still runs on it is copied elsewhere. */
  decommissioned?: { readonly killAt: number | undefined }
}

// The task scheduler's state (public as `TaskScheduler.State`).
export interface State {
  readonly config: Config
  readonly executors: Map<string, Executor>
  readonly taskSets: Map<TaskSetId.Key, TaskSet>
  readonly attempts: Map<number, Attempt>
  nextTaskId: number
  random: number
}

export const submit = (state: State, input: Extract<Input, { _tag: "SubmitTaskSet" }>, out: Array<Command>) => {
  if (state.taskSets.has(TaskSetId.key(input.taskSet))) return
  const taskSet: TaskSet = {
    id: input.taskSet,
    jobId: input.jobId,
    pool: input.pool,
    tasks: input.partitions.map((partition, index) => ({
      index,
      partition,
      failures: 0,
      attempts: 0,
      done: false,
      running: new Set(),
      pending: true,
      speculatable: false,
      preferred: input.preferences?.[index] ?? []
    })),
    pendingQueue: input.partitions.map((_, index) => index),
    pendingHead: 0,
    succeeded: 0,
    durations: [],
    shortSuccesses: 0,
    zombie: false,
    localityAware: input.preferences?.some((locations) => locations.length > 0) ?? false,
    level: 0,
    levelSince: input.now
  }
  if (taskSet.tasks.length === 0) {
    out.push({ _tag: "TaskSetFinished", taskSet: input.taskSet })
    return
  }
  state.taskSets.set(TaskSetId.key(taskSet.id), taskSet)
  out.push({
    _tag: "Log",
    level: "Info",
    message: `Adding task set ${TaskSetId.key(input.taskSet)} with ${taskSet.tasks.length} tasks`
  })
}

// Ends the set's running attempts (their cores come back when their end is reported) and forgets the set.
export const dropTaskSet = (state: State, taskSet: TaskSet, reason: string, out: Array<Command>) => {
  for (const task of taskSet.tasks) {
    for (const taskId of task.running) killAttempt(state, taskId, reason, out)
  }
  state.taskSets.delete(TaskSetId.key(taskSet.id))
}

// How many attempts may wait on an executor for a core, beyond those it runs.
export const queueLimit = (state: State, executor: Executor): number =>
  Math.floor((executor.cores * (state.config.queuedTasksPerCore ?? 0)) / state.config.cpusPerTask)

export const shortTaskMillis = (state: State): number => state.config.queuedTaskMaxMillis ?? 25

// The median of the set's successful durations is under `queuedTaskMaxMillis` (the median as speculation takes
// it, the middle of the sorted durations, is under it exactly when more than half of them are).
export const queueable = (taskSet: TaskSet): boolean =>
  taskSet.shortSuccesses > Math.floor(taskSet.durations.length / 2)

export const killAttempt = (state: State, taskId: number, reason: string, out: Array<Command>) => {
  const attempt = state.attempts.get(taskId)
  if (attempt === undefined || attempt.killed) return
  attempt.killed = true
  out.push({ _tag: "KillTask", taskId, executorId: attempt.executorId, reason })
}

// A decommissioned executor is offered nothing more, and what waits there for a core is killed, to run elsewhere
// (its end is a kill that is not the task's fault, so it runs again without counting a failure); what runs there
// goes on.
export const decommissioned = (
  state: State,
  executorId: string,
  killAt: number | undefined,
  out: Array<Command>
) => {
  const executor = state.executors.get(executorId)
  if (executor === undefined) return
  const first = executor.decommissioned === undefined
  executor.decommissioned = { killAt }
  if (!first) return
  for (const taskId of executor.queued) {
    if (state.attempts.get(taskId)?.killed === true) continue
    out.push({ _tag: "KillTask", taskId, executorId, reason: `executor ${executorId} is decommissioned` })
  }
}

export const cancel = (state: State, taskSet: TaskSet, reason: string, out: Array<Command>) => {
  out.push({ _tag: "Log", level: "Info", message: `Cancelling stage ${taskSet.id.stageId}: ${reason}` })
  dropTaskSet(state, taskSet, reason, out)
}

export const becomeZombie = (state: State, taskSet: TaskSet) => {
  taskSet.zombie = true
  for (const task of taskSet.tasks) {
    task.pending = false
    task.speculatable = false
  }
  if (taskSet.tasks.every((task) => task.running.size === 0)) state.taskSets.delete(TaskSetId.key(taskSet.id))
}
