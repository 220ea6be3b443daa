/**
 * The executor's pool of task threads: one `worker_threads` thread per core, each importing the app module once,
 * when a task first needs it (`taskThread`). A thread holds the task it runs and the next, so that it never idles
 * between them waiting for this thread, and a few more while tasks are short; the tasks given in one turn of the
 * event loop are posted to each thread in one message, and a thread tells the ends of short tasks a few at a time
 * (`threadMessages`). A thread with nothing left to do takes over some of what another holds and has not started.
 * Stopping a task a thread runs terminates that thread (a task stuck in a
 * loop cannot be stopped any other way) and a fresh one takes its place; one it holds and has not started is
 * skipped. A thread that dies under a task — the task exhausted memory, or called `process.exit` — fails that
 * task and is replaced; what else it held runs on another thread, and the executor carries on.
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
import * as ThreadControl from "./internal/threadControl.js"
import {
  type End,
  type Failure,
  type FromThread,
  held as heldPerThread,
  shortTaskMillis,
  type ToThread
} from "./internal/threadMessages.js"
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
 * What running a task gave: its encoded `TaskPlan.TaskOutcome`, whether that is a result, and the persisted
 * partitions it computed.
 *
 * @since 0.1.0
 * @category models
 */
export interface TaskOutput {
  readonly outcome: Uint8Array
  readonly succeeded: boolean
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

const spawn = (appUrl: string | undefined, progress: SharedArrayBuffer, control: SharedArrayBuffer): Worker =>
  ModuleLoading.thread(import.meta.url, "taskThread", { appUrl, progress, control })

// A task given to the pool, with all it takes to post it (again, to another thread, if the one holding it dies
// before it starts).
interface Given {
  readonly taskId: number
  readonly task: Uint8Array
  readonly info: SharedVariables.TaskInfo
  readonly inputs: Inputs
  readonly done: (run: TaskRun) => void
  /** Stopped before its thread started it: it stays held until the thread has passed it, and is told nothing. */
  stopped: boolean
}

interface Thread {
  readonly worker: Worker
  /** The records its running task has read, which the thread writes as it goes. */
  readonly progress: Float64Array
  /** Shared with the thread (`ThreadControl`): the task it runs now, and those it holds that it must not start. */
  readonly control: Int32Array
  /**
   * The local dir of the last inputs it was sent, which it uses for tasks sent without inputs (with their object
   * store, the same for every task of an executor).
   */
  localDir: string | undefined
  /** The tasks it holds, in the order it runs them. */
  readonly held: Array<Given>
  /** Tasks given to it this turn, posted together at its end. */
  unposted: Array<ToThread>
}

// Sent without inputs when it reads nothing but its plan and the thread was sent the same local dir before: a
// structured clone of the inputs per task is a good part of what a small task costs.
const messageOf = (given: Given, thread: Thread): ToThread => {
  const { inputs, taskId, task, info } = given
  const plain = inputs.shuffleInputs.length === 0 && inputs.cached.length === 0 && inputs.broadcasts === undefined &&
    inputs.metrics === undefined && thread.localDir === inputs.localDir
  thread.localDir = inputs.localDir
  return plain ? { taskId, task, info } : { taskId, task, info, inputs }
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
    // Tasks no thread holds yet, oldest first.
    const waiting: Array<Given> = []
    let closed = false
    // Whether the last task that ended was short: then each thread holds more.
    let short = false

    // Tasks are posted at the end of the turn they were given in, each thread's in one message: a post wakes the
    // thread, and a batch of launches then costs one wake per thread, not one per task. The bytes are copied
    // into the message, not handed over: they are kept here until the task is over, to post again if need be.
    let flushing = false
    const flush = () => {
      flushing = false
      for (const thread of threads) {
        if (thread.unposted.length === 0) continue
        const batch = thread.unposted
        thread.unposted = []
        thread.worker.postMessage(batch)
      }
    }
    const give = (thread: Thread, given: Given) => {
      thread.held.push(given)
      thread.unposted.push(messageOf(given, thread))
      if (!flushing) {
        flushing = true
        queueMicrotask(flush)
      }
    }
    // Hands waiting tasks to the threads that hold fewest, so that an idle thread gets the next one first; with
    // none waiting, an idle thread takes over some that a busy one holds.
    const dispatch = () => {
      const limit = short ? heldPerThread.short : heldPerThread.long
      while (waiting.length > 0) {
        let least: Thread | undefined
        for (const thread of threads) {
          if (least === undefined || thread.held.length < least.held.length) least = thread
        }
        if (least === undefined || least.held.length >= limit) return
        give(least, waiting.shift()!)
      }
      for (const thread of threads) {
        if (liveHeld(thread) > 0) continue
        for (const given of takeOver(thread, limit - thread.held.length)) give(thread, given)
      }
    }

    // The tasks a thread holds that are not stopped (it has yet to pass the stopped ones).
    const liveHeld = (thread: Thread) => thread.held.reduce((live, given) => live + (given.stopped ? 0 : 1), 0)
    // Short tasks held behind a long one would wait for it while `idle` has nothing to do: the back half (at most
    // `room`) of what the busiest other thread holds and has not started moves to `idle`. Each is marked on the
    // thread it leaves, which passes it by as a stopped one (the pool holds a stand-in there until it has). One
    // that thread has started already stays.
    const takeOver = (idle: Thread, room: number): Array<Given> => {
      let busiest: Thread | undefined
      for (const thread of threads) {
        if (thread !== idle && (busiest === undefined || liveHeld(thread) > liveHeld(busiest))) busiest = thread
      }
      const taken: Array<Given> = []
      if (busiest === undefined) return taken
      for (let count = Math.min(room, Math.floor(liveHeld(busiest) / 2)); count > 0; count--) {
        let at = busiest.held.length - 1
        while (busiest.held[at]!.stopped) at--
        const given = busiest.held[at]!
        if (!ThreadControl.skip(busiest.control, given.taskId)) {
          // It runs already; if the thread saw the mark all the same, it passes the task by, which then waits again.
          ThreadControl.forget(busiest.control, given.taskId)
          break
        }
        busiest.held[at] = { ...given, stopped: true }
        taken.unshift(given)
      }
      return taken
    }

    // A task a thread held has ended: it is told, unless it was stopped.
    const told = (thread: Thread, end: End) => {
      const at = thread.held.findIndex((given) => given.taskId === end.taskId)
      if (at < 0) return
      const [given] = thread.held.splice(at, 1)
      // One stopped after it was over, before the thread saw its mark, leaves no mark behind.
      if (given!.stopped) return ThreadControl.forget(thread.control, end.taskId)
      // Passed by on a mark the pool took back (it found the task running as it tried to take it over): it waits
      // again, first in line.
      if (end._tag === "Skipped") return void waiting.unshift(given!)
      short = end.runMillis < shortTaskMillis
      given!.done(Exit.succeed({ outcome: end.outcome, succeeded: end.succeeded, stored: end.stored }))
    }

    // A thread ready for work, or the reason it could not start.
    const startThread = (): Effect.Effect<Thread, ThreadStartFailed> =>
      Effect.async<Thread, ThreadStartFailed>((resume) => {
        const progress = new SharedArrayBuffer(Float64Array.BYTES_PER_ELEMENT)
        const control = ThreadControl.make(heldPerThread.short)
        const worker = spawn(options.appUrl, progress, control)
        const thread: Thread = {
          worker,
          progress: new Float64Array(progress),
          control: new Int32Array(control),
          localDir: undefined,
          held: [],
          unposted: []
        }
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
            case "Ended":
              for (const end of message.ends) told(thread, end)
              return dispatch()
          }
        })
        // A thread that dies fails the task it ran, whose fault that is (it ran out of memory, or exited); the
        // ones it held and had not started wait for another thread, first in line — as do short ones it ran but
        // had not yet told the end of, which run again.
        const ended = (reason: string) => {
          const live = threads.delete(thread)
          if (!ready) {
            const failure = { className: "Error", message: reason, stack: reason }
            return resume(Effect.fail(new ThreadStartFailed({ failure })))
          }
          const running = ThreadControl.running(thread.control)
          const held = thread.held.splice(0).filter((given) => !given.stopped)
          waiting.unshift(...held.filter((given) => given.taskId !== running))
          held.find((given) => given.taskId === running)?.done(Exit.fail(new ThreadDied({ reason })))
          // A thread ended by a stop was replaced already.
          if (!closed && live) replace()
          dispatch()
        }
        let lastError: string | undefined
        worker.on("error", (error) => {
          lastError = error.stack ?? error.message
        })
        worker.on("exit", (code) => ended(lastError ?? `the task thread exited with code ${code}`))
      })

    // A thread lost under a task is replaced in the background; until the new one is ready, its tasks wait.
    const replace = () =>
      Effect.runFork(
        startThread().pipe(
          Effect.tap(() => Effect.sync(dispatch)),
          Effect.ignore
        )
      )

    yield* Effect.addFinalizer(() =>
      Effect.promise(() => {
        closed = true
        return Promise.all([...threads].map((thread) => thread.worker.terminate()))
      })
    )
    // Each thread takes tasks the moment it is ready; a thread that cannot start fails `started`.
    const starting = yield* Effect.forkScoped(
      Effect.all(
        Array.from({ length: options.size }, () => Effect.tap(startThread(), () => Effect.sync(dispatch))),
        { concurrency: "unbounded", discard: true }
      )
    )

    const start: TaskThreads["start"] = (task, info, inputs, done) => {
      // The task's bytes are most often a view into the frame they came in, which a post would copy whole: it
      // keeps a copy of its own.
      const own = task.byteOffset === 0 && task.byteLength === task.buffer.byteLength ? task : task.slice()
      const given: Given = { taskId: info.taskAttemptId, task: own, info, inputs, done, stopped: false }
      waiting.push(given)
      dispatch()
      return () => stop(given)
    }

    // A task not yet given to a thread is dropped; one a thread holds but has not started is marked so that the
    // thread passes it by (posted all the same if it was not yet: the tasks posted after it may count on the
    // inputs it carries), and held until it has; one it runs can only be stopped by ending the thread (a task
    // stuck in a loop cannot be stopped any other way), which fails nothing else: what it held goes to another
    // thread.
    const stop = (given: Given) => {
      const at = waiting.indexOf(given)
      if (at >= 0) {
        waiting.splice(at, 1)
        return
      }
      for (const thread of threads) {
        if (!thread.held.includes(given) || given.stopped) continue
        if (ThreadControl.skip(thread.control, given.taskId)) {
          given.stopped = true
          return
        }
        // Given nothing more from now on, and replaced at once; what else it holds goes to another thread once
        // it has ended.
        thread.held.splice(thread.held.indexOf(given), 1)
        threads.delete(thread)
        void thread.worker.terminate()
        replace()
        return
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
        if (ThreadControl.running(thread.control) === taskId) return { recordsRead: thread.progress[0]! }
      }
      return undefined
    }

    return { start, afterEnds, size: options.size, started: Fiber.join(starting), progress }
  })
