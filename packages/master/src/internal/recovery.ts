// Leadership, recovery from persisted state, and lost connections.
import { Core } from "@kindling/kernel"
import { Endpoints, RpcAddress, WorkerMessages } from "@kindling/protocol"
import type { RpcEnv } from "@kindling/rpc"
import * as Option from "effect/Option"
import type { Stored } from "../MasterCore.js"
import { registerApplication, removeApplication } from "./apps.js"
import { fenceEnd, relaunchDriver, removeDriver } from "./drivers.js"
import type { DriverEntry, State, Step } from "./state.js"
import { log, newApp, newWorker, wantRecoveryCheck, wantSchedule } from "./state.js"
import { awaitingAnswer, registerWorker, removeWorker } from "./workers.js"

export const electedLeader = (step: Step, stored: Stored) => {
  const { state } = step
  if (state.status !== "STANDBY") return
  const empty = stored.apps.length === 0 && stored.drivers.length === 0 && stored.workers.length === 0
  state.status = empty ? "ALIVE" : "RECOVERING"
  log(
    step,
    "Info",
    empty ? "I have been elected leader! New state: ALIVE" : "I have been elected leader! New state: RECOVERING"
  )
  state.leadingSince = step.now
  if (empty) return
  beginRecovery(step, stored)
  Core.startTimer(step, "completeRecovery", { _tag: "CompleteRecovery" }, state.config.recoveryTimeoutMillis)
}

// Spark's master exits when it loses leadership; a Kindling master steps down to STANDBY and stays in the election,
// so a leader cut off from the coordination service for a while comes back as a standby by itself. It forgets
// everything it led: what it knew may be stale by now, and the leader reads what is stored when it is elected.
// Nothing it runs is stopped: drivers and executors keep running, and the next leader adopts them.
export const revokedLeadership = (step: Step) => {
  const { state } = step
  if (state.status === "STANDBY") return
  log(step, "Warning", `Leadership has been revoked (was ${state.status}); the master is STANDBY`)
  Core.cancelTimer(step, "completeRecovery")
  state.status = "STANDBY"
  for (const records of [state.workers, state.idToWorker, state.addressToWorker, state.apps, state.addressToApp]) {
    records.clear()
  }
  state.drivers.clear()
  state.waitingApps.length = 0
  state.waitingDrivers.length = 0
  state.completedApps = []
  state.completedDrivers = []
}

export const beginRecovery = (step: Step, stored: Stored) => {
  const { state } = step
  const changed = new WorkerMessages.MasterChanged({ master: state.config.self, masterWebUiUrl: state.config.webUiUrl })
  for (const info of stored.apps) {
    const app = newApp({
      id: info.id,
      desc: info.desc,
      driver: info.driver,
      startTime: info.startTime,
      submitDate: info.submitDate,
      state: "UNKNOWN",
      executorLimit: Option.getOrElse(info.executorLimit, () => Infinity),
      connection: undefined
    })
    if (registerApplication(step, app)) Core.send(step, app.driver, changed)
    state.nextAppNumber = Math.max(state.nextAppNumber, counterOf(info.id) + 1)
  }
  for (const info of stored.workers) {
    const worker = newWorker({
      id: info.id,
      host: info.host,
      port: info.port,
      endpoint: Endpoints.ref(RpcAddress.make(info.host, info.port), Endpoints.worker),
      webUiAddress: info.webUiAddress,
      cores: info.cores,
      memory: info.memory,
      resources: info.resources,
      state: "UNKNOWN",
      // Its lease, if an earlier leader granted one, runs out by its fence from now (see `leadingSince`).
      lastHeartbeat: step.now,
      driverFenceMillis: info.driverFenceMillis,
      connection: undefined
    })
    if (registerWorker(step, worker)) Core.send(step, worker.endpoint, changed)
  }
  for (const info of stored.drivers) {
    const driver: DriverEntry = {
      id: info.id,
      desc: info.desc,
      startTime: info.startTime,
      submitDate: info.submitDate,
      state: "SUBMITTED",
      worker: undefined,
      exception: undefined,
      fenceMillis: info.fenceMillis,
      // A relaunch still waiting for its predecessor's fence waits it out from now: that was measured by another
      // master's clock, from a heartbeat no later than this leadership's start.
      notBefore: info.fenceMillis === undefined || Option.isSome(info.workerId)
        ? undefined
        : fenceEnd(step.now, info.fenceMillis),
      fencedOn: undefined
    }
    state.drivers.set(driver.id, driver)
    // A driver that was never launched goes back in the queue; a launched one waits for its worker to claim it.
    if (Option.isNone(info.workerId)) state.waitingDrivers.push(driver)
    state.nextDriverNumber = Math.max(state.nextDriverNumber, counterOf(info.id) + 1)
  }
}

// The counter part of a stored app or driver id, so a recovered master does not hand out an id again.
export const counterOf = (id: string): number => {
  const counter = Number(id.slice(id.lastIndexOf("-") + 1))
  return Number.isSafeInteger(counter) ? counter : -1
}

// A driver no worker claimed during recovery may still run on one that is cut off, whose lease an earlier leader
// granted: its relaunch waits out, from this leadership's start, the fence of the worker it was launched on (which
// its record holds: a decommissioned worker's own record is gone while its drivers run on) or, for a record written
// without it, the longest fence of the stored workers.
const recoveredFence = (state: State, driver: DriverEntry) => {
  const stored = [...state.workers.values()].map((worker) => worker.driverFenceMillis ?? 0)
  const millis = Math.max(driver.fenceMillis ?? 0, ...stored)
  return millis > 0 && state.leadingSince !== undefined ? { from: state.leadingSince, millis } : undefined
}

export const canCompleteRecovery = (state: State) =>
  state.status === "RECOVERING" &&
  ![...state.workers.values()].some(awaitingAnswer) &&
  ![...state.apps.values()].some((app) => app.state === "UNKNOWN")

export const completeRecovery = (step: Step) => {
  const { state } = step
  if (state.status !== "RECOVERING") return
  state.status = "COMPLETING_RECOVERY"
  for (const worker of [...state.workers.values()]) {
    if (awaitingAnswer(worker)) removeWorker(step, worker, "Not responding for recovery")
  }
  for (const app of [...state.apps.values()]) {
    if (app.state === "UNKNOWN") {
      removeApplication(step, app, "FINISHED", "its driver did not answer the recovered master")
    }
  }
  for (const app of state.apps.values()) {
    if (app.state === "WAITING") app.state = "RUNNING"
  }
  for (const driver of [...state.drivers.values()]) {
    if (driver.worker !== undefined || state.waitingDrivers.includes(driver)) continue
    log(step, "Warning", `Driver ${driver.id} was not found after master recovery`)
    if (driver.desc.supervise) relaunchDriver(step, driver, recoveredFence(state, driver))
    else removeDriver(step, driver.id, "ERROR", undefined)
  }
  state.status = "ALIVE"
  log(step, "Info", "Recovery complete - resuming operations!")
  wantSchedule(step)
}

// A peer's address is only what it claims; a worker or an app goes only when the connection it registered on
// goes, so another connection claiming its address and closing changes nothing.
export const disconnected = (step: Step, peer: RpcAddress.RpcAddress, connection: RpcEnv.ConnectionId) => {
  const { state } = step
  const key = RpcAddress.key(peer)
  const worker = state.addressToWorker.get(key)
  const app = state.addressToApp.get(key)
  // Only the connection a worker or app registered on speaks for it: another one that claimed its address (a
  // connection it left behind, or someone else's) closing says nothing about it.
  if (worker !== undefined && worker.connection === connection) {
    removeWorker(step, worker, `${peer.hostPort} got disassociated`)
  } else if (worker !== undefined) {
    log(step, "Info", `A connection claiming ${peer.hostPort} closed; worker ${worker.id} registered on another one`)
  }
  if (app !== undefined && app.connection === connection) {
    removeApplication(step, app, "FINISHED", "the master lost its connection to the driver")
  } else if (app !== undefined) {
    log(step, "Info", `A connection claiming ${peer.hostPort} closed; app ${app.id} registered on another one`)
  }
  wantRecoveryCheck(step)
}
