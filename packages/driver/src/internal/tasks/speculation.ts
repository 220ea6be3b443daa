// Speculation: stragglers found by how long they run against their set's median, and the copies offered of them.
import * as TaskSetId from "../../TaskSetId.js"
import type { State, TaskEntry, TaskSet } from "./taskSets.js"

export const checkSpeculation = (state: State, now: number) => {
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
      // One still waiting on its executor for a core is not running slow.
      const { runningSince } = state.attempts.get([...task.running][0]!)!
      if (runningSince !== undefined && now - runningSince > threshold) task.speculatable = true
    }
  }
}

// Past its kill interval, what a decommissioning executor still runs gets a copy elsewhere (speculation on or not:
// the executor is going away).
export const copyOffDecommissioned = (state: State, now: number) => {
  for (const executor of state.executors.values()) {
    const killAt = executor.decommissioned?.killAt
    if (killAt === undefined || now < killAt) continue
    for (const attempt of state.attempts.values()) {
      if (attempt.executorId !== executor.id) continue
      const task = state.taskSets.get(TaskSetId.key(attempt.taskSet))?.tasks[attempt.index]
      if (task !== undefined && !task.done && task.running.size === 1) task.speculatable = true
    }
  }
}

const anyDecommissioned = (state: State) => {
  for (const executor of state.executors.values()) if (executor.decommissioned !== undefined) return true
  return false
}

export const speculatableTask = (
  state: State,
  taskSet: TaskSet,
  executorId: string
): { readonly task: TaskEntry; readonly level: number } | undefined => {
  if (!state.config.speculation.enabled && !anyDecommissioned(state)) return undefined
  const task = taskSet.tasks.find((task) =>
    task.speculatable && !task.done && task.running.size === 1 &&
    state.attempts.get([...task.running][0]!)!.executorId !== executorId
  )
  return task === undefined ? undefined : { task, level: 2 }
}
