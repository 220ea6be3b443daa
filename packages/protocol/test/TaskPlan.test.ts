import { assert, describe, it } from "@effect/vitest"
import { Records, TaskPlan } from "@kindling/protocol"
import { Arbitrary, FastCheck as fc, Schema } from "effect"

// Values the app puts in plans: records of JSON-like shapes (MessagePack's own types).
const value = fc.jsonValue({ maxDepth: 2 })

describe("TaskPlan", () => {
  it("every task, and every outcome, roundtrips through the records encoding and the schema", () => {
    const tasks = Arbitrary.make(TaskPlan.Task)
    const outcomes = Arbitrary.make(TaskPlan.TaskOutcome)
    fc.assert(
      fc.property(tasks, outcomes, value, (task, outcome, record) => {
        const encodedTask = Schema.encodeSync(TaskPlan.Task)(task)
        const back = Schema.decodeUnknownSync(TaskPlan.Task)(Records.decode(Records.encode(encodedTask)))
        assert.deepStrictEqual(back, task)
        const encodedOutcome = Schema.encodeSync(TaskPlan.TaskOutcome)(outcome)
        assert.deepStrictEqual(
          Schema.decodeUnknownSync(TaskPlan.TaskOutcome)(Records.decode(Records.encode(encodedOutcome))),
          outcome
        )
        assert.deepStrictEqual(Records.decode(Records.encode(record)), record)
      }),
      { numRuns: 200 }
    )
  })

  it("records keep what JSON would lose: maps, sets, dates, big integers, undefined", () => {
    const record = { m: new Map([[1, "a"]]), s: new Set([2]), d: new Date(0), b: 2n ** 70n, u: undefined }
    assert.deepStrictEqual(Records.decode(Records.encode(record)), record)
  })
})
