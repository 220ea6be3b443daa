import { assert, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const packages = fileURLToPath(new URL("../../", import.meta.url))

const sources = (dir: string): Array<string> =>
  Fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = Path.join(dir, entry.name)
    return entry.isDirectory() ? sources(path) : entry.name.endsWith(".ts") ? [path] : []
  })

// Relative value imports (type-only imports are erased and cannot form a cycle at run time).
const importsOf = (file: string): Array<string> => {
  const text = Fs.readFileSync(file, "utf8")
  return [...text.matchAll(/^import (?!type )[^"]*? from "(\.[^"]+)"/gm)].map((match) =>
    Path.resolve(Path.dirname(file), match[1]!.replace(/\.js$/, ".ts"))
  )
}

describe("module structure", () => {
  it("no package's modules import each other in a cycle", () => {
    const cycles: Array<string> = []
    for (const pkg of Fs.readdirSync(packages)) {
      const src = Path.join(packages, pkg, "src")
      if (!Fs.existsSync(src)) continue
      const graph = new Map(sources(src).map((file) => [file, importsOf(file)]))
      const state = new Map<string, "visiting" | "done">()
      const visit = (file: string, path: Array<string>) => {
        if (state.get(file) === "done") return
        if (state.get(file) === "visiting") {
          cycles.push(path.slice(path.indexOf(file)).concat(file).map((f) => Path.relative(packages, f)).join(" → "))
          return
        }
        state.set(file, "visiting")
        for (const next of graph.get(file) ?? []) visit(next, [...path, file])
        state.set(file, "done")
      }
      for (const file of graph.keys()) visit(file, [])
    }
    assert.deepStrictEqual(cycles, [])
  })
})
