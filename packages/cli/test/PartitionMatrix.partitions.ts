// The matrix of partitions (`pnpm test:partitions`; too long for `pnpm test`): ZooKeeper, two masters and two workers
// each on a host of their own, a supervised driver running and the observer submitting all along; one host at a time
// (the leader, the standby, the worker that runs the driver, ZooKeeper) cut off for 5, 30 and 90 s, then healed.
// After each, the cluster's guarantees: no two masters answered ALIVE at once, no acknowledged submission is lost,
// no two runs of the driver overlapped, the driver runs again (once) after the heal, and no driver process is left
// that no master knows of.
import { assert, describe, it } from "@effect/vitest"
import type { Ids } from "@kindling/protocol"
import { Descriptions } from "@kindling/protocol"
import { Polling } from "@kindling/protocol/testing"
import { MasterClient } from "@kindling/rpc"
import { Effect, Fiber, Option } from "effect"
import {
  app,
  clientNetwork,
  eventually,
  masterState,
  start,
  submitArgs,
  temporaryDirectory,
  unrunnableDriver
} from "./fixtures/cluster.js"
import type { Host } from "./fixtures/hosts.js"
import { nodeFlags, overlapOf, runsIn, secret, ticks, twoMastersOnHosts } from "./fixtures/partitions.js"

// Asks for more cores than any worker has: it waits, and stays in the store, for as long as the test runs.
const waitsForEver = new Descriptions.DriverDescription({ ...unrunnableDriver, cores: 64 })

const client = <A, E>(use: (client: MasterClient.MasterClient) => Effect.Effect<A, E>, url: string) =>
  Effect.gen(function*() {
    return yield* use(yield* MasterClient.make(url, { timeout: "3 seconds" }))
  }).pipe(Effect.scoped, Effect.provide(clientNetwork(secret)))

// A worker that no master accepts gives up after its registration attempts, as Spark's does: the default schedule
// spans 11 minutes; the tests' quicker one (attempts 2 s apart) would run out during the longest cuts without a leader.
const workerFlags = [...nodeFlags, "--conf", "kindling.worker.register.maxAttempts=200"]

const targets = ["leader", "standby", "driver's worker", "ZooKeeper"] as const
const lengths = [5, 30, 90]

describe("the partition matrix", () => {
  for (const target of targets) {
    for (const seconds of lengths) {
      it.scopedLive(`${target} cut off for ${seconds} s`, () =>
        Effect.gen(function*() {
          const dir = yield* temporaryDirectory
          const { hosts, m1, m2, observer, url, workers } = yield* twoMastersOnHosts(dir, workerFlags)
          const submit = yield* start([
            ...submitArgs(url, "--supervise", "--conf", `kindling.driver.host=${observer}`, ...nodeFlags),
            app(dir, "ticks.mjs", ticks),
            dir
          ])
          yield* submit.waitFor(/driver-\d+-\d+/, 30_000)
          const running = yield* eventually(
            url,
            (state) => {
              const driver = state.activeDrivers.find((d) => d.desc.appUrl.includes("ticks") && d.state === "RUNNING")
              return driver && state.workers.find((w) => w.id === Option.getOrUndefined(driver.workerId))
            },
            30_000,
            secret
          )

          // Submissions all along; each one acknowledged is noted.
          const acknowledged: Array<Ids.DriverId> = []
          const submitting = yield* Effect.fork(Effect.forever(
            client((c) => c.submitDriver(waitsForEver), url).pipe(
              Effect.tap((answer) => Option.map(answer.driverId, (id) => acknowledged.push(id))),
              Effect.ignore,
              Effect.zipRight(Effect.sleep("200 millis"))
            )
          ))
          // Every master's status, polled: how many answered ALIVE in the same round, at most.
          let mostAlive = 0
          const polling = yield* Effect.fork(Effect.forever(
            Effect.forEach([m1.url, m2.url], (master) =>
              masterState(master, secret).pipe(
                Effect.timeout("1 second"),
                Effect.map((state) => state.status === "ALIVE"),
                Effect.orElseSucceed(() => false)
              ), { concurrency: "unbounded" }).pipe(
                Effect.tap((alive) =>
                  Effect.sync(() => (mostAlive = Math.max(mostAlive, alive.filter(Boolean).length)))
                ),
                Effect.zipRight(Effect.sleep("250 millis"))
              )
          ))
          yield* Effect.sleep("2 seconds")

          const leader = (yield* masterState(url, secret)).host
          const host: Host = target === "leader"
            ? Object.values(hosts).find((h) => h.ip === leader)!
            : target === "standby"
            ? Object.values(hosts).find((h) => (h === hosts.m1 || h === hosts.m2) && h.ip !== leader)!
            : target === "driver's worker"
            ? Object.values(hosts).find((h) => h.ip === running.host)!
            : hosts.zk!
          yield* host.cut
          yield* Effect.sleep(`${seconds} seconds`)
          yield* host.heal

          // After the heal: one leader, both workers back, the driver (or its relaunch) running once.
          const settled = yield* Polling.eventually(
            masterState(url, secret).pipe(Effect.option),
            (state) =>
              Option.exists(state, (s) =>
                s.status === "ALIVE" && s.workers.filter((w) => w.state === "ALIVE").length === 2 &&
                s.activeDrivers.filter((d) => d.desc.appUrl.includes("ticks") && d.state === "RUNNING").length === 1),
            {
              timeout: 120_000,
              interval: "250 millis",
              describe: (state) =>
                JSON.stringify(Option.map(state ?? Option.none(), (s) => ({
                  status: s.status,
                  workers: s.workers.map((w) => `${w.host} ${w.state}`),
                  drivers: s.activeDrivers.map((d) => `${d.id} ${d.state} ${d.desc.appUrl.slice(-12)}`)
                }))) + `\n${m1.node.output().slice(-3000)}\n${m2.node.output().slice(-3000)}`
            }
          ).pipe(Effect.map(Option.getOrThrow))
          // The driver the leader counts as running has started (it is launched before its process ticks).
          const ticking = () => runsIn(dir).filter((run) => Date.now() - run.to < 1_000)
          yield* Polling.eventually(Effect.sync(ticking), (runs) => runs.length > 0, { timeout: 30_000 })
          yield* Effect.sleep("3 seconds")
          yield* Fiber.interrupt(submitting)
          yield* Fiber.interrupt(polling)
          const final = yield* masterState(url, secret)
          const known = new Set([...final.activeDrivers, ...final.completedDrivers].map((driver) => driver.id))
          const lost = acknowledged.filter((id) => !known.has(id))
          const runs = runsIn(dir)
          const stillRunning = ticking()
          console.log(
            `partition matrix: ${target} cut off for ${seconds} s: ${acknowledged.length} submissions acknowledged, ` +
              `${lost.length} lost; ${runs.length} run(s) of the driver, overlap ${overlapOf(runs)} ms; ` +
              `at most ${mostAlive} master(s) ALIVE at once; leader before ${leader}, after ${settled.host}`
          )
          assert.isAtMost(mostAlive, 1)
          assert.deepStrictEqual(lost, [])
          assert.strictEqual(overlapOf(runs), 0, JSON.stringify(runs))
          // Exactly one copy still runs (no orphan), and it is the one the leader counts.
          assert.strictEqual(
            stillRunning.length,
            1,
            `${JSON.stringify(runs)}\n${workers.map((w) => w.node.output().slice(-4000)).join("\n")}`
          )
        }), (lengths.at(-1)! + 240) * 1000)
    }
  }
})
