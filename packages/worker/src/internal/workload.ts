// What the worker runs: launching and killing drivers and executors, their reports, and the cleanup of the
// directories of finished apps.
import { Core, Retention } from "@kindling/kernel"
import type { Ids } from "@kindling/protocol"
import { Descriptions, Errors, Ids as IdsOf, States, WorkerMessages } from "@kindling/protocol"
import * as Option from "effect/Option"
import type { Local } from "../WorkerCore.js"
import * as fencing from "./fencing.js"
import type { DriverEntry, ExecutorEntry, Step } from "./state.js"
import { exitIfDrained, log, masterUrl, takenForDead } from "./state.js"
import { tell } from "./stateSync.js"
import { reportDriver } from "./supervision.js"

export const launchExecutor = (step: Step, message: WorkerMessages.LaunchExecutor) => {
  const { state } = step
  if (message.masterUrl !== masterUrl(state)) {
    log(step, "Warning", `Invalid master (${message.masterUrl}) attempted to launch executor.`)
    return
  }
  const fullId = IdsOf.fullExecutorId(message.appId, message.execId)
  if (takenForDead(step)) {
    return refuseExecutor(step, message, "the worker was unresponsive past the worker timeout when the launch arrived")
  }
  // A launch delivered twice (a resent or duplicated message) must not start or charge the executor twice, nor
  // start again one that already ended here. The end of one that ended is told again: a master that recovered
  // its app from its store numbers executors from 0 again (as Spark's does), and would otherwise wait for ever on
  // an executor it takes for launching.
  if (state.executors.has(fullId)) {
    log(step, "Warning", `Asked to launch executor ${fullId} again; it is already running here`)
    return
  }
  const ended = state.finishedExecutors.find((e) => e.appId === message.appId && e.execId === message.execId)
  if (ended !== undefined) {
    log(step, "Warning", `Asked to launch executor ${fullId} again; it already ended here ${ended.state}`)
    return tellExecutorEnd(step, message, ended.state, "it already ended on this worker")
  }
  // Sent before the master decided, or by a master that never heard of the decommission: refused, and the master
  // hears so, so that it frees what it allotted.
  if (state.decommissioned) return refuseExecutor(step, message, "the worker is being decommissioned")
  const refused = Descriptions.refusedModule("executor", message.appDesc.command)
  if (refused !== undefined) {
    const failure = new Errors.ExecutorLaunchFailed({ appId: message.appId, execId: message.execId, reason: refused })
    return refuseExecutor(step, message, failure.message)
  }
  log(step, "Info", `Asked to launch executor ${fullId} for ${message.appDesc.name}`)
  const executor: ExecutorEntry = {
    appId: message.appId,
    execId: message.execId,
    appDesc: message.appDesc,
    cores: message.cores,
    memory: message.memory,
    state: "LAUNCHING"
  }
  state.executors.set(fullId, executor)
  state.appsWithData.add(message.appId)
  state.coresUsed += message.cores
  state.memoryUsed += message.memory
  step.commands.push({
    _tag: "LaunchExecutor",
    appId: message.appId,
    execId: message.execId,
    appDesc: message.appDesc,
    cores: message.cores,
    memory: message.memory
  })
}

// An executor this worker will not start ends FAILED at once; the master frees what it allotted to it.
const refuseExecutor = (step: Step, message: WorkerMessages.LaunchExecutor, reason: string) => {
  log(step, "Warning", `Not launching executor ${IdsOf.fullExecutorId(message.appId, message.execId)}: ${reason}`)
  tellExecutorEnd(step, message, "FAILED", reason)
}

// The launching master hears that the executor it asked for has ended, and frees what it allotted to it.
const tellExecutorEnd = (
  step: Step,
  message: WorkerMessages.LaunchExecutor,
  state: States.ExecutorState,
  reason: string
) =>
  tell(
    step,
    step.state.master!,
    new WorkerMessages.ExecutorStateChanged({
      appId: message.appId,
      execId: message.execId,
      state,
      message: Option.some(reason),
      exitStatus: Option.none()
    })
  )

export const killExecutor = (step: Step, message: WorkerMessages.KillExecutor) => {
  const { state } = step
  if (message.masterUrl !== masterUrl(state)) {
    log(step, "Warning", `Invalid master (${message.masterUrl}) attempted to kill executor ${message.execId}`)
    return
  }
  const fullId = IdsOf.fullExecutorId(message.appId, message.execId)
  if (!state.executors.has(fullId)) {
    log(step, "Info", `Asked to kill unknown executor ${fullId}`)
    return
  }
  log(step, "Info", `Asked to kill executor ${fullId}`)
  step.commands.push({ _tag: "KillExecutor", appId: message.appId, execId: message.execId })
}

export const launchDriver = (step: Step, message: WorkerMessages.LaunchDriver) => {
  const { state } = step
  if (state.drivers.has(message.driverId)) {
    log(step, "Warning", `Asked to launch driver ${message.driverId} again; it is already running here`)
    return
  }
  // A driver that already ended here is not run a second time: its end is told again instead.
  const ended = state.finishedDrivers.find((d) => d.id === message.driverId)
  if (ended !== undefined) {
    log(step, "Warning", `Asked to launch driver ${message.driverId} again; it already ended ${ended.state}`)
    reportDriver(step, ended)
    return
  }
  const desc = message.driverDesc
  // The master has given this driver up (relaunched it elsewhere, if supervised, where it may even have ended):
  // running it now could run it twice. It ends here, and the master ignores the end of a driver it removed.
  if (takenForDead(step)) {
    return refuseDriver(step, message, "the worker was unresponsive past the worker timeout when the launch arrived")
  }
  // A master checks this at submission; a worker does not take another node's word for what it runs.
  const refused = Descriptions.refusedModule("driver", desc.command)
  if (refused !== undefined) {
    return refuseDriver(
      step,
      message,
      new Errors.DriverLaunchFailed({ driverId: message.driverId, reason: refused }).message
    )
  }
  log(step, "Info", `Asked to launch driver ${message.driverId}`)
  state.drivers.set(message.driverId, {
    id: message.driverId,
    desc,
    state: "RUNNING",
    exception: undefined,
    startedAt: step.now
  })
  state.coresUsed += desc.cores
  state.memoryUsed += desc.mem
  step.commands.push({ _tag: "LaunchDriver", driverId: message.driverId, desc, master: state.master?.address })
  if (desc.supervise) fencing.launchedSupervised(step)
}

// A driver this worker will not run ends ERROR at once, with the reason as its exception.
const refuseDriver = (step: Step, message: WorkerMessages.LaunchDriver, reason: string) => {
  log(step, "Warning", `Not launching driver ${message.driverId}: ${reason}`)
  const driver: DriverEntry = {
    id: message.driverId,
    desc: message.driverDesc,
    state: "ERROR",
    exception: new Descriptions.RemoteException({ name: "DriverLaunchFailed", message: reason }),
    startedAt: step.now
  }
  reportDriver(step, driver)
  Retention.append(step.state.finishedDrivers, driver, step.state.config.retainedDrivers)
}

export const applicationFinished = (step: Step, message: WorkerMessages.ApplicationFinished) => {
  const { state } = step
  state.finishedApps.add(message.id)
  // An executor of a finished app left here is one the master no longer counted (its worker decommissioned, say) and
  // so never asked to kill: it has nothing left to do.
  for (const executor of state.executors.values()) {
    if (executor.appId !== message.id) continue
    log(step, "Info", `Killing executor ${IdsOf.fullExecutorId(executor.appId, executor.execId)}: its app finished`)
    step.commands.push({ _tag: "KillExecutor", appId: executor.appId, execId: executor.execId })
  }
  maybeCleanupApplication(step, message.id)
}

// Asked by the master or signalled: the worker takes no new work, its executors' apps move their data off it (the
// master tells them), and it exits once nothing of theirs runs here. Signalled, it tells the master first.
export const decommission = (step: Step, how: "the master asked" | "signalled") => {
  const { state } = step
  if (state.config.decommissionEnabled === false) {
    log(step, "Warning", `Decommissioning (${how}) is off on this worker: kindling.decommission.enabled is false`)
    return
  }
  if (state.decommissioned) return
  log(step, "Info", `Decommissioning this worker (${how}): it accepts no new executors`)
  state.decommissioned = true
  if (how === "signalled" && state.master !== undefined) {
    Core.send(
      step,
      state.master,
      new WorkerMessages.WorkerDecommissioning({ id: state.config.workerId, workerRef: state.config.self })
    )
  }
  exitIfDrained(step)
}

export const executorChanged = (step: Step, input: Extract<Local, { _tag: "ExecutorChanged" }>) => {
  const { state } = step
  const fullId = IdsOf.fullExecutorId(input.appId, input.execId)
  const executor = state.executors.get(fullId)
  if (executor !== undefined) executor.state = input.state
  if (States.isExecutorFinished(input.state)) {
    if (executor !== undefined) {
      const detail = input.message === undefined ? "" : ` message ${input.message}`
      log(step, "Info", `Executor ${fullId} finished with state ${input.state}${detail}`)
      state.executors.delete(fullId)
      Retention.append(state.finishedExecutors, executor, state.config.retainedExecutors)
      state.coresUsed -= executor.cores
      state.memoryUsed -= executor.memory
    } else {
      log(step, "Info", `Unknown executor ${fullId} finished with state ${input.state}`)
    }
    maybeCleanupApplication(step, input.appId)
  }
  if (state.master === undefined) {
    log(
      step,
      "Warning",
      "Dropping an executor state change because the connection to master has not yet been established"
    )
    return exitIfDrained(step)
  }
  tell(
    step,
    state.master,
    new WorkerMessages.ExecutorStateChanged({
      appId: input.appId,
      execId: input.execId,
      state: input.state,
      message: Option.fromNullable(input.message),
      exitStatus: Option.fromNullable(input.exitStatus)
    })
  )
  exitIfDrained(step)
}

export const workDirCleanup = (step: Step) => {
  const { state } = step
  step.commands.push({
    _tag: "CleanupWorkDir",
    keep: [...new Set([...[...state.executors.values()].map((e) => e.appId), ...state.drivers.keys()])],
    ttlMillis: state.config.cleanup.appDataTtlMillis
  })
}

const maybeCleanupApplication = (step: Step, appId: Ids.AppId) => {
  const { state } = step
  if (!state.finishedApps.has(appId)) return
  if ([...state.executors.values()].some((e) => e.appId === appId)) return
  state.finishedApps.delete(appId)
  state.appsWithData.delete(appId)
  log(step, "Info", `Cleaning up local directories for application ${appId}`)
  step.commands.push({ _tag: "CleanupApplication", appId })
}
