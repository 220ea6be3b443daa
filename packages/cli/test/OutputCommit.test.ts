// Saved output on local-cluster (executors as processes) when attempts go wrong mid-write: a task that fails
// half-way, an executor SIGKILLed half-way through a part, a straggler whose speculative copy finishes first. In
// each case the directory ends with one whole part per partition and `_SUCCESS` — nothing partial, nothing twice,
// no attempt's leftovers — and reads back to the right records.
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { app, run, temporaryDirectory } from "./fixtures/cluster.js"

// 4 partitions of 20,000 rows written as CSV; partition 0's first attempt goes wrong after 12,000 of its rows
// (some 64 KiB batches of them already in its file), as `how` says. Prints the sum of the rows read back.
const writer = `import { App, Kindling } from "@kindling/app"
import { Console, Effect } from "effect"
export default App.make(([out, marker, how]) =>
  Effect.gen(function*() {
    const kc = yield* Kindling
    const rows = kc.range(0, 80000, 1, 4).map((n, env) => {
      const fs = process.getBuiltinModule("node:fs")
      if (env.task.partitionId === 0 && env.task.attemptNumber === 0 && n === 12000 && !fs.existsSync(env.marker)) {
        fs.writeFileSync(env.marker, String(process.pid))
        if (env.how === "throw") throw new Error("this attempt fails half-way")
        if (env.how === "kill") process.kill(process.pid, "SIGKILL")
        // A straggler: the rest of its rows come slowly, so that a speculative copy elsewhere finishes first.
        const until = Date.now() + 8000
        while (Date.now() < until) {}
      }
      return { n, label: "row " + n }
    }, { task: kc.taskContext, marker, how })
    yield* rows.write.csv(out, { header: true, fields: "n LONG, label STRING" })
    const back = yield* kc.read.csv(out, { header: true, fields: "n LONG, label STRING" })
    const sum = yield* back.map((row) => Number(row.n)).reduce((a, b) => a + b)
    yield* Console.log(\`sum \${sum} rows \${yield* back.count()}\`)
  }))
`

const speculation = [
  "--conf",
  "kindling.speculation=true",
  "--conf",
  "kindling.speculation.interval=100ms",
  "--conf",
  "kindling.speculation.quantile=0.5"
]

describe("saved output when attempts go wrong mid-write", () => {
  for (const how of ["throw", "kill", "straggle"] as const) {
    it.scopedLive(`an attempt that ${how}s half-way leaves no partial or second part`, () =>
      Effect.gen(function*() {
        const dir = yield* temporaryDirectory
        const source = app(dir, "writer.ts", writer)
        const out = Path.join(dir, "out")
        const marker = Path.join(dir, "marker")
        const result = yield* run([
          "submit",
          "--master",
          "local-cluster[2,1,1024]",
          ...(how === "straggle" ? speculation : []),
          source,
          out,
          marker,
          how
        ])
        assert.strictEqual(result.code, 0, result.stderr)
        assert.isTrue(Fs.existsSync(marker), "the attempt went wrong as planned")
        assert.strictEqual(result.stdout.trim(), `sum ${(79999 * 80000) / 2} rows 80000`)
        const names = Fs.readdirSync(out).sort()
        assert.strictEqual(names.filter((name) => /^part-0000[0-3]-.*\.csv$/.test(name)).length, 4, names.join())
        assert.deepStrictEqual(names.filter((name) => !name.startsWith("part-")), ["_SUCCESS"])
        if (how === "straggle") assert.include(result.stderr, "speculative")
      }), { timeout: 120_000 })
  }
})
