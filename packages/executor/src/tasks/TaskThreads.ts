/**
 * The executor's pool of task threads: one `worker_threads` thread per core, each importing the app module once,
 * when a task first names one of its functions. A task runs on an idle thread; stopping it terminates that thread
 * (a task stuck in a loop cannot be stopped any other way) and a fresh one takes its place. A thread that dies
 * under a task — the task exhausted memory, or called `process.exit` — fails that task and is replaced; the
 * executor carries on.
 *
 * @since 0.1.0
 */
import { ModuleLoading } from "@kindling/kernel"
import type { SharedVariables } from "@kindling/protocol"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import type * as Scope from "effect/Scope"
import type { Worker } from "node:worker_threads"
import type { NewBlock } from "../shuffle/BlockStore.js"
import type { Failure, FromThread, ToThread } from "./internal/threadMessages.js"
import type { Inputs } from "./TaskContext.js"

/**
 * A task thread could not start.
 *
 * @since 0.1.0
 * @category errors
 */
export class ThreadStartFailed extends Data.TaggedError("ThreadStartFailed")<{ readonly failure: Failure }> {
  override get message() {
    return `A task thread could not start: ${this.failure.stack}`
  }
}

/**
 * A thread ended while it ran a task (the task, not the thread, is at fault: it is reported as the task's
 * failure).
 *
 * @since 0.1.0
 * @category errors
 */
export class ThreadDied extends Data.TaggedError("ThreadDied")<{ readonly reason: string }> {
  override get message() {
    return `The task thread died: ${this.reason}`
  }
}

/**
 * What running a task gave: its encoded `TaskPlan.TaskOutcome`, and the persisted partitions it computed.
 *
 * @since 0.1.0
 * @category models
 */
export interface TaskOutput {
  readonly outcome: Uint8Array
  readonly stored: ReadonlyArray<NewBlock>
}

/**
 * How a task run ended: its output, or why the runner could not run it.
 *
 * @since 0.1.0
 * @category models
 */
export type TaskRun = Exit.Exit<TaskOutput, ThreadDied | ThreadStartFailed>

/**
 * @since 0.1.0
 * @category models
 */
export interface TaskThreads {
  /**
   * Starts attempt `info` of an encoded `TaskPlan.Task` with its inputs, and calls `done` when it ends. Returns
   * what stops it: once stopped, `done` is not called.
   */
  readonly start: (
    task: Uint8Array,
    info: SharedVariables.TaskInfo,
    inputs: Inputs,
    done: (run: TaskRun) => void
  ) => () => void
  /**
   * Calls `f` once the ends that arrive now have all been told (`done`), so that a caller can report them
   * together: a pool of threads after the turn of the event loop their answers arrived in, an inline runner at
   * once.
   */
  readonly afterEnds: (f: () => void) => void
  readonly size: number
  /**
   * Succeeds once the runner's first threads are all ready, or fails with why one could not start. The runner
   * is usable before: a task started meanwhile waits for a thread.
   */
  readonly started: Effect.Effect<void, ThreadStartFailed>
  /** How far a running task has got: the records it has read so far, if this runner can tell. */
  readonly progress: (taskId: number) => { readonly recordsRead: number } | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** How many tasks run at once. */
  readonly size: number
  /** The app module (a `file:` URL), if there is one: a thread imports it when a task first needs it. */
  readonly appUrl?: string | undefined
}

const spawn = (appUrl: string | undefined, progress: SharedArrayBuffer): Worker =>
  ModuleLoading.thread(import.meta.url, "taskThread", { appUrl, progress })

interface Thread {
  readonly worker: Worker
  /** The records its running task has read, which the thread writes as it goes. */
  readonly progress: Float64Array
  /**
   * The local dir of the last inputs it was sent, which it uses for tasks sent without inputs (with their object
   * store, the same for every task of an executor).
   */
  localDir: string | undefined
  /** The task it runs, with what to call when it is done. */
  current: { readonly taskId: number; readonly done: (run: TaskRun) => void } | undefined
}

/**
 * Starts `size` threads, without waiting for them (`started` says when they are ready): an executor registers
 * while they load their module, which takes a new isolate some 60–70 ms. The threads are terminated when the scope
 * closes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options): Effect.Effect<TaskThreads, ThreadStartFailed, Scope.Scope> =>
  Effect.gen(function*() {
    const threads = new Set<Thread>()
    const idle: Array<Thread> = []
    const waiting: Array<(thread: Thread) => void> = []
    let closed = false

    const release = (thread: Thread) => {
      const next = waiting.shift()
      if (next !== undefined) next(thread)
      else idle.push(thread)
    }

    // A thread ready for work, or the reason it could not start.
    const startThread = (): Effect.Effect<Thread, ThreadStartFailed> =>
      Effect.async<Thread, ThreadStartFailed>((resume) => {
        const progress = new SharedArrayBuffer(Float64Array.BYTES_PER_ELEMENT)
        const worker = spawn(options.appUrl, progress)
        const thread: Thread = { worker, progress: new Float64Array(progress), localDir: undefined, current: undefined }
        let ready = false
        worker.on("message", (message: FromThread) => {
          switch (message._tag) {
            case "Ready":
              // A thread that became ready after the pool closed (one replacing a thread lost just before) is
              // ended at once: it would keep its process alive.
              if (closed) {
                void worker.terminate()
                return resume(
                  Effect.fail(
                    new ThreadStartFailed({ failure: { className: "Error", message: "closed", stack: "closed" } })
                  )
                )
              }
              ready = true
              threads.add(thread)
              return resume(Effect.succeed(thread))
            case "Done": {
              const current = thread.current
              if (current === undefined || current.taskId !== message.taskId) return
              thread.current = undefined
              release(thread)
              return current.done(Exit.succeed({ outcome: message.outcome, stored: message.stored }))
            }
          }
        })
        const ended = (reason: string) => {
          threads.delete(thread)
          if (!ready) {
            const failure = { className: "Error", message: reason, stack: reason }
            return resume(Effect.fail(new ThreadStartFailed({ failure })))
          }
          const current = thread.current
          thread.current = undefined
          const at = idle.indexOf(thread)
          if (at >= 0) idle.splice(at, 1)
          current?.done(Exit.fail(new ThreadDied({ reason })))
          if (!closed) replace()
        }
        let lastError: string | undefined
        worker.on("error", (error) => {
          lastError = error.stack ?? error.message
        })
        worker.on("exit", (code) => ended(lastError ?? `the task thread exited with code ${code}`))
      })

    // A thread lost under a task is replaced in the background; until the new one is ready, the tasks wait.
    const replace = () =>
      Effect.runFork(
        startThread().pipe(
          Effect.tap((thread) => Effect.sync(() => release(thread))),
          Effect.ignore
        )
      )

    yield* Effect.addFinalizer(() =>
      Effect.promise(() => {
        closed = true
        return Promise.all([...threads].map((thread) => thread.worker.terminate()))
      })
    )
    // Each thread is released to the tasks the moment it is ready; a thread that cannot start fails `started`.
    const starting = yield* Effect.forkScoped(
      Effect.all(
        Array.from(
          { length: options.size },
          () => Effect.tap(startThread(), (thread) => Effect.sync(() => release(thread)))
        ),
        { concurrency: "unbounded", discard: true }
      )
    )

    // A task goes to an idle thread, or waits for the next one released; either way it is posted the moment it
    // has a thread, so that no stop can leave a thread taken and unused.
    const start: TaskThreads["start"] = (task, info, inputs, done) => {
      const taskId = info.taskAttemptId
      let assigned: Thread | undefined
      const assign = (thread: Thread) => {
        assigned = thread
        thread.current = { taskId, done }
        const plain = inputs.shuffleInputs.length === 0 && inputs.cached.length === 0 &&
          inputs.broadcasts === undefined && inputs.metrics === undefined && thread.localDir === inputs.localDir
        // The task's bytes are most often a view into the frame they came in, which a post would copy whole: a copy
        // of their own is handed over instead (`new Uint8Array` copies; a Buffer's `slice` would not).
        const own = new Uint8Array(task)
        const message: ToThread = plain ? { taskId, task: own, info } : { taskId, task: own, info, inputs }
        thread.localDir = inputs.localDir
        thread.worker.postMessage(message, [own.buffer])
      }
      const thread = idle.pop()
      if (thread !== undefined) assign(thread)
      else waiting.push(assign)
      return () => {
        if (assigned === undefined) {
          const at = waiting.indexOf(assign)
          if (at >= 0) waiting.splice(at, 1)
          return
        }
        // Stopped while it runs: the only way to stop what the thread is doing is to end the thread.
        if (assigned.current?.taskId !== taskId) return
        assigned.current = undefined
        void assigned.worker.terminate()
      }
    }

    // Threads answer in messages of their own, each in its own callback; the ends of one turn of the event loop
    // are told before what waits on them, which then reports them at once.
    let waitingOnEnds: Array<() => void> = []
    const afterEnds = (f: () => void) => {
      waitingOnEnds.push(f)
      if (waitingOnEnds.length > 1) return
      setImmediate(() => {
        const waiting = waitingOnEnds
        waitingOnEnds = []
        for (const g of waiting) g()
      })
    }

    const progress = (taskId: number) => {
      for (const thread of threads) {
        if (thread.current?.taskId === taskId) return { recordsRead: thread.progress[0]! }
      }
      return undefined
    }

    return { start, afterEnds, size: options.size, started: Fiber.join(starting), progress }
  })
