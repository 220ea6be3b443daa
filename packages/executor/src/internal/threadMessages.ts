// What a task thread and its pool say to each other.
import type { NewBlock } from "../BlockStore.js"
import type { Inputs } from "../TaskContext.js"

/** A task for the thread: a `TaskPlan.Task` encoded with `Records`. */
export interface ToThread {
  readonly taskId: number
  readonly task: Uint8Array
  readonly inputs: Inputs
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
