/**
 * An app's `import { Effect, Schema, pipe } from "effect"`, as its artifact imports it: one import of each module it
 * names (`effect/Effect`, `effect/Schema`, `effect/Function`) rather than of effect's index, which loads every
 * module of effect, and fast-check with them — a third of what a driver or a task thread loads to import an app.
 * The modules are the ones the index re-exports, so the app gets the very same. An import this cannot rewrite
 * exactly (a name it does not know, a type-only name) is left as it is.
 *
 * @since 0.1.0
 */
import * as Fs from "node:fs"
import * as Path from "node:path"

// What effect's index exports besides its modules' namespaces.
const functionExports = new Set(["absurd", "flow", "hole", "identity", "pipe", "unsafeCoerce"])

const importFromIndex = /^import\s*\{([^}]*)\}\s*from\s*(["'])effect\2;?/gm

/**
 * `source` with each named import from effect's index made into imports of the modules named; `modules` are the
 * names of effect's modules (`Effect`, `Schema`, …).
 *
 * @since 0.1.0
 */
export const rewrite = (source: string, modules: ReadonlySet<string>): string =>
  source.replace(importFromIndex, (statement: string, list: string) => {
    const specifiers = list.split(",").map((specifier) => specifier.trim()).filter((specifier) => specifier !== "")
    const imports: Array<string> = []
    const fromFunction: Array<string> = []
    for (const specifier of specifiers) {
      const parts = /^(\w+)(?:\s+as\s+(\w+))?$/.exec(specifier)
      if (parts === null) return statement
      const [, name, alias = name] = parts as unknown as [string, string, string | undefined]
      if (modules.has(name)) imports.push(`import * as ${alias} from "effect/${name}";`)
      else if (functionExports.has(name)) fromFunction.push(alias === name ? name : `${name} as ${alias}`)
      else return statement
    }
    if (fromFunction.length > 0) imports.push(`import { ${fromFunction.join(", ")} } from "effect/Function";`)
    // On one line, so that the lines after it keep their numbers.
    return imports.join(" ")
  })

/**
 * The names of the modules of the `effect` package at `root`, from its manifest's exports.
 *
 * @since 0.1.0
 */
export const modulesOf = (root: string): ReadonlySet<string> => {
  const manifest = JSON.parse(Fs.readFileSync(Path.join(root, "package.json"), "utf8")) as {
    readonly exports?: Record<string, unknown>
  }
  return new Set(
    Object.keys(manifest.exports ?? {}).flatMap((key) => /^\.\/[A-Z]\w*$/.test(key) ? [key.slice(2)] : [])
  )
}
