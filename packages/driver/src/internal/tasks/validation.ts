// The task scheduler's invariants (public as `TaskScheduler.validate`, which lists them).
import * as TaskSetId from "../../TaskSetId.js"
import { queueLimit, shortTaskMillis, type State } from "./taskSets.js"

export const validateTaskScheduler = (state: State): Array<string> => {
  const problems: Array<string> = []
  const used = new Map<string, number>()
  for (const attempt of state.attempts.values()) {
    if (!state.executors.has(attempt.executorId)) {
      problems.push(`TID ${attempt.taskId} runs on unknown executor ${attempt.executorId}`)
    }
    const queued = state.executors.get(attempt.executorId)?.queued.includes(attempt.taskId) ?? false
    if (queued === (attempt.runningSince !== undefined)) {
      problems.push(`TID ${attempt.taskId} is ${queued ? "queued and running" : "neither queued nor running"}`)
    }
    if (!queued) used.set(attempt.executorId, (used.get(attempt.executorId) ?? 0) + state.config.cpusPerTask)
    const task = state.taskSets.get(TaskSetId.key(attempt.taskSet))?.tasks[attempt.index]
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
    if (executor.queued.length > queueLimit(state, executor)) {
      problems.push(`executor ${executor.id} queues ${executor.queued.length} tasks, over its limit`)
    }
    if (executor.queued.length > 0 && executor.freeCores >= state.config.cpusPerTask) {
      problems.push(`executor ${executor.id} queues tasks with a core free`)
    }
    for (const taskId of executor.queued) {
      if (state.attempts.get(taskId)?.executorId !== executor.id) {
        problems.push(`executor ${executor.id} queues TID ${taskId}, not an attempt of its own`)
      }
    }
  }
  for (const taskSet of state.taskSets.values()) {
    let succeeded = 0
    for (const task of taskSet.tasks) {
      if (task.done) succeeded++
      if (task.done && task.pending) {
        problems.push(`task ${TaskSetId.key(taskSet.id)}/${task.index} is done and pending`)
      }
      if (task.pending && task.running.size > 0) {
        problems.push(`task ${TaskSetId.key(taskSet.id)}/${task.index} pending while running`)
      }
      if (task.running.size > 2) {
        problems.push(`task ${TaskSetId.key(taskSet.id)}/${task.index} runs ${task.running.size} times`)
      }
      if (!task.done && !task.pending && task.running.size === 0 && !taskSet.zombie) {
        problems.push(`task ${TaskSetId.key(taskSet.id)}/${task.index} is neither pending, running nor done`)
      }
      for (const taskId of task.running) {
        if (!state.attempts.has(taskId)) {
          problems.push(`task ${TaskSetId.key(taskSet.id)}/${task.index} lists ended TID ${taskId}`)
        }
      }
    }
    const short = taskSet.durations.filter((duration) => duration < shortTaskMillis(state)).length
    if (short !== taskSet.shortSuccesses) {
      problems.push(
        `task set ${TaskSetId.key(taskSet.id)} counts ${taskSet.shortSuccesses} short successes, not ${short}`
      )
    }
    if (succeeded !== taskSet.succeeded) {
      problems.push(`task set ${TaskSetId.key(taskSet.id)} counts ${taskSet.succeeded} done`)
    }
  }
  return problems
}
