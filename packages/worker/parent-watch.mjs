// Preloaded with `node --import` into every process a Kindling worker starts, which the worker spawns as the
// leader of its own process group. A worker that is SIGKILLed (or crashes) cannot clean up after itself, and its
// children would run on unnoticed: a child sees the worker go when it is re-parented (its ppid changes) and then
// takes its process group down — SIGTERM, so that programs can shut down, then SIGKILL for whatever ignored it.
// Plain JavaScript, so that it runs unbuilt.
import { clearInterval, setInterval, setTimeout } from "node:timers"

const pollMillis = 500
const graceMillis = 2000
const parent = process.ppid

// Pid 0 addresses the caller's process group, this process included.
const killGroup = () => process.kill(0, "SIGKILL")

const takeGroupDown = () => {
  // Keeps this process alive through its own SIGTERM, so that it is still there to send the SIGKILL; and if the
  // program exits first (its own SIGTERM handler), whatever it leaves in the group goes with it.
  process.on("SIGTERM", () => {})
  process.once("exit", killGroup)
  process.kill(0, "SIGTERM")
  setTimeout(killGroup, graceMillis)
}

const timer = setInterval(() => {
  if (process.ppid === parent) return
  clearInterval(timer)
  takeGroupDown()
}, pollMillis)
timer.unref()
