/**
 * The CPU time of the calling thread, for a task's `cpuTime` (Spark's executor CPU time). Node 20 has no
 * per-thread CPU clock (`process.cpuUsage` counts every thread of the process, `process.threadCpuUsage` came in
 * Node 23), so it is read from Linux's scheduler statistics of the thread, `/proc/thread-self/schedstat`, whose
 * first field is the nanoseconds the thread has spent on a CPU. Elsewhere there is none, and tasks report no CPU
 * time.
 *
 * @since 0.1.0
 */
import * as Fs from "node:fs"

// The file is opened once, by the thread that reads it (`thread-self` is whichever thread opens it), and read again
// from its start each time: about a microsecond, where opening it each time costs ten.
const open = (): (() => number) | undefined => {
  try {
    const fd = Fs.openSync("/proc/thread-self/schedstat", "r")
    const buffer = Buffer.alloc(64)
    const read = () => {
      const length = Fs.readSync(fd, buffer, 0, buffer.length, 0)
      let nanos = 0
      for (let i = 0; i < length; i++) {
        const digit = buffer[i]! - 48
        if (digit < 0 || digit > 9) break
        nanos = nanos * 10 + digit
      }
      return nanos
    }
    read()
    return read
  } catch {
    return undefined
  }
}

/**
 * Nanoseconds the thread that loaded this module has run, or undefined where the platform does not say. Each
 * thread loads its own copy of this module.
 *
 * @since 0.1.0
 */
export const clock: (() => number) | undefined = open()
