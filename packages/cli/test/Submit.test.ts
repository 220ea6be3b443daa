// `kindling submit` running apps in local mode: the real command, as a process, on real app files.
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { app, run, temporaryDirectory } from "./fixtures/cluster.js"

// Uses an exported function (it travels by name: the task threads import the bundled app) and one that does
// not capture anything (it travels as source text).
const wordLengths = `import { App, Kindling } from "@kindling/driver"
import { Console, Effect } from "effect"
const vowels = new Set(["a", "e", "i", "o", "u"])
export const countVowels = (word: string): number => [...word].filter((c) => vowels.has(c)).length
export default App.make((args) =>
  Effect.gen(function*() {
    const kc = yield* Kindling
    const total = yield* kc.parallelize(args, 2).map(countVowels).reduce((a, b) => a + b)
    const longest = yield* kc.parallelize(args, 2).map((w) => w.length).fold(0, (a, b) => Math.max(a, b))
    yield* Console.log(\`vowels \${total}, longest \${longest}\`)
  }))
`

// Partition 0's first attempt kills its executor's process (SIGKILL), as a crash would, mid-job; the job must
// still give the right answer, its lost tasks run again on the other executor.
const executorDies = `import { App, Kindling } from "@kindling/driver"
import { Console, Effect } from "effect"
export default App.make(([marker]) =>
  Effect.gen(function*() {
    const kc = yield* Kindling
    const sum = yield* kc.range(0, 1000, 1, 4).mapPartitionsWithIndex((partition, records, env) => {
      const fs = process.getBuiltinModule("node:fs")
      if (partition === 0 && !fs.existsSync(env.marker)) {
        fs.writeFileSync(env.marker, String(process.pid))
        process.kill(process.pid, "SIGKILL")
      }
      return records
    }, { marker }).reduce((a, b) => a + b)
    yield* Console.log(\`sum \${sum}\`)
  }))
`

const failing = `import { App, Kindling } from "@kindling/driver"
import { Effect } from "effect"
class Broken extends Error { name = "Broken" }
export default App.make(() => Effect.gen(function*() {
  yield* Kindling
  return yield* Effect.fail(new Broken("the app gave up"))
}))
`

describe("kindling submit", () => {
  it.live("runs examples/pi.ts in local[2]: Pi is roughly 3.1", () =>
    Effect.gen(function*() {
      const result = yield* run(["submit", "--master", "local[2]", "examples/pi.ts", "10"])
      assert.strictEqual(result.code, 0, result.stderr)
      assert.match(result.stdout, /^Pi is roughly 3\.1\d*\n$/)
    }), 60_000)

  it.live(
    "runs examples/pi.ts on local-cluster[2,1,1024]: executors are processes of in-process workers",
    () =>
      Effect.gen(function*() {
        const result = yield* run(["submit", "--master", "local-cluster[2,1,1024]", "examples/pi.ts", "10"])
        assert.strictEqual(result.code, 0, result.stderr)
        assert.match(result.stdout, /^Pi is roughly 3\.1\d*\n$/)
        assert.match(result.stderr, /Registered executor 0 on 127\.0\.0\.1/)
        assert.notMatch(result.stderr, /WARN|ERROR/)
      }),
    60_000
  )

  it.scopedLive(
    "an executor SIGKILLed mid-job: its tasks run again elsewhere and the answer is right",
    () =>
      Effect.gen(function*() {
        const dir = yield* temporaryDirectory
        const marker = `${dir}/killed`
        const result = yield* run([
          "submit",
          "--master",
          "local-cluster[2,1,1024]",
          app(dir, "dies.ts", executorDies),
          marker
        ])
        assert.strictEqual(result.code, 0, result.stderr)
        assert.strictEqual(result.stdout, "sum 499500\n")
        assert.match(result.stderr, /Lost executor \d+ on 127\.0\.0\.1/)
      }),
    60_000
  )

  it.scopedLive("ships exported functions by name and self-contained ones as source", () =>
    Effect.gen(function*() {
      const dir = yield* temporaryDirectory
      const result = yield* run([
        "submit",
        "--master",
        "local[2]",
        app(dir, "words.ts", wordLengths),
        "spark",
        "kindling",
        "effect"
      ])
      assert.strictEqual(result.code, 0, result.stderr)
      assert.strictEqual(result.stdout, "vowels 5, longest 8\n")
    }), 60_000)

  it.scopedLive("an app whose main fails exits 1 with its error", () =>
    Effect.gen(function*() {
      const dir = yield* temporaryDirectory
      const result = yield* run(["submit", "--master", "local[1]", app(dir, "fails.ts", failing)])
      assert.strictEqual(result.code, 1)
      assert.include(result.stderr, "Broken: the app gave up")
    }), 60_000)

  it.scopedLive(
    "an app with a syntax error gets esbuild's message before anything starts",
    () =>
      Effect.gen(function*() {
        const dir = yield* temporaryDirectory
        const result = yield* run(["submit", "--master", "local[2]", app(dir, "bad.ts", "export default (;\n")])
        assert.strictEqual(result.code, 1)
        assert.include(result.stderr, "cannot be built")
        assert.include(result.stderr, "bad.ts:1:16")
        assert.notInclude(result.stderr, "Registered executor")
      }),
    60_000
  )

  it.live("a master that is not one gets a usage error", () =>
    Effect.gen(function*() {
      const result = yield* run(["submit", "--master", "local[0]", "examples/pi.ts"])
      assert.strictEqual(result.code, 1)
      assert.include(result.stderr, "Could not parse the master URL 'local[0]'")
    }), 60_000)
})
