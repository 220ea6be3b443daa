// What a task thread and its pool share without a message, in one small shared array: the task the thread runs
// now, and the tasks it holds that it must not start (stopped before their turn). -1 is none.
//
// Stopping a held task races with the thread taking it up. Both sides write before they read — the pool marks the
// task, then looks at what runs; the thread says what it runs, then looks at the marks — so at least one of them
// sees the other: the thread skips the task, or the pool sees it running (and ends the thread), or both.

const none = -1

/** A control for a thread that holds at most `held` tasks. */
export const make = (held: number): SharedArrayBuffer => {
  const buffer = new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT * (1 + held))
  new Int32Array(buffer).fill(none)
  return buffer
}

/** The task the thread runs now (-1: none). */
export const running = (control: Int32Array): number => Atomics.load(control, 0)

/**
 * The pool: marks a held task the thread must skip. False when the thread runs it already (or there is no room
 * for the mark): only ending the thread stops it then.
 */
export const skip = (control: Int32Array, taskId: number): boolean => {
  for (let slot = 1; slot < control.length; slot++) {
    if (Atomics.compareExchange(control, slot, none, taskId) === none) return Atomics.load(control, 0) !== taskId
  }
  return false
}

/** The pool: a task that ended before the thread saw its mark leaves none behind. */
export const forget = (control: Int32Array, taskId: number): void => {
  for (let slot = 1; slot < control.length; slot++) Atomics.compareExchange(control, slot, taskId, none)
}

/** The thread: takes up a task, unless it is marked to be skipped (false: the mark is cleared). */
export const begin = (control: Int32Array, taskId: number): boolean => {
  Atomics.store(control, 0, taskId)
  for (let slot = 1; slot < control.length; slot++) {
    if (Atomics.load(control, slot) === taskId) {
      Atomics.store(control, slot, none)
      Atomics.store(control, 0, none)
      return false
    }
  }
  return true
}

/** The thread: the task it ran is over. */
export const end = (control: Int32Array): void => {
  Atomics.store(control, 0, none)
}
