// Standby masters on a real ZooKeeper (recovery mode ZOOKEEPER): masters and workers are real processes started
// through the CLI, ZooKeeper is Debian's server on a free loopback port.
import { assert, describe, it } from "@effect/vitest"
import { ZooKeeper } from "@kindling/master"
import { Errors, type Ids, MasterUrl } from "@kindling/protocol"
import { Deadlines, Polling } from "@kindling/protocol/testing"
import { MasterClient } from "@kindling/rpc"
import { type Duration, Effect, Fiber, Option } from "effect"
import * as Path from "node:path"
import {
  activeDriver,
  app,
  authenticated,
  clientNetwork,
  effectiveSecret,
  eventually,
  forever,
  isRunning,
  masterState,
  pidsIn,
  run,
  startMaster,
  startWorker,
  submitArgs,
  temporaryDirectory,
  unrunnableDriver
} from "./fixtures/cluster.js"
import { zooKeeperFlags, type ZooKeeperServer, zooKeeperServer } from "./fixtures/zookeeper.js"

// Two masters on one ZooKeeper (the first one started leads), two workers that know both, and a supervised
// driver that runs until killed.
const haCluster = (zk: ZooKeeperServer, workerFlags: ReadonlyArray<string> = []) =>
  Effect.gen(function*() {
    const dir = yield* temporaryDirectory
    const first = yield* startMaster(zooKeeperFlags(zk))
    yield* first.node.waitFor(/New state: ALIVE/, 30_000)
    const second = yield* startMaster(zooKeeperFlags(zk))
    yield* second.node.waitFor(/Joined the election/, 30_000)
    const url = `${first.url},${second.url.slice(MasterUrl.scheme.length)}`
    const workers = [
      yield* startWorker(url, Path.join(dir, "worker-0"), workerFlags),
      yield* startWorker(url, Path.join(dir, "worker-1"), workerFlags)
    ]
    const pids = Path.join(dir, "driver.pids")
    const submitted = yield* run(submitArgs(url, "--supervise", app(dir, "forever.mjs", forever), pids))
    assert.strictEqual(submitted.code, 0, submitted.stderr)
    const driverId = submitted.stdout.trim()
    yield* eventually(url, (state) => activeDriver(driverId)(state)?.state === "RUNNING" || undefined)
    yield* eventually(url, () => pidsIn(pids).length === 1 || undefined)
    return { dir, first, second, url, workers, driverId, pids }
  })

// What the leader keeps in ZooKeeper: every record's name and bytes, read as anyone or with the masters' digest.
// The credentials of the masters' znodes, when they have a secret (in an encrypted run, say).
const mastersDigest = effectiveSecret() === undefined ? undefined : `kindling:${effectiveSecret()}`

const records = (zk: ZooKeeperServer, digest?: string) =>
  Effect.gen(function*() {
    const session = yield* ZooKeeper.connect({
      url: zk.url,
      sessionTimeoutMillis: 4000,
      connectTimeoutMillis: 10_000,
      ...(digest === undefined ? {} : { digest })
    })
    const status = "/kindling/master_status"
    const names = [...(yield* session.children(status))].sort()
    const entries: Array<[string, string]> = []
    for (const name of names) {
      entries.push([name, new TextDecoder().decode(yield* session.getData(`${status}/${name}`))])
    }
    return entries
  }).pipe(Effect.scoped)

// One master asked through the SDK, as a tool would, with no other master to fall back on.
// `lookupTimeout`: how long a dial may wait for the master to answer (2 s by default; a paused one answers only when
// it runs again).
const askOnly = <A, E>(
  url: string,
  ask: (client: MasterClient.MasterClient) => Effect.Effect<A, E>,
  lookupTimeout?: Duration.DurationInput
) =>
  Effect.gen(function*() {
    return yield* ask(yield* MasterClient.make(url, { timeout: "20 seconds" }))
  }).pipe(
    Effect.scoped,
    Effect.provide(clientNetwork(undefined, undefined, lookupTimeout === undefined ? {} : { lookupTimeout }))
  )

describe("highly available masters on ZooKeeper", () => {
  it.scopedLive(
    "the standby takes over from a killed leader; drivers keep running and submissions go on",
    () =>
      Effect.gen(function*() {
        const zk = yield* zooKeeperServer()
        const { dir, driverId, first, pids, second, url, workers } = yield* haCluster(zk)
        const statuses = () =>
          run(["status", "--master", url]).pipe(
            Effect.map((result) => (JSON.parse(result.stdout) as Array<{ status?: string }>).map((m) => m.status))
          )
        assert.deepStrictEqual(yield* statuses(), ["ALIVE", "STANDBY"])

        yield* first.node.kill("SIGKILL")
        const state = yield* eventually(
          second.url,
          (s) => s.status === "ALIVE" && s.workers.filter((w) => w.state === "ALIVE").length === 2 ? s : undefined,
          30_000
        )
        // The driver was adopted where it runs, not relaunched.
        assert.strictEqual(activeDriver(driverId)(state)?.state, "RUNNING")
        assert.strictEqual(pidsIn(pids).length, 1)
        assert.isTrue(isRunning(pidsIn(pids)[0]!))
        for (const worker of workers) assert.notMatch(worker.node.output(), /Launching driver .* again|Asked to kill/)

        assert.deepStrictEqual(yield* statuses(), [undefined, "ALIVE"])
        const again = yield* run(submitArgs(url, app(dir, "after.mjs", forever), Path.join(dir, "after.pids")))
        assert.strictEqual(again.code, 0, again.stderr)
        const newId = again.stdout.trim()
        yield* eventually(second.url, (s) => activeDriver(newId)(s)?.state === "RUNNING" || undefined)
      }),
    Deadlines.scaled(120_000)
  )

  it.scopedLive(
    "a supervised driver uploaded to the old leader is launched again by the new one, its app had by its digest",
    () =>
      Effect.gen(function*() {
        const zk = yield* zooKeeperServer()
        const { driverId, first, pids, second, workers } = yield* haCluster(zk)
        yield* first.node.kill("SIGKILL")
        const adopted = yield* eventually(
          second.url,
          (s) => s.status === "ALIVE" && s.workers.filter((w) => w.state === "ALIVE").length === 2 ? s : undefined,
          30_000
        )
        // The host that runs the driver goes: its worker and the driver with it.
        const runsIt = adopted.workers.find((w) =>
          Option.contains(activeDriver(driverId)!(adopted)?.workerId ?? Option.none(), w.id)
        )!
        const host = workers.find((w) => w.port === runsIt.port)!
        yield* host.node.kill("SIGKILL")
        process.kill(pidsIn(pids)[0]!, "SIGKILL")

        // The new leader launches it again (under a new id, as Spark does) on the other worker, which fetches the app
        // the old leader took.
        yield* eventually(
          second.url,
          (s) =>
            s.activeDrivers.some((driver) =>
                driver.state === "RUNNING" && Option.isSome(driver.workerId) && driver.workerId.value !== runsIt.id
              ) && pidsIn(pids).length === 2 || undefined,
          30_000
        )
        assert.isTrue(isRunning(pidsIn(pids)[1]!))
      }),
    Deadlines.scaled(120_000)
  )

  it.scopedLive(
    "a standby refuses submissions with MasterNotAlive{STANDBY}, and the CLI says so",
    () =>
      Effect.gen(function*() {
        const zk = yield* zooKeeperServer()
        const dir = yield* temporaryDirectory
        // A session long enough that a busy machine never hands the standby the lead while the test runs.
        const leader = yield* startMaster(zooKeeperFlags(zk, "10s"))
        yield* leader.node.waitFor(/New state: ALIVE/, 30_000)
        const standby = yield* startMaster(zooKeeperFlags(zk, "10s"))
        yield* standby.node.waitFor(/Joined the election/, 30_000)

        const refused = yield* Effect.flip(askOnly(standby.url, (client) => client.submitDriver(unrunnableDriver)))
        assert.deepStrictEqual(
          refused,
          new Errors.MasterNotAlive({ state: "STANDBY", action: "accept driver submissions" })
        )

        const submitted = yield* run(submitArgs(standby.url, app(dir, "app.mjs", forever), Path.join(dir, "pids")))
        assert.notStrictEqual(submitted.code, 0)
        assert.match(submitted.stderr, /The master at kindling:\/\/127\.0\.0\.1:\d+ is a standby/)
        assert.match(submitted.stderr, /Current state is not alive: STANDBY/)
        assert.deepStrictEqual((yield* masterState(leader.url)).activeDrivers, [])
      }),
    Deadlines.scaled(120_000)
  )

  it.scopedLive(
    "a leader paused past its session steps down on waking, without a launch or a write",
    () =>
      Effect.gen(function*() {
        const zk = yield* zooKeeperServer()
        const { driverId, first, second } = yield* haCluster(zk)
        yield* first.node.kill("SIGSTOP")
        // The session (2 s) expires, the standby leads, and the workers (timeout 2 s) are silent to the paused one.
        yield* eventually(
          second.url,
          (s) => s.status === "ALIVE" && s.workers.filter((w) => w.state === "ALIVE").length === 2 || undefined,
          30_000
        )
        yield* Effect.sleep("3 seconds")
        const before = yield* records(zk, mastersDigest)
        const seen = first.node.output().length
        // A submission waits in the paused leader's socket: on waking it must be refused, not taken.
        const submission = yield* askOnly(
          first.url,
          (client) => client.submitDriver(unrunnableDriver),
          Deadlines.scaled(20_000)
        ).pipe(
          Effect.flip,
          Effect.fork
        )
        yield* Effect.sleep("500 millis")
        yield* first.node.kill("SIGCONT")
        const refused = yield* Fiber.join(submission)
        assert.strictEqual(refused._tag, "MasterNotAlive")
        assert.strictEqual((refused as Errors.MasterNotAlive).state, "STANDBY")
        yield* first.node.waitFor(/Leadership has been revoked/, 10_000)
        yield* first.node.waitFor(/Joined the election/, 10_000)
        const woken = first.node.output().slice(seen)
        assert.notMatch(woken, /Launching|Removing worker|stops:/, woken)
        assert.deepStrictEqual(yield* records(zk, mastersDigest), before)
        assert.strictEqual((yield* masterState(first.url)).status, "STANDBY")
        assert.strictEqual(activeDriver(driverId)(yield* masterState(second.url))?.state, "RUNNING")
      }),
    Deadlines.scaled(120_000)
  )

  it.scopedLive(
    "a leader whose ZooKeeper write hangs steps down and keeps answering; no acknowledged submission is lost",
    () =>
      Effect.gen(function*() {
        const zk = yield* zooKeeperServer()
        const first = yield* startMaster(zooKeeperFlags(zk))
        yield* first.node.waitFor(/New state: ALIVE/, 30_000)
        const second = yield* startMaster(zooKeeperFlags(zk))
        yield* second.node.waitFor(/Joined the election/, 30_000)
        const url = `${first.url},${second.url.slice(MasterUrl.scheme.length)}`

        // Submissions one after another, each a write to ZooKeeper; every one the masters acknowledge is noted.
        const acknowledged: Array<Ids.DriverId> = []
        const submitting = yield* Effect.gen(function*() {
          const client = yield* MasterClient.make(url, { timeout: "20 seconds" })
          for (;;) {
            const answer = yield* Effect.either(client.submitDriver(unrunnableDriver))
            if (answer._tag === "Right" && answer.right.success && answer.right.driverId._tag === "Some") {
              acknowledged.push(answer.right.driverId.value)
            }
            yield* Effect.sleep("50 millis")
          }
        }).pipe(Effect.scoped, Effect.provide(clientNetwork()), Effect.fork)
        yield* Polling.eventually(Effect.sync(() => acknowledged.length), (n) => n >= 5, { timeout: 20_000 })

        // ZooKeeper stops answering with writes in flight, for longer than the sessions (2 s).
        yield* zk.pause
        yield* first.node.waitFor(
          /abandoned a step: Persist failed|Leadership has been revoked/,
          10_000
        )
        // Down, the leader still answers, as a standby; it is still running.
        assert.strictEqual((yield* masterState(first.url)).status, "STANDBY")
        yield* Effect.sleep("3 seconds")
        assert.isTrue(isRunning(first.node.pid), first.node.output())
        yield* zk.resume

        const state = yield* eventually(url, (s) => s.status === "ALIVE" ? s : undefined, 60_000)
        yield* Fiber.interrupt(submitting)
        const known = new Set([...state.activeDrivers, ...state.completedDrivers].map((driver) => driver.id))
        const lost = acknowledged.filter((id) => !known.has(id))
        assert.deepStrictEqual(lost, [], `${acknowledged.length} acknowledged`)
        assert.isTrue(isRunning(first.node.pid))
        assert.notMatch(first.node.output(), /Master stops:/, first.node.output())
      }),
    Deadlines.scaled(120_000)
  )

  it.scopedLive(
    "with the cluster's secret, the masters' znodes are closed to anyone without it, and a failover still reads them",
    () =>
      Effect.gen(function*() {
        const zk = yield* zooKeeperServer()
        const dir = yield* temporaryDirectory
        const secret = "zk-secret"
        const flags = [...zooKeeperFlags(zk), ...authenticated(secret)]
        const first = yield* startMaster(flags)
        yield* first.node.waitFor(/New state: ALIVE/, 30_000)
        const second = yield* startMaster(flags)
        yield* second.node.waitFor(/Joined the election/, 30_000)
        const url = `${first.url},${second.url.slice(MasterUrl.scheme.length)}`
        yield* startWorker(url, Path.join(dir, "worker"), authenticated(secret))

        const denied = yield* Effect.flip(records(zk))
        assert.match(denied.message, /NO_AUTH/)
        const stored = yield* records(zk, `kindling:${secret}`)
        assert.deepStrictEqual(stored.map(([name]) => name.split("_")[0]), ["worker"])

        yield* first.node.kill("SIGKILL")
        const state = yield* eventually(
          second.url,
          (s) => s.status === "ALIVE" && s.workers.some((w) => w.state === "ALIVE") ? s : undefined,
          30_000,
          secret
        )
        assert.strictEqual(state.workers.length, 1)
        assert.match((yield* Effect.flip(records(zk))).message, /NO_AUTH/)
      }),
    Deadlines.scaled(120_000)
  )

  it.scopedLive(
    "while ZooKeeper is down no master leads; when it returns one does, with nothing lost",
    () =>
      Effect.gen(function*() {
        const zk = yield* zooKeeperServer()
        // With no master for longer than their lease, the workers would stop the supervised driver, to be relaunched
        // once one leads: this outage lasts 15 s on a quiet machine, 45 s under load.
        const { dir, driverId, first, second, url } = yield* haCluster(zk, [
          "--conf",
          "kindling.worker.driverFencing.lease=120s"
        ])
        yield* zk.stop
        yield* first.node.waitFor(/Leadership has been revoked/, 10_000)
        // Reads are still served; nothing is accepted.
        for (const master of [first, second]) assert.strictEqual((yield* masterState(master.url)).status, "STANDBY")
        const refused = yield* run(submitArgs(url, app(dir, "app.mjs", forever), Path.join(dir, "pids")))
        assert.notStrictEqual(refused.code, 0)
        assert.match(refused.stderr, /No master of kindling:.* leads right now/)

        yield* zk.restart
        // ZooKeeper's restart, a new election and the leader's recovery: this test takes 15 s on a quiet machine,
        // 45 s beside four CPU hogs, and a run under the whole suite's load ran out of a 30 s bound here.
        const state = yield* eventually(
          url,
          (s) => s.status === "ALIVE" && s.workers.filter((w) => w.state === "ALIVE").length === 2 ? s : undefined,
          60_000
        )
        assert.strictEqual(activeDriver(driverId)(state)?.state, "RUNNING")
      }),
    Deadlines.scaled(150_000)
  )
})
