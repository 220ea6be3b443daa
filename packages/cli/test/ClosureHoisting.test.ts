// The bundler's rewrite of an app's functions (ClosureHoisting), run the way a submitted app runs: the driver
// declares transformations with the original functions (UserFunctions.reference), their references travel as a
// task carries them (the records codec), and an executor makes the functions again from the module's hoisted
// copies (Evaluation.Functions). Whatever they compute must be what the originals compute.
import { assert, describe, it } from "@effect/vitest"
import { UserFunctions } from "@kindling/app"
import { ClosureHoisting } from "@kindling/cli"
import { Evaluation } from "@kindling/executor"
import { Records } from "@kindling/protocol"
import { Effect, FastCheck as fc } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"

// A port of a Spark program's helpers: module-level helpers that call each other, an imported module, and a
// driver that makes functions over its local variables and local helpers.
const source = `import { basename } from "node:path"

const SCALE = 10
const clean = (s: string) => s.trim().toLowerCase()
const words = (s: string) => clean(s).split(/\\s+/).filter((w) => w !== "")

export function driver(factor: number, names: Map<string, number>) {
  let counter = 0
  const label = (w: string) => \`\${w}:\${factor}\`
  function weight(w: string): number {
    return (names.get(w) ?? 0) * factor + SCALE
  }
  const fib = (n: number): number => n < 2 ? n : fib(n - 1) + fib(n - 2)
  class Unregistered { readonly n = factor }
  const instance = new Unregistered()
  return {
    helperChain: (line: string) => words(line).length,
    imported: (p: string) => basename(p),
    localHelper: (line: string) => words(line).map(label),
    declaration: (line: string) => words(line).map(weight),
    nested: (x: number) => [1, 2].map((y) => y * x * factor),
    curried: ((a: number) => (b: number) => a + b + factor)(5),
    recursive: (n: number) => fib(Math.abs(n) % 15),
    throws: (x: number) => {
      if (x < 0) throw new Error("negative: " + x)
      return x
    },
    assigns: (x: number) => {
      counter += x
      return counter
    },
    capturesInstance: (x: number) => x + instance.n,
    usesThis: function(this: { readonly k: number } | undefined, x: number) { return x + (this?.k ?? 0) }
  }
}
`
const throwLine = source.split("\n").findIndex((line) => line.includes("throw new Error")) + 1

type Made = Record<string, (...args: Array<any>) => any>

// The rewritten module, loaded from a file as the artifact is, with its import of the app API given the real one.
const load = async (): Promise<(factor: number, names: Map<string, number>) => Made> => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "kindling-hoisting-"))
  const rewritten = ClosureHoisting.rewriteFile(source, Path.join(dir, "app.ts"), "ts", "app.ts")
  const runtime = `import { UserFunctions as ${ClosureHoisting.runtime} } from "@kindling/app";`
  assert.include(rewritten, runtime)
  ;(globalThis as Record<string, unknown>)["__testUserFunctions"] = UserFunctions
  const file = Path.join(dir, "app.mjs")
  Fs.writeFileSync(
    file,
    rewritten.replace(runtime, `const ${ClosureHoisting.runtime} = globalThis.__testUserFunctions;`)
  )
  process.setSourceMapsEnabled(true)
  try {
    return (await import(pathToFileURL(file).href)).driver
  } finally {
    Fs.rmSync(dir, { recursive: true, force: true })
  }
}

// What an executor makes of a function the driver declared: its reference, through the records codec, resolved.
const executors = new Evaluation.Functions(
  (name) => UserFunctions.registered().get(name),
  (id) => UserFunctions.hoisted().get(id)
)
const shipped = (fn: (...args: Array<any>) => any) => {
  const ref = UserFunctions.reference(fn, undefined, "map", {})
  assert.strictEqual(ref._tag, "ClosureFunction")
  return executors.bind(Records.decode(Records.encode(ref)) as never)
}

describe("functions hoisted by the bundler", () => {
  it.live("compute on executors what they compute on the driver: helpers, imports, locals, nesting, recursion", () =>
    Effect.promise(async () => {
      const driver = await load()
      fc.assert(
        fc.property(
          fc.integer({ min: -5, max: 5 }),
          fc.array(fc.constantFrom("a", "B", " c ", "d d", "/x/y.txt"), { maxLength: 6 }),
          fc.integer({ min: 0, max: 40 }),
          (factor, pieces, n) => {
            const made = driver(factor, new Map([["a", 2], ["c", 3]]))
            const line = pieces.join(" ")
            for (const name of ["helperChain", "imported", "localHelper", "declaration"]) {
              assert.deepStrictEqual(shipped(made[name]!)(line), made[name]!(line), name)
            }
            for (const name of ["nested", "curried", "recursive", "usesThis"]) {
              assert.deepStrictEqual(shipped(made[name]!)(n), made[name]!(n), name)
            }
          }
        ),
        { numRuns: 50 }
      )
    }))

  it.live("refuse what would not mean the same on executors, when declared, naming it", () =>
    Effect.promise(async () => {
      const made = (await load())(2, new Map())
      assert.throws(() => shipped(made["assigns"]!), /app\.ts:\d+:\d+\) assigns to `counter`/)
      assert.throws(
        () => shipped(made["capturesInstance"]!),
        /needs `instance`, which cannot be sent: its class Unregistered is not registered/
      )
      // Functions in the environment are refused, not dropped: where they are is named.
      assert.throws(
        () => UserFunctions.reference(made["nested"]!, { parsers: [JSON.parse] }, "map", {}),
        /needs `env\.parsers\[0\]`.*is a function/
      )
    }))

  it.live("keep the source map through the rewrite: a failure on an executor names the line of the app's source", () =>
    Effect.promise(async () => {
      const made = (await load())(1, new Map())
      const error = (() => {
        try {
          shipped(made["throws"]!)(-1)
        } catch (thrown) {
          return thrown as Error
        }
      })()
      assert.match(error!.stack!, new RegExp(`app\\.ts:${throwLine}:\\d+`))
      // On the driver the original runs, and its frames read as they would without the rewrite: named as the
      // language names it, nothing of the rewrite's own names in them.
      const onDriver = (() => {
        try {
          made["throws"]!(-1)
        } catch (thrown) {
          return (thrown as Error).stack!
        }
      })()!
      assert.match(
        onDriver.split("\n")[1]!,
        new RegExp(`^\\s+at (Object\\.)?throws \\(.*app\\.ts:${throwLine}:\\d+\\)$`)
      )
      assert.notInclude(onDriver, "__kindling")
    }))

  it("leave a module without functions, or that is not an ES module, as it is", () => {
    const plain = "const x = 1;\nexport { x };\n"
    const common = "module.exports = { f: (x) => x + 1 };\n"
    for (const code of [plain, common]) {
      const { map } = { map: JSON.stringify({ version: 3, sources: ["a.js"], names: [], mappings: "" }) }
      assert.strictEqual(ClosureHoisting.rewrite(code, map, "a.js"), code)
    }
  })
})
