// Attempts that end: as their executor reports (a success, a failure counted against maxFailures, a kill) or with it.
import { StackFrames } from "@kindling/app"
import type { Command, Input } from "../../TaskScheduler.js"
import * as TaskSetId from "../../TaskSetId.js"
import type { Attempt, State, TaskEntry, TaskSet } from "./taskSets.js"
import { becomeZombie, dropTaskSet, killAttempt, shortTaskMillis } from "./taskSets.js"

// The reason a killed attempt lost to another (public as `TaskScheduler.anotherAttemptSucceeded`).
export const anotherAttemptSucceeded = "another attempt succeeded"

// The attempt is over: it no longer runs, and its place on its executor is free — a core, which the oldest
// attempt queued there takes (the executor starts what waits in the order it came), or its place in the queue
// (one that ended before its turn: killed, or started early since tasks that gather inputs first may overtake).
const endAttempt = (state: State, attempt: Attempt, now: number): TaskEntry | undefined => {
  state.attempts.delete(attempt.taskId)
  const executor = state.executors.get(attempt.executorId)
  if (executor !== undefined) {
    const at = executor.queued.indexOf(attempt.taskId)
    if (at >= 0) executor.queued.splice(at, 1)
    else executor.freeCores += state.config.cpusPerTask
    while (executor.freeCores >= state.config.cpusPerTask && executor.queued.length > 0) {
      executor.freeCores -= state.config.cpusPerTask
      state.attempts.get(executor.queued.shift()!)!.runningSince = now
    }
  }
  const task = state.taskSets.get(TaskSetId.key(attempt.taskSet))?.tasks[attempt.index]
  task?.running.delete(attempt.taskId)
  return task
}

export const statusUpdate = (state: State, input: Extract<Input, { _tag: "StatusUpdate" }>, out: Array<Command>) => {
  const attempt = state.attempts.get(input.taskId)
  // An attempt that already ended (a late or repeated report, or one of a lost executor) changes nothing.
  if (attempt === undefined || input.state === "RUNNING") return
  const task = endAttempt(state, attempt, input.now)
  const taskSet = state.taskSets.get(TaskSetId.key(attempt.taskSet))
  if (task === undefined || taskSet === undefined) return
  if (input.fetchFailed === true && input.state === "FAILED" && !task.done) {
    out.push({
      _tag: "Log",
      level: "Warning",
      message: `Lost task ${attempt.index}.${attempt.attempt} in stage ${TaskSetId.key(taskSet.id)} ` +
        `(TID ${attempt.taskId}): ${input.reason}`
    })
    becomeZombie(state, taskSet)
    return
  }
  // The end of an attempt whose task is already done (the loser of a speculative race) counts for nothing, but it
  // may be the last attempt of a zombie, which is then forgotten.
  if (!task.done) finishedAttempt(state, taskSet, task, attempt, input, out)
  if (taskSet.zombie && taskSet.tasks.every((entry) => entry.running.size === 0)) {
    state.taskSets.delete(TaskSetId.key(taskSet.id))
  }
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
  const name = `task ${attempt.index}.${attempt.attempt} in stage ${TaskSetId.key(taskSet.id)} ` +
    `(TID ${attempt.taskId})`
  switch (input.state) {
    case "FINISHED": {
      task.done = true
      task.pending = false
      task.speculatable = false
      taskSet.succeeded++
      const duration = input.now - (attempt.runningSince ?? attempt.launchedAt)
      taskSet.durations.push(duration)
      if (duration < shortTaskMillis(state)) taskSet.shortSuccesses++
      out.push({
        _tag: "TaskSucceeded",
        taskSet: taskSet.id,
        index: task.index,
        partition: task.partition,
        taskId: attempt.taskId,
        executorId: attempt.executorId
      })
      for (const other of task.running) killAttempt(state, other, anotherAttemptSucceeded, out)
      if (taskSet.succeeded === taskSet.tasks.length && !taskSet.zombie) {
        state.taskSets.delete(TaskSetId.key(taskSet.id))
        out.push({ _tag: "TaskSetFinished", taskSet: taskSet.id })
      }
      return
    }
    case "FAILED": {
      task.failures++
      const executor = state.executors.get(attempt.executorId)
      const where = `(${executor?.host ?? "unknown host"} executor ${attempt.executorId})`
      // The error in one line, its trace at debug only: the failure of the job, which an app's failure summary
      // shows, carries the trace once. The failure that aborts the stage is told by that failure alone.
      const aborts = !taskSet.zombie && task.failures >= state.config.maxFailures
      out.push({ _tag: "Log", level: "Debug", message: `Lost ${name} ${where}: ${input.reason}` })
      out.push(
        aborts
          ? {
            _tag: "Log",
            level: "Info",
            message: `Task ${task.index} in stage ${TaskSetId.key(taskSet.id)} failed ` +
              `${state.config.maxFailures} times; aborting job`
          }
          : {
            _tag: "Log",
            level: "Warning",
            message: `Lost ${name} ${where}: ${StackFrames.withoutFrames(input.reason)}`
          }
      )
      if (taskSet.zombie) return
      if (aborts) {
        const reason = `Task ${task.index} in stage ${TaskSetId.key(taskSet.id)} failed ` +
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

export const executorLost = (
  state: State,
  executorId: string,
  reason: string,
  now: number,
  out: Array<Command>
) => {
  const executor = state.executors.get(executorId)
  if (executor === undefined) return
  state.executors.delete(executorId)
  for (const attempt of [...state.attempts.values()]) {
    if (attempt.executorId !== executorId) continue
    const task = endAttempt(state, attempt, now)
    const taskSet = state.taskSets.get(TaskSetId.key(attempt.taskSet))
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
      state.taskSets.delete(TaskSetId.key(taskSet.id))
    }
  }
}
