import { assert, describe, it } from "@effect/vitest"
import { Supervision } from "@kindling/worker"
import { Option } from "effect"

describe("nextBackoff", () => {
  it("starts at the initial wait and doubles after each wait", () => {
    const waits: Array<number> = []
    let previous: number | undefined
    for (let i = 0; i < 6; i++) {
      previous = Supervision.nextBackoff(previous, 100, 1000)
      waits.push(previous)
    }
    assert.deepStrictEqual(waits, [1000, 2000, 4000, 8000, 16000, 32000])
  })

  it("starts over after a run longer than 5 seconds, not after one of exactly 5", () => {
    assert.strictEqual(Supervision.nextBackoff(8000, 5001, 1000), 1000)
    assert.strictEqual(Supervision.nextBackoff(8000, 5000, 1000), 16000)
    assert.strictEqual(Supervision.nextBackoff(undefined, 60_000, 50), 50)
  })
})

describe("exitCode", () => {
  it("is the code, or 128 plus the signal number", () => {
    assert.strictEqual(Supervision.exitCode({ code: 3, signal: null }), 3)
    assert.strictEqual(Supervision.exitCode({ code: null, signal: "SIGTERM" }), 143)
    assert.strictEqual(Supervision.exitCode({ code: null, signal: "SIGKILL" }), 137)
  })
})

describe("driverFinalState", () => {
  it("maps the exit code and the kill flag", () => {
    assert.strictEqual(Supervision.driverFinalState({ exitCode: 0, killed: false }), "FINISHED")
    assert.strictEqual(Supervision.driverFinalState({ exitCode: 0, killed: true }), "FINISHED")
    assert.strictEqual(Supervision.driverFinalState({ exitCode: 143, killed: true }), "KILLED")
    assert.strictEqual(Supervision.driverFinalState({ exitCode: undefined, killed: true }), "KILLED")
    assert.strictEqual(Supervision.driverFinalState({ exitCode: 1, killed: false }), "FAILED")
  })
})

describe("executorFinalState", () => {
  it("is EXITED with the code for any exit of its own, 0 included", () => {
    assert.deepStrictEqual(Supervision.executorFinalState(Supervision.ExecutorOutcome.Exited({ exitCode: 3 })), {
      state: "EXITED",
      message: Option.some("Command exited with code 3"),
      exitStatus: Option.some(3)
    })
    assert.deepStrictEqual(
      Supervision.executorFinalState(Supervision.ExecutorOutcome.Exited({ exitCode: 0 })).exitStatus,
      Option.some(0)
    )
  })

  it("is KILLED with the exit status of the terminated process", () => {
    assert.deepStrictEqual(
      Supervision.executorFinalState(Supervision.ExecutorOutcome.Killed({ exitCode: Option.some(143) })),
      { state: "KILLED", message: Option.none(), exitStatus: Option.some(143) }
    )
  })

  it("is FAILED with the text of a launch failure", () => {
    assert.deepStrictEqual(
      Supervision.executorFinalState(Supervision.ExecutorOutcome.LaunchFailed({ reason: "SpawnFailed: ENOENT" })),
      { state: "FAILED", message: Option.some("SpawnFailed: ENOENT"), exitStatus: Option.none() }
    )
  })
})

describe("substitute", () => {
  it("replaces every occurrence of each given placeholder", () => {
    assert.deepStrictEqual(
      Supervision.substitute(["--worker", "{{WORKER_URL}}", "{{APP_ID}}/{{EXECUTOR_ID}}/{{APP_ID}}", "plain"], {
        WORKER_URL: "kindling://Worker@h:1",
        APP_ID: "app-1",
        EXECUTOR_ID: "7"
      }),
      ["--worker", "kindling://Worker@h:1", "app-1/7/app-1", "plain"]
    )
  })

  it("leaves placeholders without a value and unknown ones as they are", () => {
    assert.deepStrictEqual(
      Supervision.substitute(["{{USER_JAR}}", "{{CORES}}", "{{NOPE}}", "{{constructor}}"], { USER_JAR: "/w/app.js" }),
      ["/w/app.js", "{{CORES}}", "{{NOPE}}", "{{constructor}}"]
    )
  })
})
