// What a task thread and its pool say to each other.
import type { SharedVariables } from "@kindling/protocol/records"
import type { NewBlock } from "../../shuffle/BlockStore.js"
import type { Inputs } from "../TaskContext.js"

/**
 * A task for the thread: a `TaskPlan.Task` encoded with `Records`, and which attempt of which task it is. Tasks
 * are posted in batches (`Array<ToThread>`), which the thread runs in order.
 */
export interface ToThread {
  readonly taskId: number
  readonly task: Uint8Array
  readonly info: SharedVariables.TaskInfo
  /**
   * Left out when the task reads nothing but its plan and the thread was sent the same local dir before: the
   * thread uses that one (a structured clone per task is a good part of what a small task costs).
   */
  readonly inputs?: Inputs
}

export interface Failure {
  readonly className: string
  readonly message: string
  readonly stack: string
}

/** How one task a thread held ended. */
export type End =
  /**
   * `outcome` is a `TaskPlan.TaskOutcome` encoded with `Records`, a result if `succeeded`; `stored`, the persisted
   * partitions it computed; `runMillis`, how long the thread ran it (the pool holds more tasks per thread while they
   * are short).
   */
  | {
    readonly _tag: "Done"
    readonly taskId: number
    readonly outcome: Uint8Array
    readonly succeeded: boolean
    readonly stored: ReadonlyArray<NewBlock>
    readonly runMillis: number
  }
  /** A task it passed by: it was stopped before its turn. */
  | { readonly _tag: "Skipped"; readonly taskId: number }

/** The ends of several tasks travel in one message (`endsPerPost`), in the order the thread ran them. */
export type FromThread =
  | { readonly _tag: "Ready" }
  | { readonly _tag: "Ended"; readonly ends: ReadonlyArray<End> }

/**
 * How many tasks a thread holds: the one it runs and the next, so that it never idles waiting for its pool; or,
 * while tasks take less than `shortTaskMillis`, more of them, so that their ends and the tasks that replace them
 * cross between the threads a few at a time (a message wakes the thread it goes to, which costs more than a short
 * task). Holding more long tasks would let one thread hold work another, idle, could do.
 */
export const held = { long: 2, short: 8 } as const

/** A task shorter than this counts as short. */
export const shortTaskMillis = 1

/**
 * A thread tells the ends of its tasks together: when it has no task left to run, when a task was not short (its
 * end, and those before it, are told at once), or when this many have piled up — half what it holds of short
 * tasks, so that the pool's refill arrives while the other half runs. A short task's end waits at most for the
 * few short tasks after it.
 */
export const endsPerPost = held.short / 2
