// What a master trusts in its recovery store, tried as an attacker would: with access to ZooKeeper (or to the
// recovery directory's file system) but not to the cluster's secret. Masters and workers are real processes, the
// ZooKeeper is Debian's server.
import { assert, describe, it } from "@effect/vitest"
import { ZooKeeper } from "@kindling/master"
import { Descriptions, Ids, QueryMessages } from "@kindling/protocol"
import { Deadlines } from "@kindling/protocol/testing"
import { Effect, Option, Schema } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import {
  app,
  authenticated,
  effectiveSecret,
  forever,
  freePort,
  pidsIn,
  plaintextOnly,
  start,
  startMaster,
  temporaryDirectory,
  workerArgs
} from "./fixtures/cluster.js"
import { zooKeeperFlags, type ZooKeeperServer, zooKeeperServer } from "./fixtures/zookeeper.js"

const secret = effectiveSecret("recovery-secret")!
const driverId = "driver-20260101000000-0666"

// A driver record as a master would write it: waiting for a worker, its app an attacker's module that appends its
// pid to `pids` when it runs.
const plantedDriver = (dir: string, pids: string) =>
  JSON.stringify(
    Schema.encodeSync(QueryMessages.DriverInfo)(
      new QueryMessages.DriverInfo({
        id: Ids.DriverId.make(driverId),
        startTime: 1_767_225_600_000,
        submitDate: 1_767_225_600_000,
        desc: new Descriptions.DriverDescription({
          appUrl: `file://${app(dir, "planted.mjs", forever)}`,
          mem: 64,
          cores: 1,
          supervise: false,
          command: new Descriptions.Command({
            mainModule: "@kindling/worker/DriverWrapper",
            arguments: ["{{WORKER_URL}}", "{{USER_JAR}}", pids],
            environment: {},
            nodeOptions: []
          }),
          resourceReqs: []
        }),
        state: "SUBMITTED",
        workerId: Option.none(),
        exception: Option.none(),
        resources: {}
      })
    )
  )

// A session of the attacker's: no credentials, so what it creates is open to anyone (ZooKeeper's default ACL).
const attacker = (zk: ZooKeeperServer) =>
  ZooKeeper.connect({ url: zk.url, sessionTimeoutMillis: 4000, connectTimeoutMillis: 10_000 })

// A worker that keeps trying to register with `url` (a master not up yet), so that a master that recovers a
// driver has somewhere to launch it at once.
const waitingWorker = (url: string, dir: string, flags: ReadonlyArray<string>) =>
  start(workerArgs(url, "127.0.0.1", Path.join(dir, "worker"), flags))

// The master stops on its own, naming the node, having led nothing and launched nothing.
const refused = (
  master: { readonly node: { readonly output: () => string; readonly exited: Effect.Effect<number | null> } },
  pids: string,
  line: RegExp
) =>
  Effect.gen(function*() {
    const code = yield* master.node.exited.pipe(Effect.timeout("60 seconds"))
    const output = master.node.output()
    assert.strictEqual(code, 1, output)
    const refusals = output.split("\n").filter((l) => l.includes("Refusing the recovery store"))
    assert.strictEqual(refusals.length, 1, output)
    assert.match(refusals[0]!, line)
    assert.notMatch(output, /New state: ALIVE|Launching driver/, output)
    assert.deepStrictEqual(pidsIn(pids), [])
  })

describe("the recovery store holds only what the cluster wrote", () => {
  it.scopedLive(
    "ZooKeeper: a recovery directory planted before the masters start, with a driver in it, is refused",
    () =>
      Effect.gen(function*() {
        const zk = yield* zooKeeperServer()
        const dir = yield* temporaryDirectory
        const pids = Path.join(dir, "planted.pids")
        const squatter = yield* attacker(zk)
        yield* squatter.ensurePath("/kindling/master_status")
        yield* squatter.commit([{
          _tag: "Create",
          path: `/kindling/master_status/driver_${driverId}`,
          data: new TextEncoder().encode(plantedDriver(dir, pids))
        }])
        const port = yield* freePort
        yield* waitingWorker(`kindling://127.0.0.1:${port}`, dir, authenticated(secret))
        const master = yield* start([
          "master",
          "--host",
          "127.0.0.1",
          "--port",
          String(port),
          ...zooKeeperFlags(zk),
          ...authenticated(secret)
        ])
        yield* refused({ node: master }, pids, /\/kindling is not the cluster's: its ACL also lets world:anyone/)
        // The squatter's nodes are as they were: not taken over, nothing made inside them.
        const acl = (yield* squatter.inspect("/kindling/master_status")).acl
        assert.deepStrictEqual(acl.map((entry) => `${entry.scheme}:${entry.id}`), ["world:anyone"])
        assert.isFalse(yield* squatter.exists("/kindling/leader_election"))
      }),
    Deadlines.scaled(120_000)
  )

  it.scopedLive(
    "ZooKeeper: with the secret, a latch planted in the election before the masters ran stops them, not keeps them waiting",
    () =>
      Effect.gen(function*() {
        const zk = yield* zooKeeperServer()
        const dir = yield* temporaryDirectory
        const squatter = yield* attacker(zk)
        yield* squatter.ensurePath("/kindling/leader_election/latch-0000000000")
        const master = yield* startMaster([...zooKeeperFlags(zk), ...authenticated(secret)])
        yield* refused(master, Path.join(dir, "none"), /\/kindling is not the cluster's/)
      }),
    Deadlines.scaled(120_000)
  )

  // Without a secret nothing but the node itself can be checked (and an encrypted run gives every node one).
  it.scopedLive.skipIf(plaintextOnly)(
    "ZooKeeper: without a secret, a persistent latch planted in the election is passed over, and a master leads",
    () =>
      Effect.gen(function*() {
        const zk = yield* zooKeeperServer()
        const squatter = yield* attacker(zk)
        yield* squatter.ensurePath("/kindling/leader_election/latch-0000000000")
        const master = yield* startMaster(zooKeeperFlags(zk))
        yield* master.node.waitFor(/New state: ALIVE/, 30_000)
        assert.match(
          master.node.output(),
          /Ignoring \/kindling\/leader_election\/latch-0000000000 in the election: it is a persistent node/
        )
      }),
    Deadlines.scaled(120_000)
  )

  describe("FILESYSTEM", () => {
    const recovery = (dir: string) => [
      "--conf",
      "kindling.deploy.recoveryMode=FILESYSTEM",
      "--conf",
      `kindling.deploy.recoveryDirectory=${Path.join(dir, "recovery")}`
    ]

    // A master on a fixed port with a worker waiting for it, over `dir`'s recovery directory.
    const masterOver = (dir: string, flags: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const port = yield* freePort
        yield* waitingWorker(`kindling://127.0.0.1:${port}`, dir, flags)
        return yield* start(["master", "--host", "127.0.0.1", "--port", String(port), ...recovery(dir), ...flags])
      })

    it.scopedLive.skipIf(process.getuid?.() !== 0)(
      "a driver record planted by another user is refused (as root, which can plant one)",
      () =>
        Effect.gen(function*() {
          const dir = yield* temporaryDirectory
          const pids = Path.join(dir, "planted.pids")
          const records = Path.join(dir, "recovery")
          Fs.mkdirSync(records, { mode: 0o700 })
          const planted = Path.join(records, `driver_${driverId}`)
          Fs.writeFileSync(planted, plantedDriver(dir, pids))
          Fs.chownSync(planted, 65534, 65534)
          const master = yield* masterOver(dir, [])
          yield* refused({ node: master }, pids, /driver_driver-20260101000000-0666 is owned by user 65534/)
        }),
      Deadlines.scaled(120_000)
    )

    it.scopedLive("with the secret, a driver record the cluster did not seal is refused", () =>
      Effect.gen(function*() {
        const dir = yield* temporaryDirectory
        const pids = Path.join(dir, "planted.pids")
        const records = Path.join(dir, "recovery")
        Fs.mkdirSync(records, { mode: 0o700 })
        Fs.writeFileSync(Path.join(records, `driver_${driverId}`), plantedDriver(dir, pids), { mode: 0o600 })
        const master = yield* masterOver(dir, authenticated(secret))
        yield* refused({ node: master }, pids, /driver_driver-20260101000000-0666 carries no seal of the cluster/)
      }), Deadlines.scaled(120_000))
  })
})
