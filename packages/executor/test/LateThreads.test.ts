// A task runner usable before it is made: what it is given meanwhile goes to the runner, in order, once it is
// made; what is stopped meanwhile never does; a runner that cannot be made says why.
import { assert, describe, it } from "@effect/vitest"
import { LateThreads, type TaskContext, type TaskThreads } from "@kindling/executor"
import { Data, Deferred, Effect, Exit } from "effect"
import { info } from "./fixtures/taskInfo.js"

const inputs = {} as TaskContext.Inputs
const task = new Uint8Array([1])

// A runner that notes what it is given and stopped, and ends each task it is given at once.
const recording = () => {
  const started: Array<number> = []
  const stopped: Array<number> = []
  const runner: TaskThreads.TaskThreads = {
    size: 2,
    start: (_task, info, _inputs, done) => {
      started.push(info.taskAttemptId)
      done(Exit.succeed({ outcome: new Uint8Array(), succeeded: true, stored: [] }))
      return () => void stopped.push(info.taskAttemptId)
    },
    afterEnds: (f) => f(),
    started: Effect.void,
    progress: (taskId) => ({ recordsRead: taskId })
  }
  return { runner, started, stopped }
}

class Unfetched extends Data.TaggedError("Unfetched")<{}> {}

describe("LateThreads", () => {
  it.scoped("hands what it was given before the runner was made to it in order, without what was stopped", () =>
    Effect.gen(function*() {
      const { runner, started, stopped } = recording()
      const gate = yield* Deferred.make<void>()
      const late = yield* LateThreads.make(2, Effect.as(Deferred.await(gate), runner))
      const ended: Array<number> = []
      const given = [1, 2, 3].map((id) => late.threads.start(task, info(id), inputs, () => void ended.push(id)))
      given[1]!()
      assert.strictEqual(late.threads.progress(1), undefined)
      assert.deepStrictEqual(started, [])
      yield* Deferred.succeed(gate, undefined)
      assert.strictEqual(yield* late.made, runner)
      assert.deepStrictEqual(started, [1, 3])
      assert.deepStrictEqual(ended, [1, 3])
      // Once made, it is the runner's: its stops, its progress, and what is given from now on.
      given[2]!()
      late.threads.start(task, info(4), inputs, () => void ended.push(4))
      assert.deepStrictEqual(stopped, [3])
      assert.deepStrictEqual(started, [1, 3, 4])
      assert.deepStrictEqual(late.threads.progress(4), { recordsRead: 4 })
      yield* late.threads.started
    }))

  it.scoped("fails its start, and says why, when the runner cannot be made", () =>
    Effect.gen(function*() {
      const late = yield* LateThreads.make(1, Effect.fail(new Unfetched()))
      const ended: Array<number> = []
      late.threads.start(task, info(1), inputs, () => void ended.push(1))
      assert.strictEqual((yield* Effect.flip(late.made))._tag, "Unfetched")
      const failed = yield* Effect.flip(late.threads.started)
      assert.strictEqual(failed._tag, "ThreadStartFailed")
      assert.include(failed.message, "Unfetched")
      assert.deepStrictEqual(ended, [])
    }))
})
