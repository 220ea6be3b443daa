// Decommissioning on real processes: a worker taken out of service in the middle of a job's map stage. Its
// executors take no new task, finish the ones they run, hand their map outputs to executors on the other workers
// and stop; the job ends with the right answer and no map task runs twice (counted from the app's events); the
// worker exits once empty. Taken out with its signal (SIGPWR, as Spark's decommission-worker.sh), with
// `kindling decommission`, and refused or accepted by the master UI's `POST /workers/kill/`.
import { assert, describe, it } from "@effect/vitest"
import { Deadlines } from "@kindling/protocol/testing"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { app, clientSubmitArgs, cluster, masterState, run, start, startMaster } from "./fixtures/cluster.js"
import { uiUrl } from "./fixtures/ui.js"

// A cached dataset of 6 partitions, one on each of 6 executors of one core; then a shuffle of 12 map tasks: two waves. The first wave's tasks take 1 s; the second's
// wait for the test's go (a file) once they have run 1 s, so that the test can take a worker out while they run
// whatever the machine's pace. The app says on stderr when the first wave's outputs are all in, and prints the
// sums, how often each map partition succeeded, the stage attempts, the decommissioned executors, and the cached
// dataset's sum before and after with the calls of its function.
const job = (release: string) =>
  `import { App, Kindling } from "@kindling/app"
import { Console, Effect, Stream } from "effect"
export default App.make(() =>
  Effect.scoped(Effect.gen(function*() {
    const kc = yield* Kindling
    const partitionOf = new Map()
    const executorOf = new Map()
    const ranOn = []
    const successes = new Map()
    const attempts = []
    const decommissioned = []
    const events = yield* kc.subscribe
    yield* Effect.forkScoped(Stream.runForEach(events, (event) => Effect.sync(() => {
      if (event._tag === "StageSubmitted") attempts.push(\`\${event.stageId}.\${event.stageAttempt}\`)
      if (event._tag === "TaskStart") {
        partitionOf.set(event.taskId, \`\${event.stageId}/\${event.index}\`)
        executorOf.set(event.taskId, event.executorId)
      }
      if (event._tag === "ExecutorDecommissioned") decommissioned.push(event.executorId)
      if (event._tag === "TaskEnd" && event.succeeded) {
        const key = partitionOf.get(event.taskId)
        successes.set(key, (successes.get(key) ?? 0) + 1)
        ranOn.push([event.stageId, executorOf.get(event.taskId)])
        if ([...successes.keys()].filter((k) => k.startsWith("1/")).length === 6) console.error("FIRST WAVE DONE")
      }
    })))
    // A cached dataset, a partition on each executor, computed once: its blocks move too.
    const calls = kc.longAccumulator("calls")
    const cached = kc.range(0, 600, 1, 6).map((x, env) => { env.calls.add(1); return x }, { calls }).cache()
    const total = yield* cached.reduce((a, b) => a + b)
    const sums = yield* kc.range(0, 24, 1, 12)
      .map((x) => {
        const fs = process.getBuiltinModule("node:fs")
        const until = Date.now() + 1000
        while (Date.now() < until) {}
        for (let waited = 0; x >= 12 && !fs.existsSync(${JSON.stringify(release)}) && waited < 60000; waited += 50) {
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50)
        }
        return [x % 4, x]
      })
      .reduceByKey((a, b) => a + b, undefined, 2)
      .collect()
    const again = yield* cached.reduce((a, b) => a + b)
    yield* Effect.sleep("200 millis")
    const mapRuns = [...successes].filter(([key]) => key.startsWith("1/")).map(([, n]) => n)
    yield* Console.log(JSON.stringify({
      sums: [...sums].sort((a, b) => a[0] - b[0]),
      mapPartitions: mapRuns.length,
      mapRunsMax: Math.max(...mapRuns),
      attempts,
      decommissioned: decommissioned.length,
      // What each decommissioned executor holds when it stops taking tasks: the cached blocks it computed (stage 0)
      // and the map outputs (stage 1).
      held: Object.fromEntries(decommissioned.map((id) => [id, [1, 0].map((stage) =>
        ranOn.filter(([s, e]) => s === stage && e === id).length)])),
      cached: [total, again, calls.value]
    }))
  })))
`

// The cached dataset is computed once (600 calls) however many of its blocks moved.
const expected = {
  sums: [[0, 60], [1, 66], [2, 72], [3, 78]],
  mapPartitions: 12,
  mapRunsMax: 1,
  attempts: ["0.0", "1.0", "2.0", "3.0"],
  cached: [179700, 179700, 600]
}

// The driver's line for each round of an executor's migration.
const MIGRATING = /Migrating (\d+) map output\(s\) and (\d+) cached block\(s\) of executor (\S+) to/g

// Runs the job, takes a worker out once its first wave is in, and checks what the app saw.
type Cluster = Effect.Effect.Success<ReturnType<typeof cluster>>
const throughDecommission = (decommission: (started: Cluster) => Effect.Effect<void, unknown>) =>
  Effect.gen(function*() {
    const started = yield* cluster(3)
    const release = Path.join(started.dir, "release")
    const submit = yield* start(clientSubmitArgs(started.master.url, app(started.dir, "job.ts", job(release))))
    yield* submit.waitFor(/FIRST WAVE DONE/, 60_000)
    yield* decommission(started)
    // Both of the worker's executors are draining before the second wave may end.
    yield* submit.waitFor(/Decommissioning executor[^]*Decommissioning executor/, 30_000)
    Fs.writeFileSync(release, "go")
    assert.strictEqual(yield* submit.exited, 0, submit.output())
    const report = JSON.parse(submit.output().split("\n").find((line) => line.startsWith("{\"sums\""))!)
    // The right answer, each map partition computed once, no stage attempted twice, the worker's 2 executors
    // decommissioned.
    const { held, ...rest } = report
    assert.deepStrictEqual(rest, { ...expected, decommissioned: 2 })
    // Each decommissioned executor moved what it held, as counted from the app's events (how the tasks spread over
    // the executors depends on the machine's pace, so the counts are not fixed).
    const migrations = new Map<string, Array<number>>()
    for (const [, maps, blocks, from] of submit.output().matchAll(MIGRATING)) {
      if (!migrations.has(from!)) migrations.set(from!, [Number(maps), Number(blocks)])
    }
    const holding = Object.entries(held as Record<string, [number, number]>).filter(([, [m, b]]) => m + b > 0)
    assert.isAbove(holding.length, 0, JSON.stringify(held))
    assert.deepStrictEqual(migrations, new Map(holding))
    assert.notMatch(submit.output(), /Lost executor|Resubmitting/)
    // The decommissioned worker exits by itself, 0, once its executors are gone; the others run on.
    const worker = started.workers[0]!
    assert.strictEqual(yield* worker.node.exited, 0, worker.node.output())
    assert.match(worker.node.output(), /Decommissioning this worker/)
    assert.match(worker.node.output(), /Decommissioned, and no executor or driver runs here any more: exiting/)
    assert.match(started.master.node.output(), /Decommissioning worker/)
    assert.notMatch(started.master.node.output(), /unknown executor/)
    const state = yield* masterState(started.master.url)
    assert.strictEqual(state.workers.filter((w) => w.state === "ALIVE").length, 2)
    return started
  })

describe("decommissioning", () => {
  it.scopedLive(
    "a worker signalled mid-job hands its map outputs over and exits; the job is right and recomputes nothing",
    () => throughDecommission(({ workers }) => workers[0]!.node.kill("SIGPWR")),
    Deadlines.scaled(120_000)
  )

  it.scopedLive(
    "kindling decommission takes a worker out by id; the master UI refuses remote hosts and names no worker",
    () =>
      throughDecommission(({ master, workers }) =>
        Effect.gen(function*() {
          const state = yield* masterState(master.url)
          const id = state.workers.find((w) => w.port === workers[0]!.port)!.id
          const result = yield* run(["decommission", "--master", master.url, id])
          assert.strictEqual(result.code, 0, result.stderr)
          assert.deepStrictEqual(JSON.parse(result.stdout), [{ master: master.url, decommissioned: 1 }])
          // A host with no worker: 404 from the UI, and the command says no worker matched.
          const none = yield* run(["decommission", "--master", master.url, "no-such-host.invalid"])
          assert.strictEqual(none.code, 1)
          assert.match(none.stderr, /No live worker matched no-such-host\.invalid/)
          const ui = yield* uiUrl(master.node, "master")
          const response = yield* Effect.promise(() =>
            fetch(`${ui}/workers/kill/?host=no-such-host.invalid`, { method: "POST" })
          )
          assert.strictEqual(response.status, 404)
        })
      ),
    Deadlines.scaled(120_000)
  )

  it.scopedLive(
    "the master UI's POST /workers/kill/ decommissions a host's idle workers, which exit at once; DENY refuses it",
    () =>
      Effect.gen(function*() {
        const { master, workers } = yield* cluster(1)
        const ui = yield* uiUrl(master.node, "master")
        const kill = (url: string, host: string) =>
          Effect.promise(() => fetch(`${url}/workers/kill/?host=${host}`, { method: "POST" })).pipe(
            Effect.flatMap((response) => Effect.promise(async () => [response.status, await response.text()] as const))
          )
        assert.deepStrictEqual(yield* kill(ui, "127.0.0.1"), [200, "Decommissioning 1 worker(s)"])
        // Nothing runs there: it exits at once.
        assert.strictEqual(yield* workers[0]!.node.exited, 0, workers[0]!.node.output())
        const denying = yield* startMaster(["--conf", "kindling.master.ui.decommission.allow.mode=DENY"])
        const [status, text] = yield* kill(yield* uiUrl(denying.node, "master"), "127.0.0.1")
        assert.strictEqual(status, 405)
        assert.include(text, "kindling.master.ui.decommission.allow.mode is DENY")
      }),
    Deadlines.scaled(60_000)
  )
})
