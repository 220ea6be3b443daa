// Saved output on local-cluster (executors as processes) when attempts go wrong mid-write, all in one job: a
// task that fails half-way, an executor SIGKILLed half-way through a part, and a straggler whose speculative copy
// finishes first. The directory ends with one whole part per partition and `_SUCCESS` — nothing partial,
// nothing twice, no attempt's leftovers — and reads back to the right records.
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { app, run, temporaryDirectory } from "./fixtures/cluster.js"

// 4 partitions of 20,000 rows written as CSV. The first attempt of partition 0 throws after 12,000 of its rows
// (some 64 KiB batches of them already in its file), partition 1's kills its executor there, and partition 2's
// straggles there, so that a speculative copy elsewhere finishes first. Each leaves a marker file when it does.
// Prints the sum of the rows read back.
const writer = `import { App, Kindling } from "@kindling/app"
import { Console, Effect } from "effect"
export default App.make(([out, markers]) =>
  Effect.gen(function*() {
    const kc = yield* Kindling
    const rows = kc.range(0, 80000, 1, 4).map((n, env) => {
      const fs = process.getBuiltinModule("node:fs")
      const how = ["throw", "kill", "straggle"][env.task.partitionId]
      const marker = env.markers + "/" + how
      if (how !== undefined && env.task.attemptNumber === 0 && n % 20000 === 12000 && !fs.existsSync(marker)) {
        fs.writeFileSync(marker, String(process.pid))
        if (how === "throw") throw new Error("this attempt fails half-way")
        if (how === "kill") process.kill(process.pid, "SIGKILL")
        const until = Date.now() + 8000
        while (Date.now() < until) {}
      }
      return { n, label: "row " + n }
    }, { task: kc.taskContext, markers })
    yield* rows.write.csv(out, { header: true, fields: "n LONG, label STRING" })
    const back = yield* kc.read.csv(out, { header: true, fields: "n LONG, label STRING" })
    const sum = yield* back.map((row) => Number(row.n)).reduce((a, b) => a + b)
    yield* Console.log(\`sum \${sum} rows \${yield* back.count()}\`)
  }))
`

describe("saved output when attempts go wrong mid-write", () => {
  it.scopedLive(
    "attempts that fail, die or straggle half-way leave no partial or second part",
    () =>
      Effect.gen(function*() {
        const dir = yield* temporaryDirectory
        const source = app(dir, "writer.ts", writer)
        const out = Path.join(dir, "out")
        const markers = Path.join(dir, "markers")
        Fs.mkdirSync(markers)
        const result = yield* run([
          "submit",
          "--master",
          "local-cluster[2,1,1024]",
          "--conf",
          "kindling.speculation=true",
          "--conf",
          "kindling.speculation.interval=100ms",
          "--conf",
          "kindling.speculation.quantile=0.25",
          source,
          out,
          markers
        ])
        assert.strictEqual(result.code, 0, result.stderr)
        assert.deepStrictEqual(Fs.readdirSync(markers).sort(), ["kill", "straggle", "throw"], "each went wrong")
        assert.strictEqual(result.stdout.trim(), `sum ${(79999 * 80000) / 2} rows 80000`)
        assert.include(result.stderr, "speculative")
        const names = Fs.readdirSync(out).sort()
        assert.strictEqual(names.filter((name) => /^part-0000[0-3]-.*\.csv$/.test(name)).length, 4, names.join())
        assert.deepStrictEqual(names.filter((name) => !name.startsWith("part-")), ["_SUCCESS"])
      }),
    { timeout: 120_000 }
  )
})
