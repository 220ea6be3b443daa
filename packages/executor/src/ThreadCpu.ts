/**
 * The CPU time of the calling thread, for a task's `cpuTime` (Spark's executor CPU time). Node 20 has no
 * per-thread CPU clock (`process.cpuUsage` counts every thread of the process, `process.threadCpuUsage` came in
 * Node 23), so it is read from Linux's scheduler statistics of the thread, `/proc/thread-self/schedstat`, whose
 * first field is the nanoseconds the thread has spent on a CPU: about 10 µs a read. Elsewhere there is none, and
 * tasks report no CPU time.
 *
 * @since 0.1.0
 */
import * as Fs from "node:fs"

const schedstat = "/proc/thread-self/schedstat"

const read = (): number => Number(Fs.readFileSync(schedstat, "latin1").split(" ", 1)[0])

/**
 * Nanoseconds the calling thread has run, or undefined where the platform does not say.
 *
 * @since 0.1.0
 */
export const clock: (() => number) | undefined = (() => {
  try {
    return Number.isFinite(read()) ? read : undefined
  } catch {
    return undefined
  }
})()
