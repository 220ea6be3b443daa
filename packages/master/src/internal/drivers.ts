// Drivers: submission, kill, status, launch, removal and relaunch.
import { Retention } from "@kindling/kernel"
import { Descriptions, Errors, Ids, States, SubmissionMessages, WorkerMessages } from "@kindling/protocol"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import { persistDriver } from "./snapshots.js"
import type { DriverEntry, Step, WorkerEntry } from "./state.js"
import { attachDriver, detachDriver, log, notAlive, toWorker, wantSchedule } from "./state.js"

export const createDriver = (step: Step, desc: Descriptions.DriverDescription): DriverEntry => {
  const { state } = step
  const id = Ids.makeDriverId(new Date(step.now), state.nextDriverNumber++)
  return {
    id,
    desc,
    startTime: step.now,
    submitDate: step.now,
    state: "SUBMITTED",
    worker: undefined,
    exception: undefined,
    fenceMillis: undefined,
    notBefore: undefined,
    fencedOn: undefined
  }
}

export const submitDriver = (
  step: Step,
  desc: Descriptions.DriverDescription
): Exit.Exit<SubmissionMessages.SubmitDriverResponse, Errors.MasterNotAlive | Errors.DriverLaunchFailed> => {
  const { state } = step
  if (state.status !== "ALIVE") return notAlive(state, "accept driver submissions")
  // Refused here rather than by the worker that would get it: the submitter learns why at once, and nothing is
  // recorded for a driver that could never run.
  const refused = Descriptions.refusedModule("driver", desc.command)
  if (refused !== undefined) {
    log(step, "Warning", `Refused a driver submission: ${refused}`)
    return Exit.fail(new Errors.DriverLaunchFailed({ reason: refused }))
  }
  const driver = createDriver(step, desc)
  persistDriver(step, driver)
  // Logged once it is on disk: commands are carried out in order, and a failed write stops the master first.
  log(step, "Info", `Driver submitted ${driver.id}`)
  state.drivers.set(driver.id, driver)
  state.waitingDrivers.push(driver)
  wantSchedule(step)
  return Exit.succeed(
    new SubmissionMessages.SubmitDriverResponse({
      master: state.config.self,
      success: true,
      driverId: Option.some(driver.id),
      message: `Driver successfully submitted as ${driver.id}`
    })
  )
}

export const killDriver = (step: Step, driver: DriverEntry) => {
  if (step.state.waitingDrivers.includes(driver)) {
    removeDriver(step, driver.id, "KILLED", undefined)
  } else if (driver.worker !== undefined) {
    toWorker(step, driver.worker, new WorkerMessages.KillDriver({ driverId: driver.id }))
  }
}

export const killDriverRequest = (
  step: Step,
  driverId: Ids.DriverId
): Exit.Exit<SubmissionMessages.KillDriverResponse, Errors.MasterNotAlive | Errors.DriverNotFound> => {
  const { state } = step
  if (state.status !== "ALIVE") return notAlive(state, "kill drivers")
  log(step, "Info", `Asked to kill driver ${driverId}`)
  const driver = state.drivers.get(driverId)
  if (driver === undefined) {
    return Exit.fail(new Errors.DriverNotFound({ driverId, detail: "has already finished or does not exist" }))
  }
  killDriver(step, driver)
  return Exit.succeed(
    new SubmissionMessages.KillDriverResponse({
      master: state.config.self,
      driverId,
      success: true,
      message: `Kill request for ${driverId} submitted`
    })
  )
}

export const driverStatus = (
  step: Step,
  driverId: Ids.DriverId
): Exit.Exit<SubmissionMessages.DriverStatusResponse, Errors.MasterNotAlive | Errors.DriverNotFound> => {
  const { state } = step
  if (state.status !== "ALIVE") return notAlive(state, "report driver status")
  const driver = state.drivers.get(driverId) ?? state.completedDrivers.find((d) => d.id === driverId)
  if (driver === undefined) return Exit.fail(new Errors.DriverNotFound({ driverId }))
  return Exit.succeed(
    new SubmissionMessages.DriverStatusResponse({
      found: true,
      state: Option.some(driver.state),
      workerId: Option.fromNullable(driver.worker?.id),
      workerHostPort: Option.fromNullable(driver.worker && `${driver.worker.host}:${driver.worker.port}`),
      exception: Option.fromNullable(driver.exception)
    })
  )
}

export const launchDriver = (step: Step, worker: WorkerEntry, driver: DriverEntry) => {
  log(step, "Info", `Launching driver ${driver.id} on worker ${worker.id}`)
  attachDriver(driver, worker)
  driver.state = "RUNNING"
  driver.fenceMillis = worker.driverFenceMillis
  // Persisted again with its worker, so a recovering master knows it was launched (Spark persists drivers only
  // on submission, and a restarted master then fails drivers that were still waiting) — and before the launch
  // goes out, so no driver runs that the store says is waiting.
  persistDriver(step, driver)
  toWorker(
    step,
    worker,
    new WorkerMessages.LaunchDriver({ driverId: driver.id, driverDesc: driver.desc, resources: {} })
  )
}

export const removeDriver = (
  step: Step,
  driverId: Ids.DriverId,
  finalState: States.DriverState,
  exception: Descriptions.RemoteException | undefined
) => {
  const { state } = step
  const driver = state.drivers.get(driverId)
  if (driver === undefined) {
    log(step, "Warning", `Asked to remove unknown driver: ${driverId}`)
    return
  }
  log(step, "Info", `Removing driver: ${driverId}`)
  state.drivers.delete(driverId)
  const waiting = state.waitingDrivers.indexOf(driver)
  if (waiting >= 0) state.waitingDrivers.splice(waiting, 1)
  Retention.append(state.completedDrivers, driver, state.config.retainedDrivers)
  step.commands.push({ _tag: "Unpersist", kind: "driver", id: driverId })
  driver.state = finalState
  driver.exception = exception
  detachDriver(driver)
  wantSchedule(step)
}

/**
 * A driver's end as its worker tells it (told twice, or of a driver already settled or relaunched, it changes
 * nothing). RELAUNCHING ends a copy the worker's fencing stopped: that copy is gone, and a supervised driver is
 * launched again at once.
 */
export const driverEndedOn = (
  step: Step,
  driverId: Ids.DriverId,
  ended: States.DriverState,
  exception: Descriptions.RemoteException | undefined
) => {
  const driver = step.state.drivers.get(driverId)
  if (ended === "RELAUNCHING") {
    if (driver?.desc.supervise === true) relaunchDriver(step, driver)
    else if (driver !== undefined) removeDriver(step, driverId, "ERROR", exception)
  } else if (!States.isDriverReportable(ended)) {
    log(step, "Warning", `Unexpected state ${ended} for driver ${driverId}; ignored`)
  } else if (driver !== undefined) {
    removeDriver(step, driverId, ended, exception)
  }
}

// How long the processes of a worker whose process is gone may outlive it: their parent watch notices within half a
// second and takes them down with SIGTERM, then SIGKILL two seconds later (parent-watch.mjs); and a margin.
const orphanLifeMillis = 3_500

// The lost worker's address refuses connections: the drivers it ran are gone with it, or will be within
// `orphanLifeMillis`, however long its fence.
export const workerProcessGone = (step: Step, workerId: Ids.WorkerId) => {
  for (const driver of step.state.waitingDrivers) {
    if (driver.fencedOn !== workerId || driver.notBefore === undefined) continue
    driver.notBefore = Math.min(driver.notBefore, step.now + orphanLifeMillis)
    log(step, "Info", `Worker ${workerId} is gone: ${driver.id} is launched without waiting out its fence`)
  }
  wantSchedule(step)
}

// What covers the lateness of the worker's lease timer and the death of the process it SIGKILLs.
const fenceMarginMillis = 1000

export const fenceEnd = (from: number, millis: number) => from + millis + fenceMarginMillis

/**
 * Launches a supervised driver again, under a new id. `fence`, when its old copy may still run on a worker cut off:
 * that worker stops its supervised drivers by `millis` after `from` (its last heartbeat heard), and the relaunch
 * waits until then, so that the two copies never run at once.
 */
export const relaunchDriver = (
  step: Step,
  driver: DriverEntry,
  fence?: { readonly from: number; readonly millis: number } | undefined
) => {
  // The relaunched driver gets a new id: the old one may still be running behind a network partition, and
  // its reports must not be taken for the new one's.
  const worker = driver.worker
  removeDriver(step, driver.id, "RELAUNCHING", undefined)
  const relaunched: DriverEntry = {
    ...createDriver(step, driver.desc),
    fenceMillis: fence?.millis,
    notBefore: fence && fenceEnd(fence.from, fence.millis),
    fencedOn: fence && worker?.id
  }
  if (relaunched.notBefore !== undefined && relaunched.notBefore > step.now) {
    log(
      step,
      "Info",
      `Driver ${driver.id} is relaunched as ${relaunched.id} once its worker's fence has passed, ` +
        `in ${relaunched.notBefore - step.now} ms`
    )
  }
  persistDriver(step, relaunched)
  step.state.drivers.set(relaunched.id, relaunched)
  step.state.waitingDrivers.push(relaunched)
  wantSchedule(step)
}
