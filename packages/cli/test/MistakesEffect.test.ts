// The mistakes suite, Effect's part (issue #42): what a newcomer to Effect gets wrong — a forgotten `yield*`, an
// Effect or a handle of the driver's process where a value must travel — and what a failure reads like. Each is a
// real `kindling submit` of a small app of `fixtures/mistakes/`, in local[2]: the exit code, and the first line of
// stderr naming the mistake, within a bound (`submitMistake`).
import { assert, describe, it } from "@effect/vitest"
import { Deadlines } from "@kindling/protocol/testing"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { cluster, run, submitArgs, temporaryDirectory } from "./fixtures/cluster.js"
import { bound, mistakesDir, submitMistake } from "./fixtures/mistakes.js"

// Each test's own limit, past the bound at which a run is killed (a hang): the test then fails on what it asserts,
// with the run's output, rather than on its limit.
const timeout = Deadlines.scaled(bound * 2)

// The frames of Kindling's own code, effect's and Node's: a summary shows the app's only.
const internalFrame = /^\s+at .*(taskThread\.js|node_modules|packages\/\w+\/(dist|src)|node:internal)/m

describe("mistakes with Effects", () => {
  it.scopedLive(
    "a forgotten `yield*` on saveAsTextFile: nothing is written, and the action is named",
    () =>
      Effect.gen(function*() {
        const output = Path.join(yield* temporaryDirectory, "squares")
        const result = yield* submitMistake("forgotten-yield-save.ts", [output])
        assert.strictEqual(result.code, 0, result.stderr)
        assert.match(result.firstLine, /WARN\s+The action saveAsTextFile at forgotten-yield-save\.ts:9 never ran/)
        assert.include(result.firstLine, "did you forget `yield*`?")
        assert.isFalse(Fs.existsSync(output))
      }),
    timeout
  )

  it.scopedLive("a forgotten `yield*` on count(): no output, and the action is named", () =>
    Effect.gen(function*() {
      const result = yield* submitMistake("forgotten-yield-count.ts")
      assert.strictEqual(result.code, 0, result.stderr)
      assert.strictEqual(result.stdout, "")
      assert.match(result.firstLine, /WARN\s+The action count at forgotten-yield-count\.ts:9 never ran/)
      assert.include(result.firstLine, "did you forget `yield*`?")
    }), timeout)

  it.scopedLive(
    "an Effect captured by a function that runs on executors is refused: a forgotten `yield*`",
    () =>
      Effect.gen(function*() {
        const result = yield* submitMistake("captured-effect.ts")
        assert.strictEqual(result.code, 1, result.stderr)
        assert.match(
          result.firstLine,
          /^ValueCannotTravel: The function given to map needs `total`, which is an Effect/
        )
        assert.include(result.firstLine, "did you forget `yield*` where it is made (`const total = yield* …`)?")
        assert.notInclude(result.stderr, "register")
        assert.notMatch(result.stderr, internalFrame)
        assert.include(result.stderr, "captured-effect.ts:10")
      }),
    timeout
  )

  it.scopedLive(
    "an Effect in the environment argument is refused, named by its place there",
    () =>
      Effect.gen(function*() {
        const result = yield* submitMistake("env-effect.ts")
        assert.strictEqual(result.code, 1, result.stderr)
        assert.match(
          result.firstLine,
          /^ValueCannotTravel: The function given to map needs `env\.highest`, which is an Effect/
        )
        assert.include(result.firstLine, "did you forget `yield*`")
        assert.notInclude(result.stderr, "register")
      }),
    timeout
  )

  it.scopedLive(
    "records that are Effects (returned from map) fail the job: a forgotten `yield*`, not a class",
    () =>
      Effect.gen(function*() {
        const result = yield* submitMistake("record-effect.ts")
        assert.strictEqual(result.code, 1, result.stderr)
        assert.match(
          result.firstLine,
          /^JobFailed: Job aborted due to stage failure: .*CannotTravel: A record returned/
        )
        assert.include(result.firstLine, "by the function given to map is an Effect")
        assert.include(result.firstLine, "did you forget `yield*`?")
        assert.notInclude(result.stderr, "register")
      }),
    timeout
  )

  for (
    const [file, variable, kind] of [
      ["captured-socket.ts", "metrics", "Socket"],
      ["captured-timer.ts", "heartbeat", "Timeout"],
      ["captured-stream.ts", "log", "WriteStream"],
      ["captured-worker.ts", "helper", "Worker"]
    ] as const
  ) {
    it.scopedLive(
      `a captured ${kind} cannot travel, and is not taken for a class to register`,
      () =>
        Effect.gen(function*() {
          const result = yield* submitMistake(file, [yield* temporaryDirectory])
          assert.strictEqual(result.code, 1, result.stderr)
          assert.include(
            result.firstLine,
            `ValueCannotTravel: The function given to ${file === "captured-timer.ts" ? "map" : "foreach"} needs ` +
              `\`${variable}\`, which cannot travel: it is a ${kind}, a handle on something open in this process`
          )
          assert.notInclude(result.stderr, "registerClass")
        }),
      timeout
    )
  }

  it.scopedLive(
    "a user's throw in map: the first line is the user's error, the frames are the app's",
    () =>
      Effect.gen(function*() {
        const result = yield* submitMistake("throws-in-map.ts")
        assert.strictEqual(result.code, 1, result.stderr)
        assert.match(result.firstLine, /^JobFailed: Job aborted due to stage failure: .*: Error: not a price: three$/)
        assert.notMatch(result.stderr, internalFrame)
        assert.match(result.stderr, /^\s+at parsePrice \(.*throws-in-map\.ts:7:\d+\)$/m)
        // Told once, in the summary: the task's loss that aborted the job is not told again beside it.
        assert.strictEqual(result.stderr.split("not a price: three").length - 1, 1, result.stderr)
      }),
    timeout
  )

  it.live(
    "at --log-level debug, the summary keeps every frame, and the log each lost task's whole trace",
    () =>
      Effect.gen(function*() {
        const result = yield* run([
          "submit",
          "--log-level",
          "debug",
          "--master",
          "local[2]",
          "--conf",
          "kindling.ui.enabled=false",
          Path.join(mistakesDir, "throws-in-map.ts")
        ])
        assert.strictEqual(result.code, 1, result.stderr)
        const summary = result.stderr.slice(result.stderr.lastIndexOf("\nJobFailed: "))
        assert.match(summary, /^\s+at parsePrice \(.*throws-in-map\.ts:7:\d+\)$/m)
        assert.match(summary, internalFrame)
        assert.match(
          result.stderr,
          /DEBUG Lost task 1\.0 in stage 0\.0 .*: Error: not a price: three\n\s+at parsePrice/
        )
      }),
    timeout
  )

  it.scopedLive(
    "a malformed CSV line in FAILFAST mode: one summary, without Kindling's frames",
    () =>
      Effect.gen(function*() {
        const result = yield* submitMistake("malformed-csv.ts", [Path.join(mistakesDir, "malformed.csv")])
        assert.strictEqual(result.code, 1, result.stderr)
        assert.include(
          result.firstLine,
          `MalformedRecord: Malformed record in ${Path.join(mistakesDir, "malformed.csv")} at line 3: cannot read ` +
            `"lots" as int (field "amount")`
        )
        assert.strictEqual(result.stderr.split("MalformedRecord").length - 1, 1, result.stderr)
        assert.notMatch(result.stderr, internalFrame)
        assert.strictEqual(result.stderr.trim().split("\n").length, 1, result.stderr)
      }),
    timeout
  )

  it.scopedLive("a main that throws before it returns its Effect: its error, first", () =>
    Effect.gen(function*() {
      const result = yield* submitMistake("main-throws.ts")
      assert.strictEqual(result.code, 1, result.stderr)
      assert.strictEqual(result.firstLine, "Error: usage: main-throws.ts INPUT")
      assert.notMatch(result.stderr, internalFrame)
    }), timeout)

  it.scopedLive("a main that fails with a typed error: the error, first and alone", () =>
    Effect.gen(function*() {
      const result = yield* submitMistake("main-typed-error.ts")
      assert.strictEqual(result.code, 1, result.stderr)
      assert.strictEqual(result.stderr, "SettingMissing: the setting input is missing\n")
    }), timeout)

  it.scopedLive(
    "--check refuses an app with an Effect never run, naming where, and submits nothing",
    () =>
      Effect.gen(function*() {
        const output = Path.join(yield* temporaryDirectory, "squares")
        const result = yield* submitMistake("forgotten-yield-save.ts", [output], ["--check"])
        assert.strictEqual(result.code, 1, result.stderr)
        assert.match(
          result.firstLine,
          /forgotten-yield-save\.ts:9:5 error effect\(floatingEffect\): This Effect value is neither yielded/
        )
        assert.include(result.stderr, "forgotten-yield-save.ts was not submitted: 1 error above")
        assert.isFalse(Fs.existsSync(output))
      }),
    timeout
  )

  it.scopedLive("--check passes a correct app, which then runs", () =>
    Effect.gen(function*() {
      const result = yield* submitMistake("correct.ts", [], ["--check"])
      assert.strictEqual(result.code, 0, result.stderr)
      assert.strictEqual(result.stderr, "")
      assert.strictEqual(result.stdout, "2 to, 2 be\n")
    }), timeout)
})

describe("a cluster-mode driver's failure", () => {
  it.scopedLive("carries its error line, as `submit --wait` and `status` report it", () =>
    Effect.gen(function*() {
      const { master } = yield* cluster(1)
      const app = Path.join(mistakesDir, "throws-in-map.ts")
      const submitted = yield* run([
        ...submitArgs(master.url, "--conf", "kindling.driver.host=127.0.0.1"),
        "--wait",
        app
      ])
      assert.strictEqual(submitted.code, 1, submitted.stderr)
      const [driverId] = submitted.stdout.trim().split("\n")
      const reported = submitted.stderr.split("\n").find((line) => line.startsWith(`kindling: ${driverId} FAILED`))
      assert.match(reported ?? "", /The driver exited with code 1: JobFailed: .*Error: not a price: three$/)
      assert.notMatch(submitted.stderr, internalFrame)
      const status = yield* run(["status", "--master", master.url, driverId!])
      const exception = JSON.parse(status.stdout).exception as { readonly message: string }
      const [first, ...frames] = exception.message.split("\n")
      assert.match(first!, /^The driver exited with code 1: JobFailed: .*Error: not a price: three$/)
      assert.deepStrictEqual(frames.map((frame) => frame.trim().split(" (")[0]), ["at parsePrice", "at <anonymous>"])
    }), Deadlines.scaled(90_000))
})
