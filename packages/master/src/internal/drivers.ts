// Drivers: submission, kill, status, launch, removal and relaunch.
import { Retention } from "@kindling/kernel"
import type { States } from "@kindling/protocol"
import { Descriptions, Errors, Ids, SubmissionMessages, WorkerMessages } from "@kindling/protocol"
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
    exception: undefined
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
  const { state } = step
  const waiting = state.waitingDrivers.indexOf(driver)
  if (waiting >= 0) {
    state.waitingDrivers.splice(waiting, 1)
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

export const relaunchDriver = (step: Step, driver: DriverEntry) => {
  // The relaunched driver gets a new id: the old one may still be running behind a network partition, and
  // its reports must not be taken for the new one's.
  removeDriver(step, driver.id, "RELAUNCHING", undefined)
  const relaunched = createDriver(step, driver.desc)
  persistDriver(step, relaunched)
  step.state.drivers.set(relaunched.id, relaunched)
  step.state.waitingDrivers.push(relaunched)
  wantSchedule(step)
}
