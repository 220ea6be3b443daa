// Shuffles, persisted datasets and shared variables on local-cluster: executors are real processes, shuffle
// blocks and broadcasts cross TCP between them, and an executor can die for real.
import { assert, describe, it } from "@effect/vitest"
import { Deadlines } from "@kindling/protocol/testing"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { app, root, run, temporaryDirectory } from "./fixtures/cluster.js"

// The first reduce task that runs on an executor holding map outputs SIGKILLs that executor: the outputs are
// lost, the reduce stage meets a fetch failure, and the lost map partitions run again. Prints the answer and how many
// attempts the map stage took.
const reduceKillsExecutor = `import { App, Kindling } from "@kindling/app"
import { Console, Effect, Stream } from "effect"
export default App.make(([marker]) =>
  Effect.scoped(Effect.gen(function*() {
    const kc = yield* Kindling
    const attempts = new Set()
    const events = yield* kc.subscribe
    yield* Effect.forkScoped(Stream.runForEach(events, (event) => Effect.sync(() => {
      if (event._tag === "StageSubmitted" && event.name.startsWith("map at")) attempts.add(event.stageAttempt)
    })))
    const counts = yield* kc.range(0, 20000, 1, 4)
      .map((x): [number, number] => [x % 100, 1])
      .reduceByKey((a, b) => a + b, undefined, 4)
      .mapPartitions((records, env) => {
        const fs = process.getBuiltinModule("node:fs")
        // Its executor's map outputs are in its work dir, the task's working directory.
        const holdsMapOutput = fs.existsSync("blockmgr") && fs.readdirSync("blockmgr").some((name) => name.endsWith(".data"))
        if (holdsMapOutput && !fs.existsSync(env.marker)) {
          fs.writeFileSync(env.marker, String(process.pid))
          process.kill(process.pid, "SIGKILL")
        }
        // Reduce tasks that take a moment, so that both executors run some.
        const until = Date.now() + 200
        while (Date.now() < until) {}
        return records
      }, { marker })
      .collect()
    const right = counts.length === 100 && counts.every(([, n]) => n === 200)
    yield* Console.log(\`\${right ? "right" : "wrong"} \${counts.length} keys; map stage attempts \${attempts.size}\`)
  })))
`

// A cached dataset counts its computations. After two jobs, the task over its partition 0 — which runs where that
// partition is cached — SIGKILLs its executor, taking the partitions cached there with it; a third job's answer
// is still right. Prints the sums, the count after each job, and how many partitions were cached on the executor
// that died (from the first job's task events).
const cacheSurvivesExecutorLoss = `import { App, Kindling } from "@kindling/app"
import { Console, Effect, Stream } from "effect"
export default App.make(([marker]) =>
  Effect.scoped(Effect.gen(function*() {
    const kc = yield* Kindling
    const seen = []
    const events = yield* kc.subscribe
    yield* Effect.forkScoped(Stream.runForEach(events, (event) => Effect.sync(() => seen.push(event))))
    const calls = kc.longAccumulator("calls")
    const cached = kc.range(0, 4000, 1, 4).map((x, env) => {
      env.calls.add(1)
      return x * 2
    }, { calls }).cache()
    const first = yield* cached.reduce((a, b) => a + b)
    const afterFirst = calls.value
    const again = yield* cached.reduce((a, b) => a + b)
    const afterSecond = calls.value
    yield* cached.foreach((x, env) => {
      const fs = process.getBuiltinModule("node:fs")
      if (x === 0 && !fs.existsSync(env.marker)) {
        fs.writeFileSync(env.marker, String(process.pid))
        process.kill(process.pid, "SIGKILL")
      }
    }, { marker })
    const third = yield* cached.reduce((a, b) => a + b)
    yield* Effect.sleep("100 millis")
    // Where the first job's tasks succeeded, and which executor died.
    const firstStage = seen.find((e) => e._tag === "JobStart").stageIds.at(-1)
    const started = new Map(seen.filter((e) => e._tag === "TaskStart" && e.stageId === firstStage).map((e) => [e.taskId, e.executorId]))
    const placed = seen.filter((e) => e._tag === "TaskEnd" && e.succeeded && started.has(e.taskId)).map((e) => started.get(e.taskId))
    const died = seen.find((e) => e._tag === "ExecutorRemoved").executorId
    const lost = placed.filter((executor) => executor === died).length
    yield* Console.log(\`sums \${first} \${again} \${third}; calls \${afterFirst} \${afterSecond} \${calls.value}; lost \${lost}\`)
  })))
`

// A broadcast table read by 24 tasks over two executors, and an accumulator over a task whose first attempt
// throws (it counts once, for the attempt that succeeded).
const sharedVariables = `import { App, Kindling } from "@kindling/app"
import { Console, Effect } from "effect"
export default App.make(([marker]) =>
  Effect.gen(function*() {
    const kc = yield* Kindling
    const table = kc.broadcast(Object.fromEntries(Array.from({ length: 5000 }, (_, i) => ["k" + i, i])))
    const total = yield* kc.range(0, 24, 1, 24).map((x, env) => env.table.value["k" + x * 100], { table }).reduce((a, b) => a + b)
    const seen = kc.longAccumulator("seen")
    yield* kc.range(0, 100, 1, 4).foreach((x, env) => {
      env.seen.add(1)
      const fs = process.getBuiltinModule("node:fs")
      if (x === 99 && !fs.existsSync(env.marker)) {
        fs.writeFileSync(env.marker, "")
        throw new Error("the first attempt of the last task fails")
      }
    }, { seen, marker })
    yield* Console.log(\`total \${total}; seen \${seen.value}\`)
  }))
`

describe("the examples", () => {
  it.scopedLive(
    "examples/wordcount.ts writes every word with its count, most frequent first, then by word",
    () =>
      Effect.gen(function*() {
        const dir = yield* temporaryDirectory
        const output = Path.join(dir, "counts")
        const result = yield* run([
          "submit",
          "--master",
          "local-cluster[2,1,1024]",
          "examples/wordcount.ts",
          "README.md",
          output
        ])
        assert.strictEqual(result.code, 0, result.stderr)
        const counts = new Map<string, number>()
        for (const word of Fs.readFileSync(Path.join(root, "README.md"), "utf8").split(/\s+/)) {
          if (word.length > 0) counts.set(word, (counts.get(word) ?? 0) + 1)
        }
        const expected = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
        const parts = Fs.readdirSync(output).filter((name) => name.startsWith("part-")).sort()
        const written = parts.map((name) => Fs.readFileSync(Path.join(output, name), "utf8")).join("")
        assert.strictEqual(written, expected.map(([word, count]) => `${word}\t${count}\n`).join(""))
        assert.include(result.stdout, `${String(expected[0]![1]).padStart(10)}  ${expected[0]![0]}`)
      }),
    Deadlines.scaled(60_000)
  )

  it.live(
    "examples/pagerank.ts ranks the pages of its sample graph as Spark's SparkPageRank does",
    () =>
      Effect.gen(function*() {
        const result = yield* run([
          "submit",
          "--master",
          "local[2]",
          "examples/pagerank.ts",
          "examples/data/links.txt",
          "10"
        ])
        assert.strictEqual(result.code, 0, result.stderr)
        // The same iterations computed directly on the sample graph.
        assert.strictEqual(
          result.stdout,
          "url_1 has rank 1.5833\nurl_4 has rank 1.5360\nurl_3 has rank 0.8052\nurl_2 has rank 0.5040\n"
        )
      }),
    Deadlines.scaled(60_000)
  )

  it.live("examples/join.ts joins orders to customers", () =>
    Effect.gen(function*() {
      const result = yield* run(["submit", "--master", "local[2]", "examples/join.ts", "100000"])
      assert.strictEqual(result.code, 0, result.stderr)
      assert.match(
        result.stdout,
        /^customer-981 spent 5610\n(customer-\d+ spent 5600\n){4}10 customers ordered nothing\n$/
      )
    }), Deadlines.scaled(60_000))
})

// Submits an app written to a fresh directory on local-cluster[2,1,1024], with a marker path in that directory as
// its argument (its tasks create it, so that what they do happens once); fails unless it exits 0.
const submitWithMarker = (name: string, source: string) =>
  Effect.gen(function*() {
    const dir = yield* temporaryDirectory
    const result = yield* run([
      "submit",
      "--master",
      "local-cluster[2,1,1024]",
      app(dir, name, source),
      `${dir}/marker`
    ])
    assert.strictEqual(result.code, 0, result.stderr)
    return result
  })

describe("shuffles on local-cluster", () => {
  it.live(
    "on local-cluster[2,1,1024], random pipelines of narrow and shuffle operations give the model's results",
    () =>
      Effect.gen(function*() {
        const result = yield* run([
          "submit",
          "--master",
          "local-cluster[2,1,1024]",
          "packages/cli/test/fixtures/pipelines-app.ts",
          "12"
        ])
        assert.strictEqual(result.code, 0, result.stderr)
        assert.strictEqual(result.stdout, "ok 12\n")
      }),
    Deadlines.scaled(90_000)
  )

  it.scopedLive(
    "an executor SIGKILLed while the reduce stage runs: fetch failure, the map partitions run again, the answer is right",
    () =>
      Effect.gen(function*() {
        const result = yield* submitWithMarker("reduce-kills.ts", reduceKillsExecutor)
        assert.match(result.stdout, /^right 100 keys; map stage attempts ([2-9])\n$/)
        assert.match(result.stderr, /Lost executor \d+ on 127\.0\.0\.1/)
      }),
    Deadlines.scaled(90_000)
  )

  it.scopedLive(
    "a cached dataset serves the next job without computing again; after its executor dies it is recomputed, still right",
    () =>
      Effect.gen(function*() {
        const result = yield* submitWithMarker("cache.ts", cacheSurvivesExecutorLoss)
        const match = /^sums (\d+) (\d+) (\d+); calls (\d+) (\d+) (\d+); lost (\d+)\n$/.exec(result.stdout)
        assert.isNotNull(match, result.stdout)
        const [, first, again, third, afterFirst, afterSecond, afterThird, lost] = match!.map(Number)
        assert.deepStrictEqual([first, again, third], [15_996_000, 15_996_000, 15_996_000])
        assert.strictEqual(afterFirst, 4000)
        assert.strictEqual(afterSecond, 4000, "the second job read the cached partitions")
        // Partition 0 at least was cached where its task killed the executor; each lost one was computed again,
        // once, and no other.
        assert.isAtLeast(lost!, 1)
        assert.strictEqual(afterThird, 4000 + 1000 * lost!)
      }),
    Deadlines.scaled(90_000)
  )

  it.scopedLive(
    "a broadcast is fetched once per executor; an accumulator counts a retried task once",
    () =>
      Effect.gen(function*() {
        const result = yield* submitWithMarker("shared.ts", sharedVariables)
        assert.strictEqual(
          result.stdout,
          `total ${Array.from({ length: 24 }, (_, x) => x * 100).reduce((a, b) => a + b)}; seen 100\n`
        )
        const sends = result.stderr.split("\n").filter((line) => line.includes("Sending broadcast 0"))
        assert.isAtLeast(sends.length, 1)
        assert.isAtMost(sends.length, 2, "once per executor, not once per task")
      }),
    Deadlines.scaled(90_000)
  )
})
