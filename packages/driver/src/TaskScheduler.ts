/**
 * The driver's task scheduler (Spark's `TaskSchedulerImpl` and `TaskSetManager`) as a pure core:
 * `step(state, input) → commands`. It keeps a task set per stage attempt, matches pending tasks to the free cores
 * of live executors, counts failures per task against `maxFailures`, resubmits the tasks of a lost executor,
 * launches speculative copies of stragglers, and says when a task set has finished or failed. It does not know
 * what a task computes; the shell holds the tasks' bytes and results by task id.
 *
 * Offers follow Spark: task sets in priority order (FIFO: by job, then stage; FAIR: the pool with the fewest
 * running tasks relative to its share first), executors shuffled, one task per executor per round so that
 * work spreads.
 *
 * @since 0.1.0
 */

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
export const localityLevels = ["PROCESS_LOCAL", "NODE_LOCAL", "ANY"] as const

interface TaskEntry {
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

interface TaskSet {
  readonly id: string
  readonly stageId: number
  readonly stageAttempt: number
  readonly jobId: number
  readonly pool: string
  readonly tasks: Array<TaskEntry>
  /** Indexes of tasks that became pending, oldest first; an index that has since launched is skipped. */
  readonly pendingQueue: Array<number>
  pendingHead: number
  succeeded: number
  /** How long the successful attempts ran, for speculation. */
  readonly durations: Array<number>
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

interface Attempt {
  readonly taskId: number
  readonly taskSet: string
  readonly stageId: number
  readonly stageAttempt: number
  readonly index: number
  readonly attempt: number
  readonly executorId: string
  readonly startedAt: number
  readonly speculative: boolean
  /** Set once the scheduler has asked for it to be killed: its end then counts for nothing. */
  killed: boolean
}

interface Executor {
  readonly id: string
  readonly host: string
  readonly cores: number
  freeCores: number
}

/**
 * @since 0.1.0
 * @category models
 */
export interface State {
  readonly config: Config
  readonly executors: Map<string, Executor>
  readonly taskSets: Map<string, TaskSet>
  readonly attempts: Map<number, Attempt>
  nextTaskId: number
  random: number
}

/**
 * @since 0.1.0
 * @category models
 */
export type Input =
  & (
    | {
      readonly _tag: "SubmitTaskSet"
      readonly taskSet: string
      readonly stageId: number
      readonly stageAttempt: number
      readonly jobId: number
      readonly pool: string
      readonly partitions: ReadonlyArray<number>
      /** Where each task would rather run (by index), if anywhere. */
      readonly preferences?: ReadonlyArray<ReadonlyArray<Location>>
    }
    /** No job needs the stage any more: every task set of it is dropped, and their running attempts killed. */
    | { readonly _tag: "CancelStage"; readonly stageId: number; readonly reason: string }
    /** Make the set a zombie: no further launches. */
    | { readonly _tag: "StopTaskSet"; readonly taskSet: string }
    | { readonly _tag: "ExecutorAdded"; readonly executorId: string; readonly host: string; readonly cores: number }
    | { readonly _tag: "ExecutorLost"; readonly executorId: string; readonly reason: string }
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
    readonly taskSet: string
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
    readonly taskSet: string
    readonly stageId: number
    readonly stageAttempt: number
    readonly index: number
    readonly partition: number
    readonly taskId: number
    readonly executorId: string
  }
  /** Every task of the set has succeeded. */
  | { readonly _tag: "TaskSetFinished"; readonly taskSet: string }
  /** The set was aborted; its job fails with the reason. */
  | { readonly _tag: "TaskSetFailed"; readonly taskSet: string; readonly reason: string }
  | { readonly _tag: "Log"; readonly level: "Info" | "Warning"; readonly message: string }

/**
 * The reason a killed attempt lost to another.
 *
 * @since 0.1.0
 */
export const anotherAttemptSucceeded = "another attempt succeeded"

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
        if (taskSet.stageId === input.stageId) cancel(state, taskSet, input.reason, out)
      }
      break
    case "StopTaskSet": {
      const taskSet = state.taskSets.get(input.taskSet)
      if (taskSet !== undefined) becomeZombie(state, taskSet)
      break
    }
    case "ExecutorAdded":
      if (!state.executors.has(input.executorId)) {
        state.executors.set(input.executorId, {
          id: input.executorId,
          host: input.host,
          cores: input.cores,
          freeCores: input.cores
        })
      }
      break
    case "ExecutorLost":
      executorLost(state, input.executorId, input.reason, out)
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
  // Every event may free cores or bring work: offer after each, as Spark revives offers on events.
  offer(state, input.now, out)
  return out
}

const submit = (state: State, input: Extract<Input, { _tag: "SubmitTaskSet" }>, out: Array<Command>) => {
  if (state.taskSets.has(input.taskSet)) return
  const taskSet: TaskSet = {
    id: input.taskSet,
    stageId: input.stageId,
    stageAttempt: input.stageAttempt,
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
    zombie: false,
    localityAware: input.preferences?.some((locations) => locations.length > 0) ?? false,
    level: 0,
    levelSince: input.now
  }
  if (taskSet.tasks.length === 0) {
    out.push({ _tag: "TaskSetFinished", taskSet: input.taskSet })
    return
  }
  state.taskSets.set(taskSet.id, taskSet)
  out.push({
    _tag: "Log",
    level: "Info",
    message: `Adding task set ${input.stageId}.${input.stageAttempt} with ${taskSet.tasks.length} tasks`
  })
}

// Ends the set's running attempts (their cores come back when their end is reported) and forgets the set.
const dropTaskSet = (state: State, taskSet: TaskSet, reason: string, out: Array<Command>) => {
  for (const task of taskSet.tasks) {
    for (const taskId of task.running) killAttempt(state, taskId, reason, out)
  }
  state.taskSets.delete(taskSet.id)
}

const killAttempt = (state: State, taskId: number, reason: string, out: Array<Command>) => {
  const attempt = state.attempts.get(taskId)
  if (attempt === undefined || attempt.killed) return
  attempt.killed = true
  out.push({ _tag: "KillTask", taskId, executorId: attempt.executorId, reason })
}

const cancel = (state: State, taskSet: TaskSet, reason: string, out: Array<Command>) => {
  out.push({ _tag: "Log", level: "Info", message: `Cancelling stage ${taskSet.stageId}: ${reason}` })
  dropTaskSet(state, taskSet, reason, out)
}

// The attempt is over: its cores are free and it no longer runs.
const endAttempt = (state: State, attempt: Attempt): TaskEntry | undefined => {
  state.attempts.delete(attempt.taskId)
  const executor = state.executors.get(attempt.executorId)
  if (executor !== undefined) executor.freeCores += state.config.cpusPerTask
  const task = state.taskSets.get(attempt.taskSet)?.tasks[attempt.index]
  task?.running.delete(attempt.taskId)
  return task
}

const becomeZombie = (state: State, taskSet: TaskSet) => {
  taskSet.zombie = true
  for (const task of taskSet.tasks) {
    task.pending = false
    task.speculatable = false
  }
  if (taskSet.tasks.every((task) => task.running.size === 0)) state.taskSets.delete(taskSet.id)
}

const statusUpdate = (state: State, input: Extract<Input, { _tag: "StatusUpdate" }>, out: Array<Command>) => {
  const attempt = state.attempts.get(input.taskId)
  // An attempt that already ended (a late or repeated report, or one of a lost executor) changes nothing.
  if (attempt === undefined || input.state === "RUNNING") return
  const task = endAttempt(state, attempt)
  const taskSet = state.taskSets.get(attempt.taskSet)
  if (task === undefined || taskSet === undefined) return
  if (input.fetchFailed === true && input.state === "FAILED" && !task.done) {
    out.push({
      _tag: "Log",
      level: "Warning",
      message: `Lost task ${attempt.index}.${attempt.attempt} in stage ${taskSet.stageId}.${taskSet.stageAttempt} ` +
        `(TID ${attempt.taskId}): ${input.reason}`
    })
    becomeZombie(state, taskSet)
    return
  }
  if (task.done) return
  if (taskSet.zombie) {
    finishedAttempt(state, taskSet, task, attempt, input, out)
    if (taskSet.tasks.every((entry) => entry.running.size === 0)) state.taskSets.delete(taskSet.id)
    return
  }
  finishedAttempt(state, taskSet, task, attempt, input, out)
}

// A zombie's attempts that end count as they would (a map task's output is still an output), but nothing of
// it runs again.
const finishedAttempt = (
  state: State,
  taskSet: TaskSet,
  task: TaskEntry,
  attempt: Attempt,
  input: Extract<Input, { _tag: "StatusUpdate" }>,
  out: Array<Command>
) => {
  const name = `task ${attempt.index}.${attempt.attempt} in stage ${taskSet.stageId}.${taskSet.stageAttempt} ` +
    `(TID ${attempt.taskId})`
  switch (input.state) {
    case "FINISHED": {
      task.done = true
      task.pending = false
      task.speculatable = false
      taskSet.succeeded++
      taskSet.durations.push(input.now - attempt.startedAt)
      out.push({
        _tag: "TaskSucceeded",
        taskSet: taskSet.id,
        stageId: taskSet.stageId,
        stageAttempt: taskSet.stageAttempt,
        index: task.index,
        partition: task.partition,
        taskId: attempt.taskId,
        executorId: attempt.executorId
      })
      for (const other of task.running) killAttempt(state, other, anotherAttemptSucceeded, out)
      if (taskSet.succeeded === taskSet.tasks.length && !taskSet.zombie) {
        state.taskSets.delete(taskSet.id)
        out.push({ _tag: "TaskSetFinished", taskSet: taskSet.id })
      }
      return
    }
    case "FAILED": {
      task.failures++
      const executor = state.executors.get(attempt.executorId)
      const where = `(${executor?.host ?? "unknown host"} executor ${attempt.executorId})`
      out.push({ _tag: "Log", level: "Warning", message: `Lost ${name} ${where}: ${input.reason}` })
      if (taskSet.zombie) return
      if (task.failures >= state.config.maxFailures) {
        const reason = `Task ${task.index} in stage ${taskSet.stageId}.${taskSet.stageAttempt} failed ` +
          `${state.config.maxFailures} times, most recent failure: Lost ${name} ${where}: ${input.reason}`
        dropTaskSet(state, taskSet, "stage aborted", out)
        out.push({ _tag: "TaskSetFailed", taskSet: taskSet.id, reason })
        return
      }
      retry(taskSet, task)
      return
    }
    case "KILLED":
    case "LOST":
      // Killed by the scheduler, it lost to another attempt or its set is gone; killed otherwise (its executor
      // is going away), or lost, it is not the task's fault: run it again without counting a failure.
      if (!attempt.killed && !taskSet.zombie) retry(taskSet, task)
      return
  }
}

const retry = (taskSet: TaskSet, task: TaskEntry) => {
  if (task.running.size > 0 || task.pending || taskSet.zombie) return
  task.pending = true
  taskSet.pendingQueue.push(task.index)
}

const executorLost = (state: State, executorId: string, reason: string, out: Array<Command>) => {
  const executor = state.executors.get(executorId)
  if (executor === undefined) return
  state.executors.delete(executorId)
  for (const attempt of [...state.attempts.values()]) {
    if (attempt.executorId !== executorId) continue
    const task = endAttempt(state, attempt)
    const taskSet = state.taskSets.get(attempt.taskSet)
    if (task !== undefined && taskSet !== undefined && !task.done) {
      out.push({
        _tag: "Log",
        level: "Warning",
        message: `Lost task ${attempt.index}.${attempt.attempt} (TID ${attempt.taskId}) on executor ${executorId}: ` +
          reason
      })
      retry(taskSet, task)
    }
    if (taskSet?.zombie === true && taskSet.tasks.every((entry) => entry.running.size === 0)) {
      state.taskSets.delete(taskSet.id)
    }
  }
}

const checkSpeculation = (state: State, now: number) => {
  const { speculation } = state.config
  if (!speculation.enabled) return
  for (const taskSet of state.taskSets.values()) {
    const needed = Math.floor(speculation.quantile * taskSet.tasks.length)
    if (taskSet.succeeded < Math.max(1, needed)) continue
    const sorted = [...taskSet.durations].sort((a, b) => a - b)
    const median = sorted[Math.floor(sorted.length / 2)]!
    const threshold = Math.max(speculation.minTaskRuntimeMillis, speculation.multiplier * median)
    for (const task of taskSet.tasks) {
      if (task.done || task.running.size !== 1 || task.speculatable) continue
      const attempt = state.attempts.get([...task.running][0]!)!
      if (now - attempt.startedAt > threshold) task.speculatable = true
    }
  }
}

// Task sets in the order they get cores: FIFO by job then stage; FAIR by the pool running least, then FIFO.
const ordered = (state: State): Array<TaskSet> => {
  const sets = [...state.taskSets.values()]
  const fifo = (a: TaskSet, b: TaskSet) => a.jobId - b.jobId || a.stageId - b.stageId
  if (state.config.mode === "FIFO") return sets.sort(fifo)
  const runningIn = new Map<string, number>()
  for (const set of sets) {
    const running = set.tasks.reduce((n, task) => n + task.running.size, 0)
    runningIn.set(set.pool, (runningIn.get(set.pool) ?? 0) + running)
  }
  return sets.sort((a, b) => runningIn.get(a.pool)! - runningIn.get(b.pool)! || fifo(a, b))
}

// xorshift32: the offers' shuffle is part of the state, so a run is reproducible from the seed.
const nextRandom = (state: State): number => {
  let x = state.random
  x ^= x << 13
  x ^= x >>> 17
  x ^= x << 5
  state.random = x >>> 0
  return state.random / 4294967296
}

const shuffled = <A>(state: State, items: Array<A>): Array<A> => {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(nextRandom(state) * (i + 1))
    ;[items[i], items[j]] = [items[j]!, items[i]!]
  }
  return items
}

// The level a locality-aware set may launch at now: levels no pending task can use on a live executor are
// skipped, and a level is given up after the locality wait without a launch at it.
const allowedLevel = (state: State, taskSet: TaskSet, now: number): number => {
  const wait = state.config.localityWaitMillis ?? 3000
  const hosts = new Set([...state.executors.values()].map((executor) => executor.host))
  const usable = (level: number) =>
    taskSet.tasks.some((task) =>
      task.pending &&
      task.preferred.some((location) =>
        level === 0 ? state.executors.has(location.executorId) : hosts.has(location.host)
      )
    )
  while (taskSet.level < 2) {
    if (!usable(taskSet.level)) {
      taskSet.level++
      taskSet.levelSince = now
    } else if (now - taskSet.levelSince >= wait) {
      taskSet.level++
      taskSet.levelSince += wait
    } else {
      break
    }
  }
  return taskSet.level
}

// A pending task for this executor under delay scheduling, and the level it would launch at: one preferring the
// executor, then its host, then one with no preference, then — once the set may — any.
const localTask = (
  state: State,
  taskSet: TaskSet,
  executor: Executor,
  now: number
): { readonly task: TaskEntry; readonly level: number } | undefined => {
  const allowed = allowedLevel(state, taskSet, now)
  let onHost: TaskEntry | undefined
  let unplaced: TaskEntry | undefined
  let any: TaskEntry | undefined
  for (const task of taskSet.tasks) {
    if (!task.pending) continue
    if (task.preferred.some((location) => location.executorId === executor.id)) return { task, level: 0 }
    if (onHost === undefined && task.preferred.some((location) => location.host === executor.host)) onHost = task
    if (unplaced === undefined && task.preferred.length === 0) unplaced = task
    any ??= task
  }
  if (onHost !== undefined && allowed >= 1) return { task: onHost, level: 1 }
  if (unplaced !== undefined) return { task: unplaced, level: 2 }
  if (any !== undefined && allowed >= 2) return { task: any, level: 2 }
  return undefined
}

// The next task of the set for this executor: a pending one, else a straggler to copy onto another executor.
const nextTask = (
  state: State,
  taskSet: TaskSet,
  executor: Executor,
  now: number
): { readonly task: TaskEntry; readonly level: number } | undefined => {
  if (taskSet.zombie) return undefined
  if (taskSet.localityAware) {
    const found = localTask(state, taskSet, executor, now)
    if (found !== undefined) return found
    return speculatableTask(state, taskSet, executor.id)
  }
  const queue = taskSet.pendingQueue
  while (taskSet.pendingHead < queue.length && !taskSet.tasks[queue[taskSet.pendingHead]!]!.pending) {
    taskSet.pendingHead++
  }
  if (taskSet.pendingHead < queue.length) return { task: taskSet.tasks[queue[taskSet.pendingHead]!]!, level: 2 }
  // Drained: start the queue afresh so that it does not grow with every retry.
  queue.length = 0
  taskSet.pendingHead = 0
  return speculatableTask(state, taskSet, executor.id)
}

const speculatableTask = (
  state: State,
  taskSet: TaskSet,
  executorId: string
): { readonly task: TaskEntry; readonly level: number } | undefined => {
  if (!state.config.speculation.enabled) return undefined
  const task = taskSet.tasks.find((task) =>
    task.speculatable && !task.done && task.running.size === 1 &&
    state.attempts.get([...task.running][0]!)!.executorId !== executorId
  )
  return task === undefined ? undefined : { task, level: 2 }
}

const offer = (state: State, now: number, out: Array<Command>) => {
  if (state.taskSets.size === 0) return
  const cpus = state.config.cpusPerTask
  const executors = shuffled(state, [...state.executors.values()])
  let launched = true
  while (launched) {
    launched = false
    const sets = ordered(state)
    for (const executor of executors) {
      if (executor.freeCores < cpus) continue
      for (const taskSet of sets) {
        const next = nextTask(state, taskSet, executor, now)
        if (next === undefined) continue
        // A launch at a preferred level is where the set stands now; its wait starts again.
        if (taskSet.localityAware && next.level < 2 && !next.task.speculatable) {
          taskSet.level = next.level
          taskSet.levelSince = now
        }
        launch(state, taskSet, next.task, executor, now, localityLevels[next.level]!, out)
        launched = true
        break
      }
    }
  }
}

const launch = (
  state: State,
  taskSet: TaskSet,
  task: TaskEntry,
  executor: Executor,
  now: number,
  locality: typeof localityLevels[number],
  out: Array<Command>
) => {
  const speculative = !task.pending
  const attempt: Attempt = {
    taskId: state.nextTaskId++,
    taskSet: taskSet.id,
    stageId: taskSet.stageId,
    stageAttempt: taskSet.stageAttempt,
    index: task.index,
    attempt: task.attempts++,
    executorId: executor.id,
    startedAt: now,
    speculative,
    killed: false
  }
  state.attempts.set(attempt.taskId, attempt)
  task.running.add(attempt.taskId)
  task.pending = false
  task.speculatable = false
  executor.freeCores -= state.config.cpusPerTask
  if (speculative) {
    out.push({
      _tag: "Log",
      level: "Info",
      message: `Launching speculative task ${task.index}.${attempt.attempt} in stage ${taskSet.stageId}.` +
        `${taskSet.stageAttempt} (TID ${attempt.taskId}) on executor ${executor.id}`
    })
  }
  out.push({
    _tag: "LaunchTask",
    taskId: attempt.taskId,
    taskSet: taskSet.id,
    index: task.index,
    partition: task.partition,
    attempt: attempt.attempt,
    executorId: executor.id,
    speculative,
    locality
  })
}

/**
 * Running attempts, by executor: what a lost executor takes with it.
 *
 * @since 0.1.0
 */
export const runningOn = (state: State, executorId: string): Array<number> =>
  [...state.attempts.values()].filter((a) => a.executorId === executorId).map((a) => a.taskId)

/**
 * What is wrong with the state, if anything: no executor's cores are double-booked or negative; every attempt
 * runs on a live executor for a task that lists it; a task is pending, running (at most an original and a
 * speculative copy) or done, never pending while it runs.
 *
 * @since 0.1.0
 */
export const validate = (state: State): Array<string> => {
  const problems: Array<string> = []
  const used = new Map<string, number>()
  for (const attempt of state.attempts.values()) {
    if (!state.executors.has(attempt.executorId)) {
      problems.push(`TID ${attempt.taskId} runs on unknown executor ${attempt.executorId}`)
    }
    used.set(attempt.executorId, (used.get(attempt.executorId) ?? 0) + state.config.cpusPerTask)
    const task = state.taskSets.get(attempt.taskSet)?.tasks[attempt.index]
    if (task !== undefined && !task.running.has(attempt.taskId)) {
      problems.push(`TID ${attempt.taskId} is not listed by its task`)
    }
  }
  for (const executor of state.executors.values()) {
    const booked = used.get(executor.id) ?? 0
    if (executor.freeCores < 0) problems.push(`executor ${executor.id} has ${executor.freeCores} free cores`)
    if (booked + executor.freeCores !== executor.cores) {
      problems.push(`executor ${executor.id}: ${booked} cores booked + ${executor.freeCores} free ≠ ${executor.cores}`)
    }
  }
  for (const taskSet of state.taskSets.values()) {
    let succeeded = 0
    for (const task of taskSet.tasks) {
      if (task.done) succeeded++
      if (task.done && task.pending) problems.push(`task ${taskSet.id}/${task.index} is done and pending`)
      if (task.pending && task.running.size > 0) problems.push(`task ${taskSet.id}/${task.index} pending while running`)
      if (task.running.size > 2) problems.push(`task ${taskSet.id}/${task.index} runs ${task.running.size} times`)
      if (!task.done && !task.pending && task.running.size === 0 && !taskSet.zombie) {
        problems.push(`task ${taskSet.id}/${task.index} is neither pending, running nor done`)
      }
      for (const taskId of task.running) {
        if (!state.attempts.has(taskId)) problems.push(`task ${taskSet.id}/${task.index} lists ended TID ${taskId}`)
      }
    }
    if (succeeded !== taskSet.succeeded) problems.push(`task set ${taskSet.id} counts ${taskSet.succeeded} done`)
  }
  return problems
}
