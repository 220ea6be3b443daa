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

const failing = `import { App, Kindling } from "@kindling/driver"
import { Effect } from "effect"
class Broken extends Error { name = "Broken" }
export default App.make(() => Effect.gen(function*() {
  yield* Kindling
  return yield* Effect.fail(new Broken("the app gave up"))
}))
`

describe("kindling submit in local mode", () => {
  it.live("runs examples/pi.ts in local[2]: Pi is roughly 3.1", () =>
    Effect.gen(function*() {
      const result = yield* run(["submit", "--master", "local[2]", "examples/pi.ts", "10"])
      assert.strictEqual(result.code, 0, result.stderr)
      assert.match(result.stdout, /^Pi is roughly 3\.1\d*\n$/)
    }), 60_000)

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
