// A driver's life once launched, as Spark's DriverRunner lives it but decided here: each run of its process ends
// the driver (FINISHED, KILLED, FAILED) or — supervised and failed — arms its back-off timer, at whose tick the
// shell starts the process again in the work dir its launch prepared. A kill or the fencing ends the wait at once.
// The shell only runs processes and timers; which run comes next, and when, is this module's.
import { Core, Retention } from "@kindling/kernel"
import { type Descriptions, type Ids, type RpcAddress, type States, WorkerMessages } from "@kindling/protocol"
import * as Option from "effect/Option"
import { driverFinalState, nextBackoff } from "../Supervision.js"
import type { Local } from "../WorkerCore.js"
import * as fencing from "./fencing.js"
import type { DriverEntry, State, Step } from "./state.js"
import { exitIfDrained, log } from "./state.js"
import { tell } from "./stateSync.js"

// One back-off timer per driver waiting to run again.
const relaunchTimer = (driverId: Ids.DriverId) => `relaunch:${driverId}`

export const processEnded = (step: Step, input: Extract<Local, { _tag: "DriverProcessEnded" }>) => {
  const driver = step.state.drivers.get(input.driverId)
  if (driver === undefined) return
  const state = driverFinalState({ exitCode: input.exitCode, killed: driver.stopping !== undefined })
  if (state !== "FAILED") return ended(step, driver.id, state, undefined)
  if (!driver.desc.supervise) return ended(step, driver.id, state, input.exception)
  // Spark's schedule: the first wait after a launch, or after a run long enough to count as a success, is the
  // initial one; each failure in a row doubles it.
  const { superviseInitialBackoffMillis } = step.state.config
  const backoff = nextBackoff(driver.backoffMillis, step.now - driver.startedAt, superviseInitialBackoffMillis)
  driver.backoffMillis = backoff
  driver.relaunchAt = step.now + backoff
  log(step, "Warning", `Driver ${driver.id} exited with code ${input.exitCode}; relaunching it in ${backoff} ms`)
  Core.startTimer(step, relaunchTimer(driver.id), { _tag: "RelaunchDriver", driverId: driver.id }, backoff)
}

export const relaunch = (step: Step, input: Extract<Local, { _tag: "RelaunchDriver" }>) => {
  const driver = step.state.drivers.get(input.driverId)
  // A tick queued before its timer was cancelled (the driver was stopped meanwhile) runs nothing.
  if (driver?.relaunchAt === undefined) return
  driver.relaunchAt = undefined
  driver.startedAt = step.now
  log(step, "Info", `Relaunching driver ${driver.id}`)
  step.commands.push({ _tag: "RestartDriver", driverId: driver.id })
  // Relaunched as it was launched: with no lease a master vouches for, it is stopped again at once.
  fencing.launchedSupervised(step)
}

// Stops a driver: a kill asked for, or its fencing. A running process is killed, and its run's end decides the
// driver's; one waiting out its back-off has none, and ends now. Asked to kill one its fencing is stopping already,
// it ends KILLED, as asked, rather than to be relaunched — without a second kill.
export const stop = (step: Step, driver: DriverEntry, why: "kill" | "fence") => {
  const stopping = driver.stopping !== undefined
  driver.stopping = why
  if (driver.relaunchAt !== undefined) {
    Core.cancelTimer(step, relaunchTimer(driver.id))
    return ended(step, driver.id, driverFinalState({ exitCode: undefined, killed: true }), undefined)
  }
  if (!stopping) step.commands.push({ _tag: "KillDriver", driverId: driver.id })
}

export const killDriver = (step: Step, message: WorkerMessages.KillDriver) => {
  const driver = step.state.drivers.get(message.driverId)
  if (driver === undefined) {
    log(step, "Error", `Asked to kill unknown driver ${message.driverId}`)
    return
  }
  log(step, "Info", `Asked to kill driver ${message.driverId}`)
  stop(step, driver, "kill")
}

const driverEndings: Partial<Record<string, string>> = {
  ERROR: "failed with unrecoverable exception",
  FAILED: "exited with failure",
  FINISHED: "exited successfully",
  KILLED: "was killed by user",
  RELAUNCHING: "was stopped by its fencing, for a master to relaunch it"
}

// The driver's end, for good: the master is told, its resources are freed and its runner let go.
export const ended = (
  step: Step,
  driverId: Ids.DriverId,
  how: States.DriverState,
  why: Descriptions.RemoteException | undefined
) => {
  const { state } = step
  const driver = state.drivers.get(driverId)
  if (driver === undefined) return
  const { exception, state: final } = fencing.fencedEnd(driver, how) ?? { state: how, exception: why }
  const what = driverEndings[final] ?? `changed state to ${final}`
  const detail = final === "ERROR" ? `: ${exception?.message ?? "unknown"}` : ""
  log(step, final === "FINISHED" || final === "KILLED" ? "Info" : "Warning", `Driver ${driverId} ${what}${detail}`)
  state.drivers.delete(driverId)
  driver.state = final
  driver.exception = exception
  step.commands.push({ _tag: "ReleaseDriver", driverId })
  reportDriver(step, driver)
  Retention.append(state.finishedDrivers, driver, state.config.retainedDrivers)
  state.coresUsed -= driver.desc.cores
  state.memoryUsed -= driver.desc.mem
  exitIfDrained(step)
}

// A driver's end is told until a master acknowledges it: a master that is away when the driver ends must not
// find, once it is back, a driver it cannot account for (and relaunch it, or fail it).
export const reportDriver = (step: Step, driver: DriverEntry) => {
  const { state } = step
  state.unheard.set(driver.id, driver)
  if (state.master === undefined) {
    log(step, "Info", `Driver ${driver.id} ended before any master was known; its end is told once one is`)
    return
  }
  tellDriverEnd(step, state.master, driver)
}

export const tellDriverEnd = (step: Step, master: RpcAddress.RefOf<"Master">, driver: DriverEntry) =>
  tell(
    step,
    master,
    new WorkerMessages.DriverStateChanged({
      driverId: driver.id,
      state: driver.state,
      exception: Option.fromNullable(driver.exception)
    })
  )

// What is wrong with the drivers' supervision: only a supervised driver that nothing stops waits to run again, and
// only a supervised one has a back-off.
export const problems = (state: State): ReadonlyArray<string> =>
  [...state.drivers.values()].flatMap((driver) => [
    ...(driver.relaunchAt !== undefined && (!driver.desc.supervise || driver.stopping !== undefined)
      ? [`${driver.id} waits to be relaunched, yet is ${driver.desc.supervise ? "being stopped" : "unsupervised"}`]
      : []),
    ...(driver.backoffMillis !== undefined && !driver.desc.supervise ? [`unsupervised ${driver.id} backs off`] : [])
  ])
