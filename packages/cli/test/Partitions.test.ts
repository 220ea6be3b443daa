// A real cluster across network namespaces (ZooKeeper, two masters and two workers, each a host of its own on a
// bridge; the test is the observer), with links cut and healed while it runs: the failures a single host never
// shows. Needs root; CI runs as root. The full matrix is `pnpm test:partitions`.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import * as Path from "node:path"
import { authenticated, eventually, masterState, temporaryDirectory } from "./fixtures/cluster.js"
import { masterOn, network, workerOn } from "./fixtures/hosts.js"
import { zooKeeperFlags, zooKeeperServer } from "./fixtures/zookeeper.js"

// Nodes listen on addresses other than loopback: they must authenticate. A connection on which nothing arrives for
// 5 s is closed (kindling.network.timeout), so a cut of a few seconds is one that outlives connections, as a cut of
// minutes does with the defaults; registration retries stay quick.
const secret = "partitions"
const nodeFlags = [
  ...authenticated(secret),
  "--conf",
  "kindling.network.timeout=5s",
  "--conf",
  "kindling.worker.register.prolongedInterval=2s"
]
const outlivesConnections = "12 seconds"

describe("partitions", () => {
  it.scopedLive(
    "a worker cut off with its leader registers with the new one after the heal, not stranded on a standby",
    () =>
      Effect.gen(function*() {
        const dir = yield* temporaryDirectory
        const hosts = yield* network(["zk", "m1", "m2", "w1", "w2"])
        const zk = yield* zooKeeperServer({ host: hosts.zk! })
        const m1 = yield* masterOn(hosts.m1!, [...zooKeeperFlags(zk), ...nodeFlags])
        yield* m1.node.waitFor(/New state: ALIVE/, 30_000)
        const m2 = yield* masterOn(hosts.m2!, [...zooKeeperFlags(zk), ...nodeFlags])
        yield* m2.node.waitFor(/Joined the election/, 30_000)
        const url = `${m1.url},${m2.url.slice("kindling://".length)}`
        yield* workerOn(hosts.w1!, url, Path.join(dir, "w1"), nodeFlags)
        yield* workerOn(hosts.w2!, url, Path.join(dir, "w2"), nodeFlags)
        const aliveOn = (host: string) => (state: { workers: ReadonlyArray<{ host: string; state: string }> }) =>
          state.workers.some((worker) => worker.host === host && worker.state === "ALIVE")

        // The leader and a worker are cut off together: the other master takes over and drops the worker it
        // cannot hear.
        yield* hosts.m1!.cut
        yield* hosts.w1!.cut
        const healAt = yield* Effect.fork(Effect.sleep(outlivesConnections))
        yield* eventually(
          m2.url,
          (state) => state.status === "ALIVE" && aliveOn(hosts.w2!.ip)(state) && !aliveOn(hosts.w1!.ip)(state) || undefined,
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
    120_000
  )
})
