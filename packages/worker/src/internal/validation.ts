// The worker's invariants, as a list of what is wrong.
import { Ids } from "@kindling/protocol"
import { problems as fencingProblems } from "./fencing.js"
import type { State } from "./state.js"
import { problems as syncProblems } from "./stateSync.js"
import { problems as supervisionProblems } from "./supervision.js"

export const validate = (state: State): ReadonlyArray<string> => {
  const problems: Array<string> = []
  let cores = 0
  let memory = 0
  for (const driver of state.drivers.values()) {
    cores += driver.desc.cores
    memory += driver.desc.mem
  }
  for (const [fullId, executor] of state.executors) {
    cores += executor.cores
    memory += executor.memory
    if (fullId !== Ids.fullExecutorId(executor.appId, executor.execId)) problems.push(`executor ${fullId} misfiled`)
    if (!state.appsWithData.has(executor.appId)) problems.push(`executor ${fullId} runs, its app's data forgotten`)
  }
  if (state.coresUsed !== cores) problems.push(`${state.coresUsed} cores counted as used, ${cores} held`)
  if (state.memoryUsed !== memory) problems.push(`${state.memoryUsed} MB counted as used, ${memory} held`)
  if (state.registered && state.registrationTimer !== "none") problems.push("registered, yet still retrying")
  if (state.registered && state.master === undefined) problems.push("registered without a master")
  if (state.finishedDrivers.length > Math.max(state.config.retainedDrivers, 0)) {
    problems.push("too many finished drivers")
  }
  if (state.finishedExecutors.length > Math.max(state.config.retainedExecutors, 0)) {
    problems.push("too many finished executors")
  }
  for (const driver of state.finishedDrivers) {
    if (state.drivers.has(driver.id)) problems.push(`driver ${driver.id} is both running and finished`)
  }
  problems.push(...syncProblems(state.syncs, state.config.executorStateSyncMaxAttempts))
  problems.push(...fencingProblems(state))
  problems.push(...supervisionProblems(state))
  return problems
}
