import { assert, describe, it } from "@effect/vitest"
import { Ids, States } from "@kindling/protocol"

describe("States", () => {
  it("has Spark's values in declaration order", () => {
    assert.deepStrictEqual(States.RecoveryState.literals, ["STANDBY", "ALIVE", "RECOVERING", "COMPLETING_RECOVERY"])
    assert.deepStrictEqual(States.WorkerState.literals, ["ALIVE", "DEAD", "DECOMMISSIONED", "UNKNOWN"])
    assert.deepStrictEqual(States.DriverState.literals, [
      "SUBMITTED",
      "RUNNING",
      "FINISHED",
      "RELAUNCHING",
      "UNKNOWN",
      "KILLED",
      "FAILED",
      "ERROR"
    ])
    assert.deepStrictEqual(States.ApplicationState.literals, [
      "WAITING",
      "RUNNING",
      "FINISHED",
      "FAILED",
      "KILLED",
      "UNKNOWN"
    ])
    assert.deepStrictEqual(States.ExecutorState.literals, [
      "LAUNCHING",
      "RUNNING",
      "KILLED",
      "FAILED",
      "LOST",
      "EXITED",
      "DECOMMISSIONED"
    ])
    assert.deepStrictEqual(States.TaskState.literals, ["LAUNCHING", "RUNNING", "FINISHED", "FAILED", "KILLED", "LOST"])
  })

  it("knows which states are finished", () => {
    const finished = <A extends string>(values: ReadonlyArray<A>, is: (a: A) => boolean) => values.filter(is)
    assert.deepStrictEqual(finished(States.ExecutorState.literals, States.isExecutorFinished), [
      "KILLED",
      "FAILED",
      "LOST",
      "EXITED"
    ])
    assert.deepStrictEqual(finished(States.ApplicationState.literals, States.isApplicationFinished), [
      "FINISHED",
      "FAILED",
      "KILLED",
      "UNKNOWN"
    ])
    assert.deepStrictEqual(finished(States.TaskState.literals, States.isTaskFinished), [
      "FINISHED",
      "FAILED",
      "KILLED",
      "LOST"
    ])
    assert.deepStrictEqual(finished(States.TaskState.literals, States.isTaskFailed), ["FAILED", "LOST"])
    assert.deepStrictEqual(finished(States.DriverState.literals, States.isDriverReportable), [
      "FINISHED",
      "KILLED",
      "FAILED",
      "ERROR"
    ])
    assert.deepStrictEqual(finished(States.WorkerState.literals, States.isWorkerFinished), ["DEAD"])
  })
})

describe("Ids", () => {
  it("formats ids as Spark does", () => {
    const at = new Date(Date.UTC(2026, 0, 2, 3, 4, 5))
    assert.strictEqual(Ids.makeAppId(at, 7), "app-20260102030405-0007")
    assert.strictEqual(Ids.makeDriverId(at, 12345), "driver-20260102030405-12345")
    assert.strictEqual(Ids.makeWorkerId(at, "10.0.0.5", 41234), "worker-20260102030405-10.0.0.5-41234")
    assert.strictEqual(Ids.fullExecutorId(Ids.makeAppId(at, 0), 3), "app-20260102030405-0000/3")
  })
})
