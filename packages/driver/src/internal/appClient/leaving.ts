// The app leaving its master, in the app client's core. First it asks for no executor more (a total of 0, asked as
// dynamic allocation's totals are) and says `Released` once a master has taken it, so that the executors the
// driver then stops are not replaced; then, told to leave, it waits for the master to report every executor of
// the app gone (its workers saw them end) before it unregisters the app and says `Left` — leaving first would have
// the workers kill executors mid-goodbye. Each wait ends after `leaveTimeoutMillis` whatever the master says: a
// master that cannot be reached must not keep the app from ending.
import { Core } from "@kindling/kernel"
import type { Step } from "../../AppClientCore.js"
import * as AllocationRequests from "./allocationRequests.js"

const timer = "leaving"

export type Phase = "releasing" | "released" | "draining" | "left"

const wait = (step: Step, phase: Phase) => {
  step.state.leaving = phase
  Core.startTimer(step, timer, { _tag: "LeaveTimeout", phase }, step.state.config.leaveTimeoutMillis)
}

export const release = (step: Step) => {
  AllocationRequests.requestTotal(step, 0)
  if (step.state.leaving === undefined) wait(step, "releasing")
}

export const leave = (step: Step) => {
  if (step.state.leaving !== "draining" && step.state.leaving !== "left") wait(step, "draining")
}

// How the core unregisters the app (once) and stops asking anything.
type Stop = (step: Step) => void

const done = (step: Step, said: "Released" | "Left", next: Phase) => {
  step.state.leaving = next
  Core.cancelTimer(step, timer)
  step.commands.push({ _tag: said })
}

export const timedOut = (step: Step, phase: Phase, stop: Stop) => {
  if (step.state.leaving !== phase) return
  if (phase === "releasing") {
    Core.log(step, "Warning", "The master did not take the app's request for no executor more; leaving anyway")
    done(step, "Released", "released")
  } else if (phase === "draining") {
    Core.log(step, "Warning", `The master still counts ${step.state.executors.size} executor(s) of the app; leaving`)
    stop(step)
    done(step, "Left", "left")
  }
}

/** Ends a wait whose condition holds. Called after every step. */
export const progress = (step: Step, stop: Stop) => {
  const { state } = step
  const registered = state.appId !== undefined && !state.stopped
  if (state.leaving === "releasing" && (!registered || state.allocation.taken === 0)) {
    done(step, "Released", "released")
  } else if (state.leaving === "draining" && (!registered || state.executors.size === 0)) {
    stop(step)
    done(step, "Left", "left")
  }
}
