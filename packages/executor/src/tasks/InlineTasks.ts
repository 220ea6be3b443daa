/**
 * A task runner without threads: each task is evaluated on a fiber of its own after a pause of the length
 * `duration` picks, at most `size` at once, on the files of the `Disk` it is given. The simulated cluster runs its
 * executors on it, where threads and real time do not exist. A task stuck in a loop would stop the whole process,
 * so real executors use `TaskThreads`.
 *
 * @since 0.1.0
 */
import type { Disk } from "@kindling/data"
import type { SharedVariables } from "@kindling/protocol"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberId from "effect/FiberId"
import * as Runtime from "effect/Runtime"
import { Functions, runEncoded } from "../engine/Evaluation.js"
import * as TaskContext from "./TaskContext.js"
import type * as TaskThreads from "./TaskThreads.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly size: number
  /** How long the next task takes before its result is computed. */
  readonly duration: Effect.Effect<Duration.DurationInput>
  readonly files: Disk.Files
}

/**
 * A runner with no app module: tasks may only use functions given as source text.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options): Effect.Effect<TaskThreads.TaskThreads> =>
  Effect.gen(function*() {
    const slots = yield* Effect.makeSemaphore(options.size)
    // Its runs are fibers of the caller's runtime: on its clock and scheduler, as the simulated node's.
    const runFork = Runtime.runFork(yield* Effect.runtime<never>())
    const functions = new Functions(() => undefined)
    const run = (task: Uint8Array, info: SharedVariables.TaskInfo, inputs: TaskContext.Inputs) =>
      slots.withPermits(1)(
        Effect.zipRight(
          Effect.flatMap(options.duration, Effect.sleep),
          Effect.sync(() => {
            const context = TaskContext.fromInputs(inputs, options.files, info)
            const { bytes, succeeded } = runEncoded(task, functions, context)
            return { outcome: bytes, succeeded, stored: context.stored }
          })
        )
      )
    return {
      size: options.size,
      started: Effect.void,
      // Inline tasks run in one go: there is nothing to see while they run.
      progress: () => undefined,
      start: (task, info, inputs, done) => {
        const fiber = runFork(run(task, info, inputs))
        let stopped = false
        fiber.addObserver((exit) => {
          if (!stopped) done(exit)
        })
        return () => {
          stopped = true
          fiber.unsafeInterruptAsFork(FiberId.none)
        }
      },
      // Each end is told by a fiber of its own: there is no turn to wait for.
      afterEnds: (f) => f()
    }
  })
