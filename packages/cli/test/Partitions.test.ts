// A real cluster across network namespaces (ZooKeeper, two masters and two workers, each a host of its own on a
// bridge; the test is the observer), with links cut and healed while it runs: the failures a single host never
// shows. Needs root; CI runs as root. `pnpm test:partitions` runs these alone.
import { assert, describe, it } from "@effect/vitest"
import { Deadlines, Polling } from "@kindling/protocol/testing"
import { Effect, Fiber, Option } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { app, eventually, masterState, start, submitArgs, temporaryDirectory } from "./fixtures/cluster.js"
import {
  nodeFlags,
  oneMasterOnHosts,
  overlapOf,
  runsIn,
  secret,
  ticks,
  twoMastersOnHosts
} from "./fixtures/partitions.js"

const outlivesConnections = "12 seconds"

// Two jobs on one shuffle: the second reads the first one's map outputs (it runs no map stage), once the test says
// go. The sums of 0..199,999 by key.
const reusesItsShuffle = `import { App, Kindling } from "@kindling/app"
import { Console, Effect } from "effect"
import * as Fs from "node:fs"
export default App.make(([dir]) =>
  Effect.gen(function*() {
    const kc = yield* Kindling
    const sums = kc.range(0, 200000, 1, 8).map((x) => [x % 16, x] as const).reduceByKey((a, b) => a + b)
    yield* sums.count()
    Fs.writeFileSync(dir + "/ready", "")
    for (let i = 0; i < 600 && !Fs.existsSync(dir + "/go"); i++) yield* Effect.sleep(100)
    const started = Date.now()
    const total = (yield* sums.collect()).reduce((t, [, v]) => t + v, 0)
    yield* Console.log(\`total \${total} in \${Date.now() - started} ms\`)
  }))
`

describe("partitions", () => {
  it.scopedLive(
    "a job whose map outputs are on a worker that is cut off recomputes them once the worker is lost",
    () =>
      Effect.gen(function*() {
        const dir = yield* temporaryDirectory
        const { hosts, master, observer } = yield* oneMasterOnHosts(dir)
        const driver = yield* start([
          "submit",
          "--master",
          master.url,
          "--conf",
          `kindling.driver.host=${observer}`,
          // Both workers' executors registered before the first job, so that its map outputs lie on both.
          "--conf",
          "kindling.cores.max=4",
          "--conf",
          "kindling.scheduler.minRegisteredResourcesRatio=1",
          ...nodeFlags,
          app(dir, "reuses.ts", reusesItsShuffle),
          dir
        ])
        yield* Polling.eventually(Effect.sync(() => Fs.existsSync(Path.join(dir, "ready"))), (ready) => ready, {
          timeout: 60_000,
          describe: () => driver.output()
        })
        // The second job reads the first one's map outputs, half of them on the worker now cut off.
        yield* hosts.w1!.cut
        const cutAt = Date.now()
        Fs.writeFileSync(Path.join(dir, "go"), "")
        const [, total] = yield* driver.waitFor(/total (\d+) in \d+ ms/, 60_000)
        const stalled = Date.now() - cutAt
        assert.strictEqual(total, String((200_000 * 199_999) / 2))
        assert.strictEqual(yield* driver.exited, 0, driver.output())
        console.log(`partitions: the job's stall after the cut: ${stalled} ms`)
        // Lost to the worker timeout (2 s, checked every 2 s) and computed again, within the deadline above: not
        // waited out to the kernel's give-up on a connection to the cut host, minutes later.
        assert.match(driver.output(), /Lost executor/)
      }),
    Deadlines.scaled(120_000)
  )

  it.scopedLive(
    "a supervised driver cut off with its worker stops before its relaunch starts: its copies never overlap",
    () =>
      Effect.gen(function*() {
        const dir = yield* temporaryDirectory
        const { hosts, master, observer } = yield* oneMasterOnHosts(dir)
        // The master fetches the upload from the submitter, which listens on the bridge.
        const submit = yield* start([
          ...submitArgs(master.url, "--supervise", "--conf", `kindling.driver.host=${observer}`, ...nodeFlags),
          app(dir, "ticks.mjs", ticks),
          dir
        ])
        const [, driverId] = yield* submit.waitFor(/(driver-\d+-\d+)/, 30_000)
        const running = yield* eventually(
          master.url,
          (state) => {
            const driver = state.activeDrivers.find((d) => d.id === driverId)
            const worker = state.workers.find((w) => w.id === Option.getOrUndefined(driver?.workerId ?? Option.none()))
            return driver?.state === "RUNNING" && runsIn(dir).length === 1 ? worker : undefined
          },
          30_000,
          secret
        )
        const cut = Object.values(hosts).find((host) => host.ip === running.host)!
        // The worker and its driver are cut off past the lease (8 s) and its terminate timeout (2 s): the master
        // relaunches the driver on the other worker.
        yield* cut.cut
        const cutAt = Date.now()
        yield* Polling.eventually(Effect.sync(() => runsIn(dir)), (runs) => runs.length === 2, {
          timeout: 30_000,
          describe: () => JSON.stringify(runsIn(dir))
        })
        yield* Effect.sleep("2 seconds")
        const healAt = Date.now()
        yield* cut.heal
        const [old, relaunched] = runsIn(dir)
        const overlap = overlapOf(runsIn(dir))
        console.log(
          `partitions: the cut-off copy stopped ${old!.to - cutAt} ms after the cut, the relaunch started ` +
            `${relaunched!.from - cutAt} ms after it; overlap ${overlap} ms`
        )
        assert.strictEqual(overlap, 0, JSON.stringify({ old, relaunched }))
        // Stopped by its worker's fencing while cut off (the lease is 8 s from a heartbeat sent before the cut), not
        // by the heal.
        assert.isBelow(old!.to, healAt)
        // The master waited the fence out: lease + terminate timeout + 1 s from the last heartbeat, sent at most
        // 0.5 s before the cut (a machine's load can only make that longer).
        assert.isAbove(relaunched!.from - cutAt, 10_500)
      }),
    Deadlines.scaled(120_000)
  )

  it.scopedLive(
    "a worker cut off with its leader registers with the new one after the heal, not stranded on a standby",
    () =>
      Effect.gen(function*() {
        const dir = yield* temporaryDirectory
        const { hosts, m1, m2 } = yield* twoMastersOnHosts(dir)
        const aliveOn = (host: string) => (state: { workers: ReadonlyArray<{ host: string; state: string }> }) =>
          state.workers.some((worker) => worker.host === host && worker.state === "ALIVE")

        // The leader and a worker are cut off together: the other master takes over and drops the worker it
        // cannot hear.
        yield* hosts.m1!.cut
        yield* hosts.w1!.cut
        const healAt = yield* Effect.fork(Effect.sleep(outlivesConnections))
        yield* eventually(
          m2.url,
          (state) =>
            state.status === "ALIVE" && aliveOn(hosts.w2!.ip)(state) && !aliveOn(hosts.w1!.ip)(state) || undefined,
          30_000,
          secret
        )
        yield* Fiber.join(healAt)
        yield* hosts.m1!.heal
        yield* hosts.w1!.heal

        // The old leader is a standby now; its worker registers with the one that leads (Spark's worker would ask
        // only the master it knew, for ever).
        yield* eventually(m2.url, (state) => aliveOn(hosts.w1!.ip)(state) || undefined, 20_000, secret)
        assert.strictEqual((yield* masterState(m1.url, secret)).status, "STANDBY")
        assert.strictEqual((yield* masterState(m2.url, secret)).status, "ALIVE")
      }),
    Deadlines.scaled(120_000)
  )
})
