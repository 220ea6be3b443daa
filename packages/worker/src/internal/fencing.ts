// The fencing of supervised drivers. A master that loses a worker relaunches its supervised drivers elsewhere; the
// worker may only be cut off, its drivers still running. So the worker holds a lease, renewed each time a leading
// master acknowledges one of its heartbeats and running from when that heartbeat went out: when it lapses, the
// worker stops its supervised drivers. A master waits out the worker's fence (lease plus the drivers' terminate
// timeout, from the last heartbeat it received, which went out no earlier than the last one acknowledged) before it
// relaunches them, so that no two copies of a driver ever run at once. Spark has no such lease: its copies overlap
// for as long as the partition lasts.
import { Core } from "@kindling/kernel"
import { Descriptions, type WorkerMessages } from "@kindling/protocol"
import type { DriverEntry, State, Step } from "./state.js"
import { log } from "./state.js"

// The number of the heartbeat about to go out, when this worker fences; its sending time is kept for its
// acknowledgement. Those older than the lease could extend nothing any more and are dropped.
export const numberHeartbeat = (step: Step): number | undefined => {
  const { state } = step
  const fencing = state.config.driverFencing
  if (fencing === undefined) return undefined
  for (const [seq, sentAt] of state.heartbeatsOut) {
    if (sentAt > step.now - fencing.leaseMillis) break
    state.heartbeatsOut.delete(seq)
  }
  const seq = state.nextHeartbeat++
  state.heartbeatsOut.set(seq, step.now)
  return seq
}

const lapsesAt = (step: Step): number | undefined => {
  const { driverFencing } = step.state.config
  const from = step.state.leaseFrom
  return driverFencing === undefined || from === undefined ? undefined : from + driverFencing.leaseMillis
}

export const acknowledged = (step: Step, message: WorkerMessages.HeartbeatAcknowledged) => {
  const { state } = step
  const sentAt = state.heartbeatsOut.get(message.seq)
  if (state.config.driverFencing === undefined || sentAt === undefined) return
  // Acknowledgements come in order on one connection: the earlier heartbeats have had their answer.
  for (const seq of state.heartbeatsOut.keys()) {
    if (seq > message.seq) break
    state.heartbeatsOut.delete(seq)
  }
  if (state.leaseFrom !== undefined && state.leaseFrom >= sentAt) return
  state.leaseFrom = sentAt
  Core.startTimer(step, "lease", { _tag: "LeaseLapsed" }, lapsesAt(step)! - step.now)
}

// A supervised driver launched while the lease has lapsed is fenced as soon as the launch is handled, unless an
// acknowledgement came first: no master vouches for this worker, and one may already be waiting to relaunch it.
export const launchedSupervised = (step: Step) => {
  const lapse = lapsesAt(step)
  if (lapse !== undefined && lapse <= step.now) Core.startTimer(step, "lease", { _tag: "LeaseLapsed" }, 0)
}

// The supervised drivers to stop, once the lease has lapsed (the caller stops them: `supervision.stop`).
export const lapsed = (step: Step): ReadonlyArray<DriverEntry> => {
  const { state } = step
  const lapse = lapsesAt(step)
  // Renewed since the timer was set (its tick may have waited behind the acknowledgement).
  if (lapse === undefined || step.now < lapse) return []
  const supervised = [...state.drivers.values()].filter((driver) => driver.desc.supervise && !driver.stopping)
  if (supervised.length > 0) {
    log(
      step,
      "Error",
      `No master has acknowledged this worker for ${step.now - state.leaseFrom!} ms: stopping its supervised ` +
        `drivers ${supervised.map((driver) => driver.id).join(", ")}, which a master relaunches elsewhere`
    )
  }
  return supervised
}

// What is wrong with the fencing's records: heartbeats numbered in order, kept only when fencing, and only supervised
// drivers stopped by it.
export const problems = (state: State): ReadonlyArray<string> => {
  const found: Array<string> = []
  const fencing = state.config.driverFencing !== undefined
  if (!fencing && (state.heartbeatsOut.size > 0 || state.leaseFrom !== undefined)) found.push("a lease without fencing")
  let previous = -1
  for (const seq of state.heartbeatsOut.keys()) {
    if (seq <= previous || seq >= state.nextHeartbeat) found.push(`heartbeat ${seq} out of order`)
    previous = seq
  }
  for (const driver of state.drivers.values()) {
    if (driver.stopping === "fence" && !driver.desc.supervise) found.push(`unsupervised ${driver.id} fenced`)
  }
  return found
}

// How a driver the fencing stopped ends: RELAUNCHING, which tells a master that still counts it as running here to
// launch it again. One that exited 0 on being stopped finished, as any other.
export const fencedEnd = (driver: DriverEntry, ended: DriverEntry["state"]) =>
  driver.stopping === "fence" && ended !== "FINISHED"
    ? {
      state: "RELAUNCHING" as const,
      exception: new Descriptions.RemoteException({
        name: "DriverFenced",
        message: "stopped because no master acknowledged its worker within kindling.worker.driverFencing.lease"
      })
    }
    : undefined
