// The control plane under faults and hostile peers, with real processes on 127.0.0.1: one regression test for
// each defect D1–D7 of the fault review, and D8 of the hostile-network one (each failed before its fix).
import { assert, describe, it } from "@effect/vitest"
import { Deadlines, Polling } from "@kindling/protocol/testing"
import { MasterClient } from "@kindling/rpc"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import {
  activeDriver,
  app,
  authenticated,
  clientNetwork,
  cluster,
  effectiveSecret,
  eventually,
  forever,
  isRunning,
  masterState,
  pidsIn,
  plaintextOnly,
  recoverableCluster,
  run,
  startMaster,
  startWorker,
  submitArgs,
  temporaryDirectory,
  unrunnableDriver
} from "./fixtures/cluster.js"
import {
  claimed,
  connect,
  frameHeader,
  hello,
  type RawPeer,
  residentBytes,
  sendOversizedFrame,
  silentFlood
} from "./fixtures/peers.js"

const MiB = 1 << 20

// Nothing was taken for dead: every worker ALIVE, the driver RUNNING in the one process it was launched in, no
// worker removed.
const expectUndisturbed = (
  master: { readonly url: string; readonly node: { readonly output: () => string } },
  driverId: string,
  pids: string,
  workers: number
) =>
  Effect.gen(function*() {
    const state = yield* masterState(master.url)
    assert.deepStrictEqual(state.workers.map((w) => w.state), Array.from({ length: workers }, () => "ALIVE"))
    assert.strictEqual(activeDriver(driverId)(state)?.state, "RUNNING")
    assert.strictEqual(pidsIn(pids).length, 1)
    assert.isTrue(isRunning(pidsIn(pids)[0]!))
    assert.notMatch(master.node.output(), /Removing worker/)
  })

// Appends its pid, ignores SIGTERM, and runs until SIGKILLed.
const stubborn = `import { appendFileSync } from "node:fs"
export default async ([pids]) => {
  process.on("SIGTERM", () => {})
  appendFileSync(pids, process.pid + "\\n")
  await new Promise(() => setInterval(() => {}, 1000))
}
`
// Starts a child that would sleep for a long time, writes the child's pid, and returns at once.
const parent = `import { spawn } from "node:child_process"
import { writeFileSync } from "node:fs"
export default ([childPid]) => {
  const child = spawn("sleep", ["600"], { stdio: "ignore" })
  child.unref()
  writeFileSync(childPid, String(child.pid))
}
`
// Appends its pid, waits for a file to appear, then returns.
const waitsForGo = `import { appendFileSync, existsSync } from "node:fs"
export default async ([pids, go]) => {
  appendFileSync(pids, process.pid + "\\n")
  while (!existsSync(go)) await new Promise((resolve) => setTimeout(resolve, 50))
}
`

const until = (check: () => boolean, describe: string, timeout = 15_000) =>
  Polling.eventually(Effect.sync(check), (ok) => ok, { timeout, describe: () => describe })

describe("the control plane under faults and hostile peers", () => {
  it.scopedLive.skipIf(plaintextOnly)(
    "D1: before the handshake only handshake-sized frames are read, so memory stays bounded",
    () =>
      Effect.gen(function*() {
        const secret = "not-known-to-the-attacker"
        const master = yield* startMaster([
          "--conf",
          "kindling.authenticate=true",
          "--conf",
          `kindling.authenticate.secret=${secret}`
        ])
        const port = Number(new URL(master.url.replace("kindling", "http")).port)
        const before = residentBytes(master.node.pid)
        // Eight connections each declare a 128 MiB frame and send 48 MiB of it (the review sent 120; `pnpm bench
        // hostile` does). Read in full, that is 384 MiB; refused at the header, nothing.
        const sent = yield* Effect.forEach(
          Array.from({ length: 8 }),
          () =>
            Effect.gen(function*() {
              const peer = yield* connect(port)
              const bytes = yield* sendOversizedFrame(peer, 128 * MiB, 48 * MiB)
              yield* peer.closed
              return bytes
            }),
          { concurrency: "unbounded" }
        )
        const growth = residentBytes(master.node.pid) - before
        assert.isBelow(growth, 64 * MiB, `the master grew by ${growth} bytes; peers sent ${sent.join(", ")}`)
        assert.isTrue(sent.every((bytes) => bytes < 48 * MiB), `the master read on: ${sent.join(", ")}`)
        yield* master.node.waitFor(/refusing connection: .*exceeds the maximum/)
        // It keeps serving those who know the secret.
        assert.strictEqual((yield* masterState(master.url, secret)).status, "ALIVE")
      }),
    Deadlines.scaled(60_000)
  )

  it.scopedLive(
    "D1: connections still in their handshake are capped: the oldest silent ones make room for new ones",
    () =>
      Effect.gen(function*() {
        const master = yield* startMaster(["--conf", "kindling.rpc.maxHandshakes=4"])
        const port = Number(new URL(master.url.replace("kindling", "http")).port)
        // Four connections that never say hello fill the cap; newcomers keep arriving (one every 200 ms, past the
        // grace a connection just accepted has), and the oldest silent ones go to make room for them.
        const silent: Array<RawPeer> = []
        for (let i = 0; i < 4; i++) silent.push(yield* connect(port))
        while (!(silent[0]!.isClosed() && silent[1]!.isClosed())) {
          assert.isBelow(silent.length, 100, "the oldest silent connections were never closed")
          yield* Effect.sleep("200 millis")
          silent.push(yield* connect(port))
        }
        // Oldest first: the third and fourth go only after the first two.
        assert.isFalse(silent.slice(2).some((peer, i) => peer.isClosed() && !silent[i]!.isClosed()))
        yield* master.node.waitFor(/closed 1 connection\(s\) that said nothing in their handshake so far/)
        // And a newcomer that says hello is answered.
        assert.strictEqual((yield* masterState(master.url)).status, "ALIVE")
      }),
    Deadlines.scaled(30_000)
  )

  it.scopedLive(
    "D8: silent connections kept up from one address and from many lock no newcomer out, and memory stays flat",
    () =>
      Effect.gen(function*() {
        const secret = effectiveSecret("not-known-to-the-attacker")!
        const flags = authenticated(secret)
        const master = yield* startMaster(flags)
        const port = Number(new URL(master.url.replace("kindling", "http")).port)
        const [, ui] = yield* master.node.waitFor(/The master UI is at (http:\/\/\S+)/)
        // 200 from the address the cluster's own clients use, one from each of 64 others: four times the
        // handshake cap, each renewed as soon as the master closes it. The same at the UI's port.
        const several = Array.from({ length: 64 }, (_, i) => `127.0.0.${i + 2}`)
        const flood = yield* Effect.acquireRelease(
          Effect.sync(() => [silentFlood(port, ["127.0.0.1"], 200), silentFlood(port, several, 1)]),
          (floods) => Effect.sync(() => floods.forEach((flood) => flood.stop()))
        )
        const uiFlood = yield* Effect.acquireRelease(
          Effect.sync(() => [silentFlood(Number(new URL(ui!).port), ["127.0.0.1"], 200)]),
          (floods) => Effect.sync(() => floods.forEach((flood) => flood.stop()))
        )
        const opened = () => flood.reduce((n, f) => n + f.opened(), 0)
        const churned = () => flood.reduce((n, f) => n + f.closedByNode(), 0)
        yield* until(() => opened() >= 264 && churned() >= 200, "the flood up and renewed")
        const before = residentBytes(master.node.pid)

        const dir = yield* temporaryDirectory
        yield* startWorker(master.url, Path.join(dir, "worker"), flags)
        // A fresh client every 500 ms, as `kindling status` and `submit` are: each dials, proves the secret, asks.
        let answered = 0
        for (let round = 0; round < 10; round++) {
          const state = yield* masterState(master.url, secret)
          assert.deepStrictEqual(state.workers.map((w) => w.state), ["ALIVE"])
          const submitted = yield* Effect.gen(function*() {
            const client = yield* MasterClient.make(master.url)
            return yield* client.submitDriver(unrunnableDriver)
          }).pipe(Effect.scoped, Effect.provide(clientNetwork(secret)))
          assert.isTrue(submitted.success, submitted.message)
          const page = yield* Effect.promise(() => fetch(`${ui}/json/`).then((response) => response.json()))
          assert.strictEqual((page as { status: string }).status, "ALIVE")
          answered++
          yield* Effect.sleep("500 millis")
        }
        assert.strictEqual(answered, 10)
        const growth = residentBytes(master.node.pid) - before
        assert.isBelow(growth, 32 * MiB, `the master grew by ${growth} bytes under the flood`)
        assert.isAbove(churned(), 264, "the flood was renewed throughout")
        assert.strictEqual(uiFlood[0]!.open(), 200, "the UI's port holds its silent connections without refusing")
      }),
    Deadlines.scaled(120_000)
  )

  it.scopedLive(
    "D2: idle and dribbling connections are closed, the count is capped, and registered workers stay",
    () =>
      Effect.gen(function*() {
        const { master } = yield* cluster(1, [
          "--conf",
          "kindling.network.timeout=3s",
          "--conf",
          "kindling.rpc.maxConnections=40"
        ])
        const port = Number(new URL(master.url.replace("kindling", "http")).port)
        // A flood of connections that complete the handshake (there is no secret) and then say nothing, five
        // times the cap.
        const flood = yield* Effect.forEach(
          Array.from({ length: 200 }, (_, i) => i),
          (i) =>
            Effect.gen(function*() {
              const peer = yield* connect(port)
              yield* peer.write(hello(claimed("127.0.0.1", 20_000 + i)))
              return peer
            }),
          { concurrency: 20 }
        )
        // One more dribbles a frame at a byte every 200 ms after its handshake.
        const dribbler = yield* connect(port)
        yield* dribbler.write(hello(claimed("127.0.0.1", 19_999)))
        yield* dribbler.write(frameHeader(1000))
        yield* Effect.forkScoped(
          Effect.gen(function*() {
            while (!dribbler.isClosed()) {
              yield* dribbler.write(new Uint8Array([0x61]))
              yield* Effect.sleep("200 millis")
            }
          })
        )
        // Under the flood the master answers queries, and its worker keeps heartbeating past the worker
        // timeout (2 s).
        for (let i = 0; i < 3; i++) {
          const state = yield* masterState(master.url)
          assert.deepStrictEqual(state.workers.map((w) => w.state), ["ALIVE"])
          yield* Effect.sleep("1 second")
        }
        // Everything idle past the network timeout is closed, the dribbler with it.
        yield* until(() => flood.every((peer) => peer.isClosed()), "the idle flood closed", 20_000)
        yield* until(() => dribbler.isClosed(), "the dribbler closed", 20_000)
        const state = yield* masterState(master.url)
        assert.deepStrictEqual(state.workers.map((w) => w.state), ["ALIVE"])
        assert.notMatch(master.node.output(), /Removing worker/)
      }),
    Deadlines.scaled(60_000)
  )

  it.scopedLive.skipIf(plaintextOnly)(
    "D3: a connection claiming a live worker's address, then closing, costs the worker nothing",
    () =>
      Effect.gen(function*() {
        const { dir, master, workers } = yield* cluster(1)
        const port = Number(new URL(master.url.replace("kindling", "http")).port)
        const pids = Path.join(dir, "pids")
        const submitted = yield* run(submitArgs(master.url, "--supervise", app(dir, "forever.mjs", forever), pids))
        const driverId = submitted.stdout.trim()
        yield* eventually(master.url, (state) => activeDriver(driverId)(state)?.state === "RUNNING" || undefined)
        yield* eventually(master.url, () => pidsIn(pids).length === 1 || undefined)

        const spoofer = yield* connect(port)
        yield* spoofer.write(hello(claimed("127.0.0.1", workers[0]!.port)))
        spoofer.socket.end()
        yield* spoofer.closed
        // The master heard the close and knew it was not the worker's connection.
        yield* master.node.waitFor(/A connection claiming 127\.0\.0\.1:\d+ closed; worker worker-\S+ registered on/)
        yield* expectUndisturbed(master, driverId, pids, 1)
      }),
    Deadlines.scaled(60_000)
  )

  it.scopedLive(
    "D4: a worker stopped with SIGTERM SIGKILLs a driver that ignores SIGTERM, and exits",
    () =>
      Effect.gen(function*() {
        const { dir, master, workers } = yield* cluster(1)
        const pids = Path.join(dir, "pids")
        const submitted = yield* run(submitArgs(master.url, app(dir, "stubborn.mjs", stubborn), pids))
        const driverId = submitted.stdout.trim()
        yield* eventually(master.url, (state) => activeDriver(driverId)(state)?.state === "RUNNING" || undefined)
        yield* eventually(master.url, () => pidsIn(pids).length === 1 || undefined)

        const worker = workers[0]!.node
        yield* worker.kill("SIGTERM")
        // The driver terminate timeout is 2 s (fastConf); the worker exits soon after it.
        const code = yield* worker.exited.pipe(Effect.timeout("15 seconds"))
        assert.isNotNull(code)
        assert.match(worker.output(), /did not stop within 2s of SIGTERM; killing its process group/, worker.output())
        assert.isFalse(isRunning(pidsIn(pids)[0]!), "the driver outlived its worker")
      }),
    Deadlines.scaled(60_000)
  )

  it.scopedLive("D5: a driver's children end with it when it exits by itself", () =>
    Effect.gen(function*() {
      const { dir, master } = yield* cluster(1)
      const childPid = Path.join(dir, "child-pid")
      const result = yield* run(submitArgs(master.url, "--wait", app(dir, "parent.mjs", parent), childPid))
      assert.strictEqual(result.code, 0, result.stderr)
      assert.match(result.stdout, / FINISHED\n$/)
      const child = Number(Fs.readFileSync(childPid, "utf8"))
      yield* until(() => !isRunning(child), `the driver's child ${child} still runs`)
    }), Deadlines.scaled(60_000))

  it.scopedLive(
    "D6: a master paused past the worker timeout hears the heartbeats that waited before judging",
    () =>
      Effect.gen(function*() {
        const { dir, master } = yield* cluster(2)
        const pids = Path.join(dir, "pids")
        const submitted = yield* run(submitArgs(master.url, "--supervise", app(dir, "forever.mjs", forever), pids))
        const driverId = submitted.stdout.trim()
        yield* eventually(master.url, (state) => activeDriver(driverId)(state)?.state === "RUNNING" || undefined)
        yield* eventually(master.url, () => pidsIn(pids).length === 1 || undefined)

        // Frozen for more than twice the worker timeout (2 s), as a long GC pause or a VM stall would.
        yield* master.node.kill("SIGSTOP")
        yield* Effect.sleep("5 seconds")
        yield* master.node.kill("SIGCONT")
        // The overdue timeout check runs before this query is read; by then the waiting heartbeats were heard.
        yield* expectUndisturbed(master, driverId, pids, 2)
      }),
    Deadlines.scaled(60_000)
  )

  it.scopedLive(
    "D7: drivers that end while the master is down are settled once, as they ended",
    () =>
      Effect.gen(function*() {
        const { dir, first, port, recovery, worker } = yield* recoverableCluster
        const go = Path.join(dir, "go")
        const submit = (name: string, ...flags: Array<string>) =>
          Effect.gen(function*() {
            const pids = Path.join(dir, `${name}.pids`)
            const submitted = yield* run(submitArgs(first.url, ...flags, app(dir, `${name}.mjs`, waitsForGo), pids, go))
            assert.strictEqual(submitted.code, 0, submitted.stderr)
            const driverId = submitted.stdout.trim()
            yield* eventually(first.url, (state) => activeDriver(driverId)(state)?.state === "RUNNING" || undefined)
            yield* eventually(first.url, () => pidsIn(pids).length === 1 || undefined)
            return { driverId, pids }
          })
        const plain = yield* submit("plain")
        const supervised = yield* submit("supervised", "--supervise")

        yield* first.node.kill("SIGKILL")
        yield* first.node.exited
        // Both drivers finish while no master is there to hear it.
        Fs.writeFileSync(go, "")
        yield* worker.node.waitFor(new RegExp(`Driver ${plain.driverId} exited successfully`))
        yield* worker.node.waitFor(new RegExp(`Driver ${supervised.driverId} exited successfully`))

        const second = yield* startMaster(recovery, port)
        const recovered = yield* eventually(
          second.url,
          (state) => state.status === "ALIVE" && state.workers.some((w) => w.state === "ALIVE") ? state : undefined
        )
        assert.deepStrictEqual(recovered.activeDrivers, [])
        assert.deepStrictEqual(
          recovered.completedDrivers.map((d) => [d.id, d.state]).sort(),
          [[plain.driverId, "FINISHED"], [supervised.driverId, "FINISHED"]].sort()
        )
        // Each ran once: nothing was relaunched.
        assert.strictEqual(pidsIn(plain.pids).length, 1)
        assert.strictEqual(pidsIn(supervised.pids).length, 1)
        assert.notMatch(second.node.output(), /was not found after master recovery/)
        // `status` tells a waiting client the truth.
        const status = yield* run(["status", "--master", second.url, plain.driverId])
        assert.strictEqual((JSON.parse(status.stdout) as { state: string }).state, "FINISHED")
      }),
    Deadlines.scaled(90_000)
  )
})
