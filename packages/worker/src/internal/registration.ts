// Registration with the masters (Spark's schedule of retries), master changes, heartbeats and lost connections.
import { Core } from "@kindling/kernel"
import { RpcAddress, WorkerMessages } from "@kindling/protocol"
import * as Option from "effect/Option"
import * as fencing from "./fencing.js"
import { describeExecutor } from "./snapshots.js"
import type { State, Step } from "./state.js"
import { log } from "./state.js"
import { tellDriverEnd } from "./supervision.js"

const registerMessage = (state: State, master: RpcAddress.RefOf<"Master">) =>
  new WorkerMessages.RegisterWorker({
    id: state.config.workerId,
    host: state.config.self.address.host,
    port: state.config.self.address.port,
    worker: state.config.self,
    cores: state.config.cores,
    memory: state.config.memory,
    workerWebUiUrl: state.config.webUiUrl,
    masterAddress: master.address,
    resources: {},
    driverFenceMillis: state.config.driverFencing &&
      state.config.driverFencing.leaseMillis + state.config.driverFencing.terminateMillis
  })

const registerWithAll = (step: Step) => {
  for (const master of step.state.config.masters) Core.send(step, master, registerMessage(step.state, master))
}

// Spark rounds the fuzzed intervals to whole seconds (5–15 s, 30–90 s); sub-second intervals (tests) to ms.
const interval = (state: State, millis: number) => {
  const fuzzed = millis * state.config.registration.fuzz
  return millis >= 1000 ? Math.round(fuzzed / 1000) * 1000 : Math.round(fuzzed)
}

const startRegistrationTimer = (step: Step, every: number) =>
  Core.startTimer(step, "registration", { _tag: "ReregisterWithMaster" }, every, every)

export const registerWithMaster = (step: Step) => {
  const { state } = step
  if (state.registrationTimer !== "none") {
    log(step, "Info", "Not spawning another attempt to register with the master: one is scheduled already")
    return
  }
  state.registered = false
  state.registrationAttempts = 0
  registerWithAll(step)
  state.registrationTimer = "initial"
  startRegistrationTimer(step, interval(state, state.config.registration.initialIntervalMillis))
}

const cancelRegistrationTimer = (step: Step) => {
  if (step.state.registrationTimer === "none") return
  step.state.registrationTimer = "none"
  Core.cancelTimer(step, "registration")
}

export const reregisterWithMaster = (step: Step) => {
  const { state } = step
  state.registrationAttempts += 1
  if (state.registered) return cancelRegistrationTimer(step)
  const schedule = state.config.registration
  if (state.registrationAttempts > schedule.maxAttempts) {
    log(step, "Error", "All masters are unresponsive! Giving up.")
    Core.exit(step, 1, "All masters are unresponsive")
    return
  }
  log(step, "Info", `Retrying connection to master (attempt # ${state.registrationAttempts})`)
  // Every configured master, every time. Spark asks only the master it knew, if any: after a partition that master
  // may be a standby that drops the registration, and the worker would never find the one that leads now.
  registerWithAll(step)
  if (state.registrationAttempts === schedule.initialAttempts) {
    state.registrationTimer = "prolonged"
    startRegistrationTimer(step, interval(state, schedule.prolongedIntervalMillis))
  }
}

const changeMaster = (step: Step, master: RpcAddress.RefOf<"Master">, webUiUrl: string) => {
  const { state } = step
  state.master = master
  state.masterWebUiUrl = webUiUrl
  state.connected = true
  // The new master has just heard from this worker (its registration, or its answer to MasterChanged).
  state.lastHeardAt = step.now
  cancelRegistrationTimer(step)
}

export const registered = (step: Step, message: WorkerMessages.RegisteredWorker) => {
  const { state } = step
  if (message.duplicate) log(step, "Warning", `Duplicate registration at master ${message.master.address.url}`)
  log(step, "Info", `Successfully registered with master ${message.master.address.url}`)
  state.registered = true
  changeMaster(step, message.master, message.masterWebUiUrl)
  const heartbeat = Math.floor(state.config.workerTimeoutMillis / 4)
  Core.startTimer(step, "heartbeat", { _tag: "SendHeartbeat" }, 0, heartbeat)
  if (state.config.cleanup.enabled) {
    const every = state.config.cleanup.intervalMillis
    Core.startTimer(step, "cleanup", { _tag: "WorkDirCleanup" }, every, every)
  }
  Core.send(
    step,
    message.master,
    new WorkerMessages.WorkerLatestState({
      id: state.config.workerId,
      executors: [...state.executors.values()].map((e) => describeExecutor(e).desc),
      driverIds: [...state.drivers.keys()],
      appIds: [...state.appsWithData]
    })
  )
  for (const driver of state.unheard.values()) tellDriverEnd(step, message.master, driver)
  tellDecommissioned(step, message.master)
}

// A decommissioned worker says so to every master it comes to know, after what it runs: one that never heard (it
// was away when the worker was signalled, or has restarted since) would offer it work.
const tellDecommissioned = (step: Step, master: RpcAddress.RefOf<"Master">) => {
  const { state } = step
  if (!state.decommissioned) return
  Core.send(
    step,
    master,
    new WorkerMessages.WorkerDecommissioning({ id: state.config.workerId, workerRef: state.config.self })
  )
}

export const registrationFailed = (step: Step, message: WorkerMessages.RegisterWorkerFailed) => {
  if (step.state.registered) return
  log(step, "Error", `Worker registration failed: ${message.message}`)
  Core.exit(step, 1, `Worker registration failed: ${message.message}`)
}

// A standby answers a registration this way (ignored: another master will take it), and a heartbeat: then the
// master this worker registered with has lost its leadership, and whoever leads now may have dropped this worker
// while it could not be heard (a partition, say) and would never send it MasterChanged. It registers again.
export const masterInStandby = (step: Step) => {
  const { state } = step
  const master = state.master
  if (!state.registered || master === undefined || step.sender === undefined) return
  if (RpcAddress.key(step.sender) !== RpcAddress.key(master.address)) return
  log(step, "Warning", `Master ${master.address.url} is a standby now; registering with the masters again`)
  state.connected = false
  registerWithMaster(step)
}

export const reconnect = (step: Step, message: WorkerMessages.ReconnectWorker) => {
  log(step, "Info", `Master with url ${message.masterUrl} requested this worker to reconnect.`)
  registerWithMaster(step)
}

export const masterChanged = (step: Step, message: WorkerMessages.MasterChanged) => {
  const { state } = step
  log(step, "Info", `Master has changed, new master is at ${message.master.address.url}`)
  changeMaster(step, message.master, message.masterWebUiUrl)
  Core.send(
    step,
    message.master,
    new WorkerMessages.WorkerSchedulerStateResponse({
      id: state.config.workerId,
      execResponses: [...state.executors.values()].map(describeExecutor),
      driverResponses: [...state.drivers.keys()].map((driverId) =>
        new WorkerMessages.WorkerDriverStateResponse({ driverId, resources: {} })
      ),
      endedDrivers: [...state.unheard.values()].map((driver) =>
        new WorkerMessages.EndedDriver({
          driverId: driver.id,
          state: driver.state,
          exception: Option.fromNullable(driver.exception)
        })
      )
    })
  )
  for (const driver of state.unheard.values()) tellDriverEnd(step, message.master, driver)
  tellDecommissioned(step, message.master)
  // At once rather than at the next tick: the new master's acknowledgement renews the lease, which may be running
  // out after the failover or restart that brought it.
  sendHeartbeat(step)
}

export const sendHeartbeat = (step: Step) => {
  const { state } = step
  if (!state.connected || state.master === undefined) return
  state.lastHeardAt = step.now
  Core.send(
    step,
    state.master,
    new WorkerMessages.Heartbeat({
      workerId: state.config.workerId,
      worker: state.config.self,
      seq: fencing.numberHeartbeat(step)
    })
  )
}

export const disconnected = (step: Step, peer: RpcAddress.RpcAddress) => {
  const { state } = step
  if (state.master === undefined || state.master.address.hostPort !== peer.hostPort) return
  log(step, "Error", `Connection to master ${peer.hostPort} lost; waiting for a master to reconnect...`)
  state.connected = false
  registerWithMaster(step)
}
