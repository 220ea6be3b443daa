/**
 * A task runner that is there before its threads are: an executor registers while it still fetches the app its
 * task threads import, as Spark's executors register first and fetch an app's files when a task needs them. Tasks
 * given meanwhile wait, in the order given, and go to the runner once it is made; one stopped meanwhile is dropped.
 *
 * @since 0.1.0
 */
import type { SharedVariables } from "@kindling/protocol"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import type * as Scope from "effect/Scope"
import type { Inputs } from "./TaskContext.js"
import * as TaskThreads from "./TaskThreads.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface LateThreads<E> {
  /** Usable at once: what it is given before the runner is made waits for it. */
  readonly threads: TaskThreads.TaskThreads
  /** The runner once made, or why it could not be. */
  readonly made: Effect.Effect<TaskThreads.TaskThreads, E>
}

interface Waiting {
  readonly task: Uint8Array
  readonly info: SharedVariables.TaskInfo
  readonly inputs: Inputs
  readonly done: (run: TaskThreads.TaskRun) => void
  /** What stops it once it has gone to the runner. */
  stop: (() => void) | undefined
}

/**
 * Makes the runner of `size` tasks at once with `make` in the background, for the lifetime of the scope.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <E, R>(
  size: number,
  make: Effect.Effect<TaskThreads.TaskThreads, E, R | Scope.Scope>
): Effect.Effect<LateThreads<E>, never, R | Scope.Scope> =>
  Effect.gen(function*() {
    let runner: TaskThreads.TaskThreads | undefined
    const waiting: Array<Waiting> = []
    const making = yield* Effect.forkScoped(Effect.tap(make, (made) =>
      Effect.sync(() => {
        runner = made
        for (const given of waiting.splice(0)) {
          given.stop = made.start(given.task, given.info, given.inputs, given.done)
        }
      })))

    const start: TaskThreads.TaskThreads["start"] = (task, info, inputs, done) => {
      if (runner !== undefined) return runner.start(task, info, inputs, done)
      const given: Waiting = { task, info, inputs, done, stop: undefined }
      waiting.push(given)
      return () => {
        if (given.stop !== undefined) return given.stop()
        const at = waiting.indexOf(given)
        if (at >= 0) waiting.splice(at, 1)
      }
    }

    // A runner that cannot be made has no thread to start: its threads' start fails with why.
    const started = Effect.flatMap(Fiber.await(making), (exit) =>
      Exit.isSuccess(exit)
        ? exit.value.started
        : new TaskThreads.ThreadStartFailed({
          failure: { className: "Error", message: "no task runner", stack: Cause.pretty(exit.cause) }
        }))

    return {
      threads: {
        size,
        start,
        // Nothing ends before the runner is made: there is nothing to wait for.
        afterEnds: (f) => (runner === undefined ? f() : runner.afterEnds(f)),
        started,
        progress: (taskId) => runner?.progress(taskId)
      },
      made: Fiber.join(making)
    }
  })
