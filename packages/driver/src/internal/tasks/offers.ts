// Offers: executors' free cores matched to pending tasks, task sets in priority order and under delay scheduling.
import type { Command } from "../../TaskScheduler.js"
import * as TaskSetId from "../../TaskSetId.js"
import { speculatableTask } from "./speculation.js"
import {
  type Attempt,
  type Executor,
  queueable,
  queueLimit,
  type State,
  type TaskEntry,
  type TaskSet
} from "./taskSets.js"

// Locality levels, best first (public as `TaskScheduler.localityLevels`).
export const localityLevels = ["PROCESS_LOCAL", "NODE_LOCAL", "ANY"] as const

// Task sets in the order they get cores: FIFO by job then stage; FAIR by the pool running least, then FIFO.
const ordered = (state: State): Array<TaskSet> => {
  const sets = [...state.taskSets.values()]
  const fifo = (a: TaskSet, b: TaskSet) => a.jobId - b.jobId || a.id.stageId - b.id.stageId
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

// The next task of the set for this executor: a pending one, else a straggler to copy onto another executor —
// on a free core only: a copy that waited in a queue would be no quicker than the attempt it is to overtake. Into
// a queue only the tasks of a set whose tasks are short.
const nextTask = (
  state: State,
  taskSet: TaskSet,
  executor: Executor,
  now: number,
  queueing: boolean
): { readonly task: TaskEntry; readonly level: number } | undefined => {
  if (taskSet.zombie || (queueing && !queueable(taskSet))) return undefined
  const copy = () => queueing ? undefined : speculatableTask(state, taskSet, executor.id)
  if (taskSet.localityAware) return localTask(state, taskSet, executor, now) ?? copy()
  const queue = taskSet.pendingQueue
  while (taskSet.pendingHead < queue.length && !taskSet.tasks[queue[taskSet.pendingHead]!]!.pending) {
    taskSet.pendingHead++
  }
  if (taskSet.pendingHead < queue.length) return { task: taskSet.tasks[queue[taskSet.pendingHead]!]!, level: 2 }
  // Drained: start the queue afresh so that it does not grow with every retry.
  queue.length = 0
  taskSet.pendingHead = 0
  return copy()
}

// Free cores first, on every executor, round by round; then the executors' queues (`queuedTasksPerCore`), the
// same way, so that a queue never takes a task a free core elsewhere could run now.
export const offer = (state: State, now: number, out: Array<Command>) => {
  if (state.taskSets.size === 0) return
  const cpus = state.config.cpusPerTask
  const executors = shuffled(state, [...state.executors.values()].filter((e) => e.decommissioned === undefined))
  const passes = [
    { queueing: false, hasRoom: (executor: Executor) => executor.freeCores >= cpus },
    { queueing: true, hasRoom: (executor: Executor) => executor.queued.length < queueLimit(state, executor) }
  ]
  for (const { hasRoom, queueing } of passes) {
    let launched = true
    while (launched) {
      launched = false
      const sets = ordered(state)
      for (const executor of executors) {
        if (!hasRoom(executor)) continue
        for (const taskSet of sets) {
          const next = nextTask(state, taskSet, executor, now, queueing)
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
    index: task.index,
    attempt: task.attempts++,
    executorId: executor.id,
    launchedAt: now,
    runningSince: undefined,
    speculative,
    killed: false
  }
  state.attempts.set(attempt.taskId, attempt)
  task.running.add(attempt.taskId)
  task.pending = false
  task.speculatable = false
  if (executor.freeCores >= state.config.cpusPerTask) {
    executor.freeCores -= state.config.cpusPerTask
    attempt.runningSince = now
  } else {
    executor.queued.push(attempt.taskId)
  }
  if (speculative) {
    out.push({
      _tag: "Log",
      level: "Info",
      message: `Launching speculative task ${task.index}.${attempt.attempt} in stage ${
        TaskSetId.key(taskSet.id)
      } (TID ${attempt.taskId}) on executor ${executor.id}`
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
