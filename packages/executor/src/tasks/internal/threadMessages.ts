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

export type FromThread =
  | { readonly _tag: "Ready" }
  /** `outcome` is a `TaskPlan.TaskOutcome` encoded with `Records`; `stored`, the persisted partitions it computed. */
  | {
    readonly _tag: "Done"
    readonly taskId: number
    readonly outcome: Uint8Array
    readonly stored: ReadonlyArray<NewBlock>
  }
  /** A task it passed by: it was stopped before its turn. */
  | { readonly _tag: "Skipped"; readonly taskId: number }
