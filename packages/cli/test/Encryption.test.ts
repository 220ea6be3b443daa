// A cluster with encryption in transit (kindling.network.crypto.enabled): every process — master, workers, the
// drivers and executors they start, the commands — encrypts, jobs that cross every link give the right answer,
// and a node that does not encrypt is kept out with a clear reason on both sides.
import { assert, describe, it } from "@effect/vitest"
import { Deadlines } from "@kindling/protocol/testing"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { app, authenticated, cluster, masterState, run, start, submitArgs, workerArgs } from "./fixtures/cluster.js"

const secret = "an encrypted cluster's secret"
const encrypted = [...authenticated(secret), "--conf", "kindling.network.crypto.enabled=true"]

// A shuffle between executors, a broadcast and an accumulator (driver → executors → driver), a task result over
// the data plane's size for inline results; the answer goes to a file.
const crossesEveryLink = `import { App, Kindling } from "@kindling/app"
import { Effect } from "effect"
import { writeFileSync } from "node:fs"
export default App.make(([out]) =>
  Effect.gen(function*() {
    const kc = yield* Kindling
    const offset = kc.broadcast(1000)
    const seen = kc.longAccumulator("seen")
    const counts = yield* kc.range(0, 40000, 1, 4)
      .map((x, env) => { env.seen.add(1); return [x % 97, x + env.offset.value] }, { offset, seen })
      .reduceByKey((a, b) => a + b, undefined, 3)
      .collect()
    const big = yield* kc.parallelize([0, 1], 2).map((i) => "x".repeat(3_000_000) + i).collect()
    const sum = counts.reduce((total, [, n]) => total + n, 0)
    writeFileSync(out, \`keys \${counts.length} sum \${sum} seen \${seen.value} big \${big.map((s) => s.length).join(",")}\`)
  }))
`

// 0 + … + 39999 plus 40000 broadcast offsets of 1000.
const expected = `keys 97 sum ${(39999 * 40000) / 2 + 40000 * 1000} seen 40000 big 3000001,3000001`

describe("a cluster with encryption in transit", () => {
  it.scopedLive(
    "runs jobs across masters, workers, drivers and executors, in cluster and client mode",
    () =>
      Effect.gen(function*() {
        const { dir, master } = yield* cluster(2, encrypted, encrypted)
        const job = app(dir, "crosses.mjs", crossesEveryLink)

        const inCluster = Path.join(dir, "cluster-mode")
        const submitted = yield* run(submitArgs(master.url, ...encrypted, "--wait", job, inCluster))
        assert.strictEqual(submitted.code, 0, submitted.stdout + submitted.stderr)
        assert.match(submitted.stdout, / FINISHED\n$/)
        assert.strictEqual(Fs.readFileSync(inCluster, "utf8"), expected)

        const inClient = Path.join(dir, "client-mode")
        const client = yield* run(["submit", "--master", master.url, ...encrypted, job, inClient])
        assert.strictEqual(client.code, 0, client.stdout + client.stderr)
        assert.strictEqual(Fs.readFileSync(inClient, "utf8"), expected)

        const state = yield* masterState(master.url, secret, true)
        assert.strictEqual(state.workers.filter((worker) => worker.state === "ALIVE").length, 2)
      }),
    Deadlines.scaled(120_000)
  )

  it.scopedLive(
    "keeps out nodes and commands that do not encrypt, saying why on both sides",
    () =>
      Effect.gen(function*() {
        const { dir, master } = yield* cluster(1, encrypted, encrypted)
        const plainly = [...authenticated(secret), "--conf", "kindling.network.crypto.enabled=false"]
        const plain = yield* start(workerArgs(master.url, "127.0.0.1", Path.join(dir, "plain-worker"), plainly))
        yield* plain.waitFor(
          /encrypts its connections \(kindling\.network\.crypto\.enabled\) and the peer does not/,
          20_000
        )
        yield* master.node.waitFor(/closing an encrypted connection: this node encrypts its connections/)

        const status = yield* run(["status", "--master", master.url, ...plainly, "driver-none"])
        assert.notStrictEqual(status.code, 0)
        assert.match(status.stderr, /encrypts its connections/)

        // Encryption without a secret is refused before anything starts.
        const noSecret = yield* run([
          "status",
          "--master",
          master.url,
          "--conf",
          "kindling.authenticate=false",
          "--conf",
          "kindling.network.crypto.enabled=true"
        ])
        assert.strictEqual(noSecret.code, 1, noSecret.stderr)
        assert.match(
          noSecret.stderr,
          /kindling\.network\.crypto\.enabled: it needs kindling\.authenticate=true and its secret/
        )

        const state = yield* masterState(master.url, secret, true)
        assert.strictEqual(state.workers.length, 1)
      }),
    Deadlines.scaled(60_000)
  )
})
