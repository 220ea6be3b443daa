// A defect in a master's or a worker's core — injected by wrapping the core (`Shell.CoreWrapper`), on a real node
// over TCP in this process — fail-stops the node: `kindling master` and `kindling worker` end with exit code 70
// (its supervisor restarts it, or a standby takes over), with the stack in the log, and a stopped master answers
// nothing more. (The driver's defect is tested in @kindling/driver and in the simulated cluster.)
import { assert, describe, it } from "@effect/vitest"
import { Defects } from "@kindling/kernel/testing"
import { Deadlines } from "@kindling/protocol/testing"
import { Effect, Fiber, Option } from "effect"
import * as MasterCommand from "../src/MasterCommand.js"
import * as WorkerCommand from "../src/WorkerCommand.js"
import { fastConf, freePort, masterState, run, startMaster, temporaryDirectory } from "./fixtures/cluster.js"

// `--conf k=v` pairs from the fixtures' flags, as the commands' arguments take them.
const conf = (flags: ReadonlyArray<string>) => flags.filter((_, i) => i % 2 === 1)

describe("a role whose core fails", () => {
  it.live("kindling master exits 70 when its core throws, and answers nothing more", () =>
    Effect.gen(function*() {
      const port = yield* freePort
      const master = yield* Effect.fork(
        MasterCommand.run({
          host: Option.some("127.0.0.1"),
          port,
          webuiPort: Option.some(0),
          propertiesFile: Option.none(),
          conf: conf(fastConf)
        }).pipe(Defects.injected("Master", (tag) => tag === "RequestMasterState"))
      )
      const url = `kindling://127.0.0.1:${port}`
      // The status asks for the master's state: the master fails on it, and the asker is told in one line.
      const status = yield* Effect.retry(
        run(["status", "--master", url]).pipe(
          Effect.filterOrFail((result) => !/ECONNREFUSED|connection refused/i.test(result.stderr), () => "not up yet")
        ),
        { times: 20 }
      )
      assert.notStrictEqual(status.code, 0)
      assert.include(status.stdout + status.stderr, "internal error", JSON.stringify(status))
      assert.strictEqual(yield* Fiber.join(master), 70)
      // Stopped, it is gone: nothing answers at its address.
      assert.notStrictEqual((yield* run(["status", "--master", url])).code, 0)
    }), Deadlines.scaled(60_000))

  it.scopedLive(
    "kindling worker exits 70 when its core throws; its master then drops it",
    () =>
      Effect.gen(function*() {
        const master = yield* startMaster()
        const dir = yield* temporaryDirectory
        const code = yield* WorkerCommand.run({
          master: master.url,
          cores: Option.some(1),
          memory: Option.some("512m"),
          workDir: Option.some(dir),
          host: Option.some("127.0.0.1"),
          port: 0,
          webuiPort: Option.some(0),
          propertiesFile: Option.none(),
          conf: conf(fastConf)
        }).pipe(Defects.injected("Worker", (tag) => tag === "RegisteredWorker"))
        assert.strictEqual(code, 70)
        yield* Effect.retry(
          masterState(master.url).pipe(
            Effect.filterOrFail(
              (state) => state.workers.every((worker) => worker.state === "DEAD"),
              () => "still alive"
            )
          ),
          { times: 40, schedule: undefined }
        )
        assert.match(master.node.output(), /Removing worker|lost|DEAD/i)
      }),
    Deadlines.scaled(60_000)
  )
})
