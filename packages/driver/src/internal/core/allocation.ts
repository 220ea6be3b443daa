// Dynamic allocation in the driver's core: what `ExecutorAllocation` decides at each tick, from what the schedulers
// know, carried out — a new total asked of the cluster manager, idle executors taken out of the offers and killed.
import { Core } from "@kindling/kernel"
import type { Ids } from "@kindling/protocol"
import * as DagScheduler from "../../DagScheduler.js"
import * as ExecutorAllocation from "../../ExecutorAllocation.js"
import * as TaskScheduler from "../../TaskScheduler.js"
import type { Step } from "./driverState.js"
import { schedule } from "./driverState.js"

/** Spark's ExecutorAllocationManager looks again every 100 ms. */
export const intervalMillis = 100

// The allocation's records in the driver's state.
export interface Allocation {
  readonly config: ExecutorAllocation.Config
  policy: ExecutorAllocation.State
  /** Since when each executor has run no task. */
  readonly idleSince: Map<string, number>
  /** Executors killed, not yet gone. */
  readonly pendingRemoval: Set<string>
  stageSubmitted: boolean
}

export const make = (config: ExecutorAllocation.Config): Allocation => ({
  config,
  policy: ExecutorAllocation.initial(config),
  idleSince: new Map(),
  pendingRemoval: new Set(),
  stageSubmitted: false
})

export const check = (step: Step) => {
  const { state } = step
  const allocation = state.allocation
  if (allocation === undefined || state.stopping) return
  const backlog = TaskScheduler.backlog(state.scheduler)
  const shuffleHolders = DagScheduler.activeShuffleHolders(state.dag)
  const cached = new Set<string>()
  for (const holders of state.blocks.values()) for (const holder of holders) cached.add(holder)
  const executors: Array<ExecutorAllocation.ExecutorLoad> = []
  for (const executor of state.executors.values()) {
    // A decommissioning executor is going away: it counts for nothing, and is not the policy's to remove.
    if (!executor.launched || state.decommissions.has(executor.id)) continue
    const running = backlog.running.get(executor.id) ?? 0
    if (running > 0) allocation.idleSince.delete(executor.id)
    else if (!allocation.idleSince.has(executor.id)) allocation.idleSince.set(executor.id, step.now)
    executors.push({
      id: executor.id,
      runningTasks: running,
      idleSince: allocation.idleSince.get(executor.id),
      holdsCachedBlocks: cached.has(executor.id),
      // Outputs its worker's shuffle service serves stay when it goes: they hold nothing back.
      holdsShuffleData: shuffleHolders.has(executor.id) && !state.shuffleServices.has(executor.id)
    })
  }
  const [policy, decision] = ExecutorAllocation.tick(allocation.config, allocation.policy, {
    pendingTasks: backlog.pending,
    runningTasks: [...backlog.running.values()].reduce((sum, n) => sum + n, 0),
    executors,
    pendingRemoval: allocation.pendingRemoval,
    stageSubmitted: allocation.stageSubmitted
  }, step.now)
  allocation.policy = policy
  if (decision.requestTotal !== undefined) {
    Core.log(step, "Info", `Requesting a total of ${decision.requestTotal} executors (dynamic allocation)`)
    step.commands.push({ _tag: "RequestExecutors", total: decision.requestTotal })
  }
  if (decision.remove.length === 0) return
  for (const executorId of decision.remove) {
    const idleFor = step.now - (allocation.idleSince.get(executorId) ?? step.now)
    Core.log(step, "Info", `Removing executor ${executorId}: idle for ${Math.round(idleFor / 1000)} s`)
    allocation.pendingRemoval.add(executorId)
    // Offered no task from now on: one launched on it before the kill lands would be lost with it.
    schedule(step, { _tag: "ExecutorLost", executorId, reason: "being removed by dynamic allocation", now: step.now })
  }
  step.commands.push({ _tag: "KillExecutors", executorIds: decision.remove })
}

export const jobSubmitted = (step: Step) => {
  if (step.state.allocation !== undefined) step.state.allocation.stageSubmitted = true
}

/** Whether the executor's going was asked for (it is then no loss), and it is forgotten. */
export const removed = (step: Step, executorId: Ids.ExecutorId): boolean => {
  const allocation = step.state.allocation
  if (allocation === undefined) return false
  allocation.idleSince.delete(executorId)
  return allocation.pendingRemoval.delete(executorId)
}
