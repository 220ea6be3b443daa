// The app's executors: registration, launch, heartbeats and timeouts, and their loss with what ran on them.
import { Core } from "@kindling/kernel"
import { ClusterMessages, Errors, type Ids, RpcAddress } from "@kindling/protocol"
import * as Exit from "effect/Exit"
import type { Local } from "../../DriverCore.js"
import * as TaskScheduler from "../../TaskScheduler.js"
import * as Allocation from "./allocation.js"
import * as Decommissions from "./decommissions.js"
import type { Step } from "./driverState.js"
import { dag, event, schedule } from "./driverState.js"
import { taskEnded } from "./statusUpdates.js"

export const registerExecutor = (
  step: Step,
  message: ClusterMessages.RegisterExecutor,
  ask: Core.Ask<ClusterMessages.RegisterExecutor>
) => {
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
  if (message.shuffleService !== undefined) state.shuffleServices.set(message.executorId, message.shuffleService)
  Core.log(
    step,
    "Info",
    `Registered executor ${message.executorId} on ${message.hostname} with ${message.cores} cores` +
      (message.shuffleService === undefined ? "" : `, its map outputs served by ${message.shuffleService.hostPort}`)
  )
  Core.reply(step, ask, Exit.succeed(true))
  // Too late for this app: it is told to stop at once, as the others were.
  if (state.stopping) Core.send(step, message.executorRef, new ClusterMessages.StopExecutor())
}

export const launchedExecutor = (step: Step, message: ClusterMessages.LaunchedExecutor) => {
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
}

export const executorHeartbeat = (
  step: Step,
  message: ClusterMessages.ExecutorHeartbeat,
  ask: Core.Ask<ClusterMessages.ExecutorHeartbeat>
) => {
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

export const disconnected = (step: Step, input: Core.ConnectionInput) => {
  const { state } = step
  // An executor's connection is its life: when it closes, the executor is gone (Spark's onDisconnected).
  for (const executor of [...state.executors.values()]) {
    if (executor.connection === input.connection && input.connection !== 0) {
      executorLost(step, executor.id, `its connection from ${input.peer.hostPort} closed`)
    }
  }
}

export const executorRemoved = (step: Step, input: Extract<Local, { readonly _tag: "ExecutorRemoved" }>) => {
  // Its worker is gone, and the map outputs its shuffle service served with it, whoever wrote them.
  if (input.workerLost === true) serviceLost(step, input.executorId)
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
}

export const timeOutExecutors = (step: Step) => {
  const { state } = step
  for (const executor of [...state.executors.values()]) {
    if (step.now - executor.lastHeard > state.config.executorTimeoutMillis) {
      executorLost(step, executor.id, `no heartbeat for ${step.now - executor.lastHeard} ms`)
    }
  }
}

// The outputs a worker's shuffle service served are lost with the worker: every executor's of that worker.
const serviceLost = (step: Step, executorId: Ids.ExecutorId) => {
  const { state } = step
  const service = state.shuffleServices.get(executorId)
  if (service === undefined) return
  for (const [other, address] of [...state.shuffleServices]) {
    if (RpcAddress.key(address) !== RpcAddress.key(service)) continue
    state.shuffleServices.delete(other)
    if (!state.executors.has(other) && !state.stopping) {
      dag(step, { _tag: "ExecutorLost", executorId: other, outputsLost: true, now: step.now })
    }
  }
}

export const executorLost = (step: Step, executorId: Ids.ExecutorId, reason: string) => {
  const { state } = step
  const executor = state.executors.get(executorId)
  if (executor === undefined) return
  state.executors.delete(executorId)
  const decommissioned = Decommissions.isDecommissioning(step, executorId)
  Decommissions.executorGone(step, executorId)
  if (state.stopping) Core.log(step, "Info", `Executor ${executorId} on ${executor.host} stopped`)
  else {
    if (Allocation.removed(step, executorId)) {
      Core.log(step, "Info", `Executor ${executorId} on ${executor.host} removed by dynamic allocation`)
    } else if (decommissioned) {
      Core.log(step, "Info", `Executor ${executorId} on ${executor.host} decommissioned: ${reason}`)
    } else Core.log(step, "Warning", `Lost executor ${executorId} on ${executor.host}: ${reason}`)
    // The others stop fetching from it now: a fetch on a connection into a partition would hang until the
    // network timeout, while its outputs are being computed again.
    const lost = new ClusterMessages.PeerLost({ executorId, address: executor.ref.address })
    for (const other of state.executors.values()) Core.send(step, other.ref, lost)
  }
  for (const taskId of TaskScheduler.runningOn(state.scheduler, executorId)) {
    taskEnded(step, taskId, false, {}, `ExecutorLostFailure (executor ${executorId} exited: ${reason})`)
  }
  schedule(step, { _tag: "ExecutorLost", executorId, reason, now: step.now })
  // A stopping app runs no more stages: the map outputs of executors told to stop need not be forgotten.
  // Its map outputs go with it, unless its worker's shuffle service serves them.
  if (!state.stopping) {
    dag(step, { _tag: "ExecutorLost", executorId, outputsLost: !state.shuffleServices.has(executorId), now: step.now })
  }
  // Its persisted partitions went with it: later tasks compute them again, from their lineage.
  for (const [blockId, holders] of state.blocks) {
    if (holders.delete(executorId) && holders.size === 0) state.blocks.delete(blockId)
  }
  event(step, { _tag: "ExecutorRemoved", executorId, reason, time: step.now })
}
