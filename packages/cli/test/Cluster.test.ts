import { assert, describe, it } from "@effect/vitest"
import { Persistence } from "@kindling/master"
import { Errors, Ids, QueryMessages } from "@kindling/protocol"
import { Deadlines } from "@kindling/protocol/testing"
import { MasterClient } from "@kindling/rpc"
import { Effect, Option } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import {
  activeDriver,
  app,
  clientNetwork,
  cluster,
  effectiveSecret,
  eventually,
  forever,
  isRunning,
  masterState,
  pidsIn,
  recoverableCluster,
  run,
  startMaster,
  startWorker,
  submitArgs,
  temporaryDirectory
} from "./fixtures/cluster.js"

const writes = `import { writeFileSync } from "node:fs"
export default (args) => { writeFileSync(args[0], "written by " + args.slice(1).join(" ")) }
`
const throws = `export default () => { throw new Error("the app failed on purpose") }
`
// Fails on its first two runs, then succeeds; the runs are counted in a file.
const flaky = `import { existsSync, readFileSync, writeFileSync } from "node:fs"
export default ([counter]) => {
  const runs = (existsSync(counter) ? Number(readFileSync(counter, "utf8")) : 0) + 1
  writeFileSync(counter, String(runs))
  if (runs < 3) throw new Error("run " + runs + " fails")
}
`

describe("a cluster of real processes on 127.0.0.1", () => {
  it.scopedLive("a driver that writes a file and returns ends FINISHED", () =>
    Effect.gen(function*() {
      const { dir, master } = yield* cluster()
      const out = Path.join(dir, "out.txt")
      const result = yield* run(
        submitArgs(master.url, "--wait", app(dir, "writes.mjs", writes), out, "the", "--driver")
      )
      assert.strictEqual(result.code, 0, result.stderr)
      assert.match(result.stdout, /^driver-\d{14}-0000\ndriver-\d{14}-0000 FINISHED\n$/)
      assert.strictEqual(Fs.readFileSync(out, "utf8"), "written by the --driver")
      const state = yield* masterState(master.url)
      assert.deepStrictEqual(state.completedDrivers.map((d) => d.state), ["FINISHED"])
    }), Deadlines.scaled(60_000))

  it.scopedLive("a driver that throws ends FAILED, with the error in its stderr", () =>
    Effect.gen(function*() {
      const { dir, master } = yield* cluster()
      const result = yield* run(submitArgs(master.url, "--wait", app(dir, "throws.mjs", throws)))
      assert.strictEqual(result.code, 1)
      const [driverId] = result.stdout.split("\n")
      assert.match(result.stdout, / FAILED\n$/)
      // The reason, from the end of the driver's stderr, is said by submit and carried by status.
      assert.include(result.stderr, `kindling: ${driverId} FAILED: The driver exited with code 1: `)
      assert.include(result.stderr, "the app failed on purpose")
      const status = yield* run(["status", "--master", master.url, driverId!])
      assert.strictEqual(status.code, 0)
      const json = JSON.parse(status.stdout) as {
        state: string
        workerId: string
        exception: { name: string; message: string } | null
      }
      assert.strictEqual(json.state, "FAILED")
      assert.strictEqual(json.exception?.name, "DriverFailed")
      assert.include(json.exception?.message, "the app failed on purpose")
      const stderr = ["worker-0", "worker-1"]
        .map((w) => Path.join(dir, w, driverId!, "stderr"))
        .filter((file) => Fs.existsSync(file))
        .map((file) => Fs.readFileSync(file, "utf8"))
      assert.strictEqual(stderr.length, 1)
      assert.include(stderr[0], "the app failed on purpose")
    }), Deadlines.scaled(60_000))

  it.scopedLive("a supervised driver failing twice is relaunched twice, then FINISHED", () =>
    Effect.gen(function*() {
      const { dir, master } = yield* cluster()
      const counter = Path.join(dir, "runs")
      const result = yield* run(submitArgs(master.url, "--supervise", "--wait", app(dir, "flaky.mjs", flaky), counter))
      assert.strictEqual(result.code, 0, result.stdout + result.stderr)
      assert.match(result.stdout, / FINISHED\n$/)
      assert.strictEqual(Fs.readFileSync(counter, "utf8"), "3")
    }), Deadlines.scaled(60_000))

  it.scopedLive("kill ends a running driver KILLED and its process", () =>
    Effect.gen(function*() {
      const { dir, master } = yield* cluster()
      const pids = Path.join(dir, "pids")
      const submitted = yield* run(submitArgs(master.url, app(dir, "forever.mjs", forever), pids))
      assert.strictEqual(submitted.code, 0, submitted.stderr)
      const driverId = submitted.stdout.trim()
      yield* eventually(master.url, (state) => activeDriver(driverId)(state)?.state === "RUNNING" || undefined)
      yield* eventually(master.url, () => pidsIn(pids).length === 1 || undefined)
      const killed = yield* run(["kill", "--master", master.url, driverId])
      assert.strictEqual(killed.code, 0, killed.stderr)
      assert.include(killed.stdout, `Kill request for ${driverId} submitted`)
      const final = yield* eventually(
        master.url,
        (state) => state.completedDrivers.find((d) => d.id === driverId)?.state
      )
      assert.strictEqual(final, "KILLED")
      assert.isFalse(isRunning(pidsIn(pids)[0]!))
    }), Deadlines.scaled(60_000))

  it.scopedLive("a worker stopped with SIGTERM stops its drivers first", () =>
    Effect.gen(function*() {
      const { dir, master, workers } = yield* cluster(1)
      const pids = Path.join(dir, "pids")
      yield* run(submitArgs(master.url, app(dir, "forever.mjs", forever), pids))
      yield* eventually(master.url, () => pidsIn(pids).length === 1 || undefined)
      yield* workers[0]!.node.kill("SIGTERM")
      yield* workers[0]!.node.exited
      assert.isFalse(isRunning(pidsIn(pids)[0]!), "the driver outlived its worker")
    }), Deadlines.scaled(60_000))

  it.scopedLive(
    "a worker SIGKILLed is DEAD after the timeout; its supervised driver moves to the other worker, and none of its processes is left",
    () =>
      Effect.gen(function*() {
        const { dir, master, workers } = yield* cluster()
        const pids = Path.join(dir, "pids")
        const submitted = yield* run(submitArgs(master.url, "--supervise", app(dir, "forever.mjs", forever), pids))
        const driverId = submitted.stdout.trim()
        const workerId = yield* eventually(master.url, (state) => {
          const driver = activeDriver(driverId)(state)
          return driver?.state === "RUNNING" ? Option.getOrUndefined(driver.workerId) : undefined
        })
        yield* eventually(master.url, () => pidsIn(pids).length === 1 || undefined)
        const victim = workers.find((w) => workerId.endsWith(`-${w.port}`))!
        const survivor = workers.find((w) => w !== victim)!
        yield* victim.node.kill("SIGKILL")

        const moved = yield* eventually(master.url, (state) => {
          const dead = state.workers.find((w) => w.id === workerId)?.state === "DEAD"
          const relaunched = state.activeDrivers.find((d) =>
            d.id !== driverId && d.state === "RUNNING" &&
            Option.getOrUndefined(d.workerId)?.endsWith(`-${survivor.port}`)
          )
          return dead && relaunched !== undefined ? { state, relaunched } : undefined
        })
        assert.strictEqual(moved.state.completedDrivers.find((d) => d.id === driverId)?.state, "RELAUNCHING")
        // The dead worker's driver exits by itself once its parent is gone (parent-watch).
        const [first] = pidsIn(pids)
        for (let i = 0; i < 100 && isRunning(first!); i++) yield* Effect.sleep("100 millis")
        assert.isFalse(isRunning(first!), "the dead worker's driver is still running")
        yield* eventually(master.url, () => pidsIn(pids).length === 2 || undefined)
      }),
    Deadlines.scaled(90_000)
  )

  it.scopedLive(
    "a master restarted on FILESYSTEM recovery gets its workers and running driver back, resubmitting nothing",
    () =>
      Effect.gen(function*() {
        const { dir, first, port, recovery, worker } = yield* recoverableCluster
        const pids = Path.join(dir, "pids")
        const submitted = yield* run(submitArgs(first.url, app(dir, "forever.mjs", forever), pids))
        const driverId = submitted.stdout.trim()
        yield* eventually(first.url, (state) => activeDriver(driverId)(state)?.state === "RUNNING" || undefined)
        yield* eventually(first.url, () => pidsIn(pids).length === 1 || undefined)

        yield* first.node.kill("SIGKILL")
        yield* first.node.exited
        const second = yield* startMaster(recovery, port)
        yield* second.node.waitFor(/New state: RECOVERING/)
        const recovered = yield* eventually(second.url, (state) =>
          state.status === "ALIVE" && state.workers.some((w) => w.state === "ALIVE") ? state : undefined)
        assert.deepStrictEqual(
          recovered.activeDrivers.map((d) => [d.id, d.state]),
          [[driverId, "RUNNING"]]
        )
        assert.deepStrictEqual(recovered.completedDrivers, [])
        assert.strictEqual(
          recovered.workers.filter((w) =>
            w.state === "ALIVE"
          ).length,
          1
        )
        assert.isTrue(Option.getOrThrow(recovered.activeDrivers[0]!.workerId).endsWith(`-${worker.port}`))
        // The same driver process, never restarted.
        assert.strictEqual(pidsIn(pids).length, 1)
        assert.isTrue(isRunning(pidsIn(pids)[0]!))
      }),
    Deadlines.scaled(90_000)
  )

  it.scopedLive(
    "an uploaded app outlives a master restart: a supervised driver relaunched afterwards fetches it from the new master",
    () =>
      Effect.gen(function*() {
        const { dir, first, port, recovery, worker } = yield* recoverableCluster
        const pids = Path.join(dir, "pids")
        const submitted = yield* run(
          submitArgs(
            first.url,
            "--supervise",
            "--conf",
            "kindling.driver.host=127.0.0.1",
            app(dir, "forever.mjs", forever),
            pids
          )
        )
        assert.strictEqual(submitted.code, 0, submitted.stderr)
        yield* eventually(first.url, () => pidsIn(pids).length === 1 || undefined)

        yield* first.node.kill("SIGKILL")
        yield* first.node.exited
        const second = yield* startMaster(recovery, port)
        yield* eventually(second.url, (state) => state.status === "ALIVE" || undefined)
        // The driver's worker dies; the driver goes to a worker that joined after the restart, which has the app
        // only from the new master (the submission's own copy is long gone).
        yield* startWorker(second.url, Path.join(dir, "worker-2"))
        yield* worker.node.kill("SIGKILL")
        // On a busy machine it may have been launched again before (the restarted master can give the old worker up
        // before it re-registers): what counts is the launch on the new worker, whatever the count of pids.
        const fetchedOnNewWorker = () =>
          Fs.readdirSync(Path.join(dir, "worker-2"))
            .filter((name) => name.startsWith("driver-"))
            .some((driverDir) => Fs.readdirSync(Path.join(dir, "worker-2", driverDir)).includes("forever.mjs"))
        yield* eventually(second.url, () => fetchedOnNewWorker() && pidsIn(pids).length >= 2 || undefined)
        assert.isTrue(isRunning(pidsIn(pids).at(-1)!))
      }),
    Deadlines.scaled(90_000)
  )

  it.scopedLive(
    "a master that is not ALIVE rejects a submission with the typed error, and kindling submit prints it",
    () =>
      Effect.gen(function*() {
        const dir = yield* temporaryDirectory
        const recoveryDirectory = Path.join(dir, "recovery")
        // A worker that will never answer keeps the restarted master RECOVERING.
        // Sealed as the master's own records are, under its secret if it has one (in an encrypted run).
        const persistence = yield* Persistence.makeFileSystem(recoveryDirectory, { secret: effectiveSecret() })
        yield* persistence.persist({
          kind: "worker",
          value: new QueryMessages.WorkerInfo({
            id: Ids.WorkerId.make("worker-20260101000000-127.0.0.1-9"),
            host: "127.0.0.1",
            port: 9,
            webUiAddress: "",
            cores: 1,
            coresUsed: 0,
            memory: 1024,
            memoryUsed: 0,
            resources: {},
            resourcesUsed: {},
            state: "ALIVE",
            lastHeartbeat: 0,
            executors: [],
            drivers: []
          })
        })
        const master = yield* startMaster([
          "--conf",
          "kindling.deploy.recoveryMode=FILESYSTEM",
          "--conf",
          `kindling.deploy.recoveryDirectory=${recoveryDirectory}`,
          "--conf",
          "kindling.deploy.recoveryTimeout=60s",
          // The fixture's 2 s worker timeout would remove the silent worker, ending the recovery mid-test.
          "--conf",
          "kindling.worker.timeout=60s"
        ])
        yield* master.node.waitFor(/New state: RECOVERING/)
        const result = yield* run(submitArgs(master.url, app(dir, "writes.mjs", writes), Path.join(dir, "out")))
        assert.strictEqual(result.code, 1)
        assert.include(result.stderr, "Current state is not alive: RECOVERING")
        assert.strictEqual(result.stdout, "")

        const error = yield* Effect.gen(function*() {
          const client = yield* MasterClient.make(master.url)
          return yield* Effect.flip(client.driverStatus(Ids.DriverId.make("driver-x")))
        }).pipe(Effect.scoped, Effect.provide(clientNetwork()))
        assert.instanceOf(error, Errors.MasterNotAlive)
        assert.strictEqual((error as Errors.MasterNotAlive).state, "RECOVERING")
        // A query is refused in its own terms, not as a submission.
        assert.strictEqual(
          (error as Errors.MasterNotAlive).message,
          "Current state is not alive: RECOVERING. Can only report driver status in ALIVE state."
        )
      }),
    Deadlines.scaled(60_000)
  )
})
