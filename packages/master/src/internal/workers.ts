// Workers: registration, heartbeats, removal, decommissioning, and what they report.
import { AppClientMessages as AppClient, Ids, RpcAddress, WorkerMessages } from "@kindling/protocol"
import * as Option from "effect/Option"
import { driverEndedOn, relaunchDriver, removeDriver } from "./drivers.js"
import { persistWorker } from "./snapshots.js"
import type { ExecutorEntry, Step, WorkerEntry } from "./state.js"
import {
  addExecutor,
  answer,
  attachDriver,
  detachDriver,
  log,
  masterUrl,
  newWorker,
  releaseExecutor,
  removeExecutorFromApp,
  toApp,
  toWorker,
  wantRecoveryCheck,
  wantSchedule
} from "./state.js"

export const workerKey = (worker: { readonly endpoint: RpcAddress.RpcEndpointRef }) =>
  RpcAddress.key(worker.endpoint.address)

// A recovered worker whose answer to MasterChanged this recovery still waits for: UNKNOWN, or taken out of service
// (it said it was being decommissioned) before it answered, its record still without the connection that answer
// brings.
export const awaitingAnswer = (worker: WorkerEntry) =>
  worker.state === "UNKNOWN" || (worker.state === "DECOMMISSIONED" && worker.connection === undefined)

export const registerWorkerRequest = (step: Step, message: WorkerMessages.RegisterWorker): undefined => {
  const { state } = step
  if (state.status === "STANDBY") {
    answer(step, message.worker, new WorkerMessages.MasterInStandby())
    return
  }
  const registered = (duplicate: boolean) =>
    new WorkerMessages.RegisteredWorker({
      master: state.config.self,
      masterWebUiUrl: state.config.webUiUrl,
      masterAddress: message.masterAddress,
      duplicate
    })
  // Registered already: the connection it registered on stays the one that counts (another that claims its id
  // must not take its place); if the worker has really moved, that connection's loss brings it back.
  if (state.idToWorker.has(message.id)) {
    log(step, "Warning", `Worker ${message.id} registered again with the same id`)
    answer(step, message.worker, registered(true))
    return
  }
  const worker = newWorker({
    id: message.id,
    host: message.host,
    port: message.port,
    endpoint: message.worker,
    webUiAddress: message.workerWebUiUrl,
    cores: message.cores,
    memory: message.memory,
    resources: message.resources,
    state: "ALIVE",
    lastHeartbeat: step.now,
    driverFenceMillis: message.driverFenceMillis,
    connection: step.connection
  })
  if (!registerWorker(step, worker)) {
    answer(
      step,
      message.worker,
      new WorkerMessages.RegisterWorkerFailed({
        message: `Attempted to re-register worker at same address: ${message.worker.address.hostPort}`
      })
    )
    return
  }
  log(step, "Info", `Registering worker ${worker.host}:${worker.port} with ${worker.cores} cores, ${worker.memory} MB`)
  persistWorker(step, worker)
  answer(step, message.worker, registered(false))
  wantSchedule(step)
}

export const registerWorker = (step: Step, worker: WorkerEntry): boolean => {
  const { state } = step
  // A worker may come back on the address it had before it was marked DEAD; forget the dead entries there.
  for (const old of [...state.workers.values()]) {
    if (old.host === worker.host && old.port === worker.port && old.state === "DEAD") state.workers.delete(old.id)
  }
  const key = workerKey(worker)
  const old = state.addressToWorker.get(key)
  if (old !== undefined) {
    // As Spark: the old entry is from before a restart and never answered, so its process must have restarted
    // meanwhile; the new registration replaces it. That holds too for one taken out of service before its answer
    // came: without the connection its answer brings, nothing else would notice its process stop, and its restart
    // would be refused here until the recovery completes.
    if (!awaitingAnswer(old)) return false
    removeWorker(step, old, "Worker replaced by a new worker with same address")
  }
  state.workers.set(worker.id, worker)
  state.idToWorker.set(worker.id, worker)
  state.addressToWorker.set(key, worker)
  return true
}

export const removeWorker = (step: Step, worker: WorkerEntry, reason: string) => {
  const { state } = step
  log(step, "Info", `Removing worker ${worker.id} on ${worker.host}:${worker.port}: ${reason}`)
  worker.state = "DEAD"
  state.idToWorker.delete(worker.id)
  if (state.addressToWorker.get(workerKey(worker)) === worker) state.addressToWorker.delete(workerKey(worker))
  for (const executor of [...worker.executors.values()]) {
    workerGone(step, executor, "LOST", "worker lost")
    removeExecutorFromApp(executor)
    releaseExecutor(executor)
  }
  const fenced = worker.driverFenceMillis !== undefined && [...worker.drivers.values()].some((d) => d.desc.supervise)
  if (fenced) step.commands.push({ _tag: "ProbeWorker", workerId: worker.id, address: worker.endpoint.address })
  for (const driver of [...worker.drivers.values()]) {
    if (driver.desc.supervise) {
      log(step, "Info", `Re-launching ${driver.id}`)
      const millis = worker.driverFenceMillis
      relaunchDriver(step, driver, millis === undefined ? undefined : { from: worker.lastHeartbeat, millis })
    } else {
      log(step, "Info", `Not re-launching ${driver.id} because it was not supervised`)
      removeDriver(step, driver.id, "ERROR", undefined)
    }
  }
  for (const app of state.apps.values()) {
    toApp(step, app, new AppClient.WorkerRemoved({ id: worker.id, host: worker.host, message: reason }))
  }
  step.commands.push({ _tag: "Unpersist", kind: "worker", id: worker.id })
  wantSchedule(step)
}

// Tells an executor's app that its worker is lost or decommissioned (with the host, so the driver can drop the
// host's shuffle outputs), and marks the executor so.
export const workerGone = (step: Step, executor: ExecutorEntry, state: "LOST" | "DECOMMISSIONED", message: string) => {
  toApp(
    step,
    executor.app,
    new AppClient.ExecutorUpdated({
      id: executor.id,
      state,
      message: Option.some(message),
      exitStatus: Option.none(),
      workerHost: Option.some(executor.worker.host)
    })
  )
  executor.state = state
}

export const decommissionWorker = (step: Step, worker: WorkerEntry) => {
  if (worker.state === "DECOMMISSIONED") return
  log(step, "Info", `Decommissioning worker ${worker.id} on ${worker.host}:${worker.port}`)
  worker.state = "DECOMMISSIONED"
  // As Spark, the apps stop counting these executors at once, so they can be replaced elsewhere; the worker's
  // accounting lets go of them too, since it takes no new work.
  for (const executor of [...worker.executors.values()]) {
    workerGone(step, executor, "DECOMMISSIONED", "worker decommissioned")
    executor.app.decommissionedExecutors.add(executor.id)
    removeExecutorFromApp(executor)
    releaseExecutor(executor)
  }
  toWorker(step, worker, new WorkerMessages.DecommissionWorker())
  step.commands.push({ _tag: "Unpersist", kind: "worker", id: worker.id })
}

// The shell reads whatever input is waiting before it delivers a timer tick, so a master that was paused hears the
// heartbeats of that time before it judges anyone silent.
export const timeOutDeadWorkers = (step: Step) => {
  const { state } = step
  const timeout = state.config.workerTimeoutMillis
  for (const worker of [...state.workers.values()]) {
    if (worker.lastHeartbeat >= step.now - timeout) continue
    if (worker.state !== "DEAD") {
      removeWorker(step, worker, `Not receiving heartbeat for ${Math.floor(timeout / 1000)} seconds`)
    } else if (worker.lastHeartbeat < step.now - (state.config.deadWorkerPersistence + 1) * timeout) {
      state.workers.delete(worker.id)
    }
  }
}

export const workerSchedulerStateResponse = (step: Step, message: WorkerMessages.WorkerSchedulerStateResponse) => {
  const { state } = step
  const worker = state.idToWorker.get(message.id)
  if (worker === undefined) {
    log(step, "Warning", `Scheduler state from unknown worker: ${message.id}`)
    return
  }
  // Only a worker this recovery is waiting for answers MasterChanged: one still UNKNOWN, or one that said it was
  // being decommissioned before its answer came (its recovered record has no connection yet). Any other answer is
  // stale: sent before the worker was removed for not answering in time (a long pause, say) and registered afresh,
  // it would charge the fresh record with what the worker ran back then. The fresh registration's
  // WorkerLatestState covers that.
  const decommissioned = worker.state === "DECOMMISSIONED"
  if (!awaitingAnswer(worker)) {
    log(step, "Warning", `Ignoring a late answer to MasterChanged from worker ${message.id} (${worker.state})`)
    return
  }
  // The answer counts only from the worker itself: another process claiming its id (one the worker replaced at
  // another address, say) would charge this worker with what that one runs.
  if (step.sender !== undefined && RpcAddress.key(step.sender) !== RpcAddress.key(worker.endpoint.address)) {
    log(
      step,
      "Warning",
      `Ignoring an answer to MasterChanged for worker ${message.id} from ${step.sender.hostPort}, ` +
        `which is not its address ${worker.endpoint.address.hostPort}`
    )
    return
  }
  log(step, "Info", `Worker has been re-registered: ${message.id}`)
  // Its connection is the one whose loss says it has gone: without it, a decommissioned worker that was then
  // stopped would hold its address until its heartbeats were missed, refusing its own restart meanwhile.
  worker.state = "ALIVE"
  worker.connection = step.connection
  // Drivers that ended here while no master heard of it are settled as they ended, before anything else: not
  // found at the end of recovery, they would be relaunched or failed.
  for (const ended of message.endedDrivers) {
    driverEndedOn(step, ended.driverId, ended.state, Option.getOrUndefined(ended.exception))
  }
  for (const { desc } of message.execResponses) {
    const app = state.apps.get(desc.appId)
    // Every app the master accepted is in its store until it ends, so an executor of an app it does not know
    // belongs to one that ended while this worker was out of reach: nobody else will stop it.
    if (app === undefined) {
      toWorker(
        step,
        worker,
        new WorkerMessages.KillExecutor({ masterUrl: masterUrl(state), appId: desc.appId, execId: desc.execId })
      )
      continue
    }
    // An executor already known (listed twice, or by another worker) is not charged again.
    if (app.executors.has(desc.execId)) continue
    // Nor one that cannot fit in what the worker has left: a worker never runs more than it has, so the claim is
    // not its own (a confused or stale report). Told to stop it, the worker ignores the kill if it runs no such
    // executor; the worker that does run it claims it in its own answer.
    if (
      worker.coresUsed + desc.cores > worker.cores ||
      worker.memoryUsed + app.desc.memoryPerExecutorMB > worker.memory
    ) {
      log(
        step,
        "Warning",
        `Worker ${worker.id} claims executor ${desc.appId}/${desc.execId}, which does not fit in what it has left`
      )
      toWorker(
        step,
        worker,
        new WorkerMessages.KillExecutor({ masterUrl: masterUrl(state), appId: desc.appId, execId: desc.execId })
      )
      continue
    }
    const executor = addExecutor(app, worker, desc.cores, desc.execId)
    executor.state = desc.state
  }
  for (const { driverId } of message.driverResponses) {
    const driver = state.drivers.get(driverId)
    // Likewise a driver the master no longer knows was killed or ended while this worker was out of reach.
    if (driver === undefined) {
      toWorker(step, worker, new WorkerMessages.KillDriver({ driverId }))
      continue
    }
    if (driver.worker === worker) continue
    // As for executors: a driver that cannot fit in what the worker has left is not its own to claim.
    if (worker.coresUsed + driver.desc.cores > worker.cores || worker.memoryUsed + driver.desc.mem > worker.memory) {
      log(step, "Warning", `Worker ${worker.id} claims driver ${driverId}, which does not fit in what it has left`)
      toWorker(step, worker, new WorkerMessages.KillDriver({ driverId }))
      continue
    }
    // A claimed driver runs: it leaves the queue (a record persisted before its launch put it there) and any
    // worker it was thought to be on.
    const waiting = state.waitingDrivers.indexOf(driver)
    if (waiting >= 0) state.waitingDrivers.splice(waiting, 1)
    detachDriver(driver)
    driver.state = "RUNNING"
    attachDriver(driver, worker)
  }
  // What it runs is known now; taken out of service again, its executors are let go as on any decommission.
  if (decommissioned) decommissionWorker(step, worker)
  wantRecoveryCheck(step)
}

export const workerLatestState = (step: Step, message: WorkerMessages.WorkerLatestState) => {
  const { state } = step
  const worker = state.idToWorker.get(message.id)
  if (worker === undefined) {
    log(step, "Warning", `Worker state from unknown worker: ${message.id}`)
    return
  }
  // A worker that has not answered MasterChanged yet re-registered before the answer arrived; until it does
  // answer, the master does not know what it runs, and must not kill it.
  if (worker.state === "UNKNOWN") return
  for (const executor of message.executors) {
    if (!worker.executors.has(Ids.fullExecutorId(executor.appId, executor.execId))) {
      toWorker(
        step,
        worker,
        new WorkerMessages.KillExecutor({ masterUrl: masterUrl(state), appId: executor.appId, execId: executor.execId })
      )
    }
  }
  for (const driverId of message.driverIds) {
    if (!worker.drivers.has(driverId)) toWorker(step, worker, new WorkerMessages.KillDriver({ driverId }))
  }
  // A worker that was away when an app finished never heard of it, and keeps what its shuffle service served for
  // the app, and the app's scratch dirs, for ever: it hears now. Every live app is in `apps` (one recovered from
  // the store too, and one is stored before any executor of it is launched), so one the worker holds that is not
  // there has ended, even if it ended under a master before a failover, which remembers no completed app.
  for (const appId of message.appIds) {
    if (!state.apps.has(appId)) toWorker(step, worker, new WorkerMessages.ApplicationFinished({ id: appId }))
  }
}
