import { assert, describe, it } from "@effect/vitest"
import { ConsoleProgress } from "@kindling/monitoring"
import { Effect, Stream } from "effect"

const stage = (stageId: number, completed: number, active: number, total: number, submittedAt = 0) => ({
  stageId,
  completed,
  active,
  total,
  submittedAt
})

describe("ConsoleProgress.render", () => {
  it("draws Spark's bar: header, = up to completed/total of the bar's width, >, spaces, (done + running) / total", () => {
    // 80 columns − "[Stage 0:" (9) − "(5 + 2) / 10]" (13) = 58 columns of bar, 29 of them done.
    assert.strictEqual(
      ConsoleProgress.render([stage(0, 5, 2, 10)], 1000, 80),
      `[Stage 0:${"=".repeat(29)}>${" ".repeat(28)}(5 + 2) / 10]`
    )
    assert.strictEqual(
      ConsoleProgress.render([stage(3, 42, 8, 100)], 1000, 44),
      "[Stage 3:========>           (42 + 8) / 100]"
    )
  })

  it("shows only stages older than 500 ms, at most three, side by side in equal shares", () => {
    assert.strictEqual(ConsoleProgress.render([stage(0, 0, 1, 4, 900)], 1000, 80), "")
    const line = ConsoleProgress.render(
      [stage(4, 1, 1, 2), stage(1, 0, 1, 2), stage(2, 2, 0, 2), stage(3, 0, 0, 2)],
      1000,
      90
    )
    assert.deepStrictEqual(line.match(/\[Stage \d/g), ["[Stage 1", "[Stage 2", "[Stage 3"])
    assert.strictEqual(line.length, 90)
  })

  it("draws no bar when the share is too narrow for one", () => {
    assert.strictEqual(ConsoleProgress.render([stage(7, 1, 2, 30)], 1000, 20), "[Stage 7:(1 + 2) / 30]")
  })
})

describe("ConsoleProgress.run", () => {
  it.scopedLive("follows the events, and wipes the bar when the job ends", () =>
    Effect.gen(function*() {
      const written: Array<string> = []
      const events = Stream.fromIterable(
        [
          { _tag: "JobStart", jobId: 0, stageIds: [0], stages: [], pool: "default", time: 0 },
          { _tag: "StageSubmitted", stageId: 0, stageAttempt: 0, name: "count", tasks: 4, parentIds: [], time: 0 },
          {
            _tag: "TaskStart",
            stageId: 0,
            stageAttempt: 0,
            taskId: 0,
            index: 0,
            executorId: "1",
            locality: "ANY",
            time: 0
          },
          {
            _tag: "TaskStart",
            stageId: 0,
            stageAttempt: 0,
            taskId: 1,
            index: 1,
            executorId: "1",
            locality: "ANY",
            time: 0
          },
          { _tag: "TaskEnd", stageId: 0, stageAttempt: 0, taskId: 0, succeeded: true, metrics: {}, time: 0 }
        ] as const
      ).pipe(
        Stream.concat(Stream.fromEffect(Effect.sleep("300 millis")).pipe(Stream.drain)),
        Stream.concat(
          Stream.make({ _tag: "JobEnd", jobId: 0, succeeded: true, time: 0 } as const)
        )
      )
      yield* ConsoleProgress.run({ events, write: (text) => written.push(text), width: () => 40, intervalMillis: 50 })
      yield* Effect.sleep("600 millis")
      // 40 − 9 − 12 = 19 columns of bar, a quarter of them (4) done.
      assert.include(written, `\r[Stage 0:====>${" ".repeat(14)}(1 + 1) / 4]\r`)
      assert.strictEqual(written.at(-1), `\r${" ".repeat(40)}\r`)
    }))
})
