/**
 * How an executor shares its memory. `kindling.executor.memory` is what the worker charges the executor for, so it
 * bounds the whole process — both heaps of every task thread, the bytes its fetches hold, the runtime itself — not
 * one heap as Spark's `-Xmx` does. What the process holds once started (Node, the modules, the task threads: some
 * 120 MiB) is measured, or for threads still starting estimated, and set aside; what is left is shared among what grows with the work:
 *
 * - each running task's shuffle write, aggregation or sort spills past `spillThreshold` (estimated bytes; held
 *   on a heap they take up to about twice that, hence a quarter of what is left over all the cores);
 * - the reduce tasks' fetches hold at most `maxBytesInFlight` (a fifth);
 * - cached partitions keep `storageMemory` in memory (three tenths, Spark's 0.6 × 0.5 of its unified memory).
 *
 * A setting asked for explicitly below its share is kept: the budget only ever lowers what the app asked for.
 *
 * @since 0.1.0
 */

const mebibyte = 1024 * 1024

/**
 * The least left over once the runtime is set aside, however small the executor: below it an executor spills
 * every few records, and is better off slow than dead.
 *
 * @since 0.1.0
 */
export const floor = 16 * mebibyte

/**
 * What a task thread holds once it has started (a V8 isolate with its module loaded: measured 17–19 MiB), for the
 * threads an executor counts before they are up: it registers while they start.
 *
 * @since 0.1.0
 */
export const threadStart = 20 * mebibyte

/**
 * @since 0.1.0
 * @category models
 */
export interface Budget {
  readonly spillThreshold: number
  readonly maxBytesInFlight: number
  readonly storageMemory: number
}

/**
 * The shares of an executor of `memory` bytes that holds `baseline` bytes once started and runs `cores` tasks at
 * once, capped by what the app asked for.
 *
 * @since 0.1.0
 */
export const share = (options: {
  readonly memory: number
  readonly baseline: number
  readonly cores: number
  readonly spillThreshold: number
  readonly maxBytesInFlight: number
}): Budget => {
  const free = Math.max(floor, options.memory - options.baseline)
  return {
    spillThreshold: Math.min(options.spillThreshold, Math.floor(free / 4 / Math.max(1, options.cores))),
    maxBytesInFlight: Math.min(options.maxBytesInFlight, Math.floor(free / 5)),
    storageMemory: Math.floor(free * 0.3)
  }
}
