// The workers' shuffle service on real processes: an app whose executors' map outputs the workers serve loses an
// executor (killed by the kernel, say) after its map stage; the next job reads the shuffle again and runs no map
// task twice — the dead executor's outputs are fetched from its worker. The app's files go once it has finished.
import { assert, describe, it } from "@effect/vitest"
import { Deadlines } from "@kindling/protocol/testing"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { app, clientSubmitArgs, cluster, run } from "./fixtures/cluster.js"

// 8 map tasks on 4 executors of one core, a job over the shuffle; then a task kills its own executor; then a second
// job over the same shuffle. Prints the sums, how often each map partition succeeded, how many map outputs the
// killed executor held, and the stage attempts of the map stage.
const job = (marker: string) =>
  `import { App, Kindling } from "@kindling/app"
import { Console, Effect, Stream } from "effect"
export default App.make(() =>
  Effect.scoped(Effect.gen(function*() {
    const kc = yield* Kindling
    const seen = []
    const events = yield* kc.subscribe
    yield* Effect.forkScoped(Stream.runForEach(events, (event) => Effect.sync(() => seen.push(event))))
    const sums = kc.range(0, 4000, 1, 8)
      .map((x) => { const until = Date.now() + (x % 500 === 0 ? 300 : 0); while (Date.now() < until) {} return [x % 5, x] })
      .reduceByKey((a, b) => a + b, undefined, 3)
    const first = yield* sums.collect()
    yield* kc.range(0, 4, 1, 4).foreach(() => {
      const fs = process.getBuiltinModule("node:fs")
      if (!fs.existsSync(${JSON.stringify(marker)})) {
        fs.writeFileSync(${JSON.stringify(marker)}, "")
        process.kill(process.pid, "SIGKILL")
      }
    })
    const again = yield* sums.collect()
    yield* Effect.sleep("200 millis")
    const removed = seen.find((e) => e._tag === "ExecutorRemoved")
    // Every attempt of the map stage, in either job (a job that needs it again runs it under a stage of its own).
    const mapName = seen.find((e) => e._tag === "StageSubmitted" && e.name.startsWith("map")).name
    const mapStages = new Set(seen.filter((e) => e._tag === "StageSubmitted" && e.name === mapName).map((e) => e.stageId))
    const placed = new Map(seen.filter((e) => e._tag === "TaskStart" && mapStages.has(e.stageId)).map((e) => [e.taskId, e]))
    const runs = new Map()
    let held = 0
    for (const end of seen.filter((e) => e._tag === "TaskEnd" && e.succeeded && placed.has(e.taskId))) {
      const start = placed.get(end.taskId)
      runs.set(start.index, (runs.get(start.index) ?? 0) + 1)
      if (start.executorId === removed?.executorId) held++
    }
    const order = (rows) => [...rows].sort((a, b) => a[0] - b[0])
    yield* Console.log(JSON.stringify({
      same: JSON.stringify(order(first)) === JSON.stringify(order(again)),
      sums: order(again),
      mapPartitions: runs.size,
      mapRunsMax: Math.max(...runs.values()),
      mapAttempts: seen.filter((e) => e._tag === "StageSubmitted" && e.name === mapName).length,
      lostHeld: held
    }))
  })))
`

const withService = ["--conf", "kindling.shuffle.service.enabled=true"]

describe("the workers' shuffle service", () => {
  it.scopedLive(
    "an executor killed after its map stage costs no map task: its outputs are served by its worker",
    () =>
      Effect.gen(function*() {
        const { dir, master, workers } = yield* cluster(2, [], withService)
        const marker = Path.join(dir, "killed")
        const result = yield* run(clientSubmitArgs(master.url, ...withService, app(dir, "job.ts", job(marker))))
        assert.strictEqual(result.code, 0, result.stderr)
        const report = JSON.parse(result.stdout.split("\n").find((line) => line.startsWith("{"))!)
        const expected = [0, 1, 2, 3, 4].map((k) => [
          k,
          Array.from({ length: 800 }, (_, i) => i * 5 + k).reduce((a, b) => a + b)
        ])
        assert.deepStrictEqual(report.sums, expected)
        assert.isTrue(report.same)
        // Each map partition ran once, in one attempt of its stage, though the executor that died held some.
        assert.deepStrictEqual(
          { partitions: report.mapPartitions, most: report.mapRunsMax, attempts: report.mapAttempts },
          { partitions: 8, most: 1, attempts: 1 }
        )
        assert.isAbove(report.lostHeld, 0, "the killed executor held no map output: the test proves nothing")
        assert.match(result.stderr, /its map outputs served by 127\.0\.0\.1:\d+/)
        assert.notMatch(result.stderr, /Resubmitting|Unregistered/)
        for (const worker of workers) assert.match(worker.node.output(), /Serving its executors' map outputs/)
        // Once the app has finished, nothing of it is left in the workers' local dirs.
        const appId = /app-\d{14}-\d{4}/.exec(result.stderr)![0]
        const localDirs = Fs.readdirSync(Os.tmpdir())
          .filter((name) => workers.some((w) => name.startsWith(`kindling-worker-${w.node.pid}-`)))
          .map((name) => Path.join(Os.tmpdir(), name))
        assert.isAbove(localDirs.length, 0)
        for (let waited = 0; localDirs.some((d) => Fs.existsSync(Path.join(d, appId))) && waited < 100; waited++) {
          yield* Effect.sleep("100 millis")
        }
        for (const localDir of localDirs) assert.isFalse(Fs.existsSync(Path.join(localDir, appId)), localDir)
      }),
    Deadlines.scaled(120_000)
  )
})
