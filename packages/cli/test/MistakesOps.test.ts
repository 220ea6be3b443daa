// Operators' and newcomers' mistakes (issue #42), each a real `kindling submit` of a small app: it ends within the
// bound, with the exit code it should, and the first line of stderr says what is wrong.
import { assert, describe, it } from "@effect/vitest"
import { Deadlines } from "@kindling/protocol/testing"
import { Effect } from "effect"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { freePort, start, temporaryDirectory } from "./fixtures/cluster.js"
import { bound, mistakesDir, submitMistake } from "./fixtures/mistakes.js"
import { asRoot, fullDirectory, readOnlyDirectory } from "./fixtures/mounts.js"

// Room for the runner's bound and the process's start.
const timeout = Deadlines.scaled(bound + 15_000)

describe("mistakes: operations", () => {
  describe("output that cannot be written fails the save with OutputNotWritable, before any task runs", () => {
    it.live("under /proc (where Node's recursive mkdir loops for ever)", () =>
      Effect.gen(function*() {
        const out = yield* submitMistake("save-text.ts", [`/proc/kindling-mistakes-${process.pid}/out`])
        assert.strictEqual(out.code, 1, out.stderr)
        assert.strictEqual(
          out.firstLine,
          `OutputNotWritable: Output directory /proc/kindling-mistakes-${process.pid}/out cannot be written: ` +
            `ENOENT: no directory can be made in /proc, mkdir '/proc/kindling-mistakes-${process.pid}'`
        )
      }), timeout)

    it.scopedLive("under a file", () =>
      Effect.gen(function*() {
        const dir = yield* temporaryDirectory
        Fs.writeFileSync(Path.join(dir, "file"), "")
        const out = yield* submitMistake("save-text.ts", [Path.join(dir, "file", "out")])
        assert.strictEqual(out.code, 1, out.stderr)
        assert.match(out.firstLine, /^OutputNotWritable: Output directory .*\/file\/out cannot be written: ENOTDIR: /)
      }), timeout)

    it.scopedLive.skipIf(!asRoot)(
      "on a read-only file system (skipped unless root: it mounts one)",
      () =>
        Effect.gen(function*() {
          const dir = yield* readOnlyDirectory
          const out = yield* submitMistake("save-text.ts", [Path.join(dir, "out")])
          assert.strictEqual(out.code, 1, out.stderr)
          assert.strictEqual(
            out.firstLine,
            `OutputNotWritable: Output directory ${dir}/out cannot be written: EROFS: read-only file system, ` +
              `mkdir '${dir}/out'`
          )
        }),
      timeout
    )

    it.scopedLive.skipIf(!asRoot)(
      "on a full disk, leaving nothing behind (skipped unless root: it mounts one)",
      () =>
        Effect.gen(function*() {
          const dir = yield* fullDirectory
          const out = yield* submitMistake("save-text.ts", [Path.join(dir, "out")])
          assert.strictEqual(out.code, 1, out.stderr)
          assert.match(
            out.firstLine,
            /^OutputNotWritable: Output directory .*\/full\/out cannot be written: ENOSPC: no space left on device, /
          )
          // The same save can run again once there is room: it made nothing that would be in its way.
          assert.deepStrictEqual(Fs.readdirSync(dir), ["fill"])
        }),
      timeout
    )
  })

  it.live(
    "client mode against a master nobody listens on fails in seconds, saying no master is reachable",
    () =>
      Effect.gen(function*() {
        const port = yield* freePort
        const out = yield* submitMistake("count.ts", [], ["--master", `kindling://127.0.0.1:${port}`])
        assert.strictEqual(out.code, 1, out.stderr)
        assert.match(
          out.firstLine,
          new RegExp(
            `WARN  No master at kindling://127\\.0\\.0\\.1:${port} \\(Cannot connect to 127\\.0\\.0\\.1:${port}: `
          )
        )
        assert.include(out.stderr, `\nJobFailed: No master reachable at kindling://127.0.0.1:${port}: Cannot connect`)
        // No connection was made, so none was lost; and no cluster UI would tell more.
        assert.notMatch(out.stderr, / lost|Initial job has not accepted/)
      }),
    timeout
  )

  it.scopedLive(
    "a file the driver reads that never answers (a FIFO) fails the read after kindling.driver.fileTimeout",
    () =>
      Effect.gen(function*() {
        const dir = yield* temporaryDirectory
        const fifo = Path.join(dir, "data.parquet")
        ChildProcess.execFileSync("mkfifo", [fifo])
        const app = yield* start([
          "submit",
          "--log-level",
          "warning",
          "--master",
          "local[2]",
          "--conf",
          "kindling.driver.fileTimeout=2s",
          Path.join(mistakesDir, "count-parquet.ts"),
          fifo
        ])
        // Opening a FIFO to read waits for a writer. The driver's thread does not: its read fails in 2 s.
        yield* app.waitFor(/\n/, bound)
        assert.strictEqual(
          app.output().split("\n")[0],
          `InputNotReadable: Input path ${fifo} cannot be read: ETIMEDOUT: the file system did not answer within 2 s, ` +
            `open '${fifo}'`
        )
        // Its file thread still waits in the system, which Node cannot stop: the command says so, and ends once a
        // writer comes.
        yield* app.waitFor(/the process ends once the system answers open '.*data\.parquet'/, bound)
        Fs.closeSync(Fs.openSync(fifo, Fs.constants.O_WRONLY | Fs.constants.O_NONBLOCK))
        assert.strictEqual(yield* app.exited.pipe(Effect.timeout(Deadlines.scaled(bound))), 1)
      }),
    timeout
  )

  it.live(
    "a misspelt --conf key is refused on one line naming the key it most likely meant",
    () =>
      Effect.gen(function*() {
        const out = yield* submitMistake("count.ts", [], ["--conf", "kindling.default.paralelism=2"])
        assert.strictEqual(out.code, 1, out.stderr)
        assert.strictEqual(
          out.firstLine,
          "kindling: Invalid configuration: --conf: kindling.default.paralelism is not a Kindling configuration key " +
            "(did you mean kindling.default.parallelism?)"
        )
      }),
    timeout
  )

  it.live(
    "kindling.default.parallelism sets the partitions of sources and shuffles given no count, as Spark's",
    () =>
      Effect.gen(function*() {
        // Without it, Spark's transitive closure doubles its partitions every round (its union adds those of the
        // join, and distinct keeps them all).
        const unset = yield* submitMistake("parallelism.ts")
        assert.strictEqual(unset.code, 0, unset.stderr)
        assert.deepStrictEqual(JSON.parse(unset.stdout), {
          source: 2,
          reduceByKey: 2,
          join: 2,
          rounds: [4, 8, 16],
          paths: 10
        })
        const set = yield* submitMistake("parallelism.ts", [], ["--conf", "kindling.default.parallelism=3"])
        assert.strictEqual(set.code, 0, set.stderr)
        assert.strictEqual(set.stderr, "")
        assert.deepStrictEqual(JSON.parse(set.stdout), {
          source: 3,
          reduceByKey: 3,
          join: 3,
          rounds: [3, 3, 3],
          paths: 10
        })
      }),
    timeout * 2
  )
})
