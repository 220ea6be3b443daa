/**
 * The package order of `docs/architecture.md`, enforced: every `@kindling/*` import (sources and tests) goes to a
 * lower layer and is declared in the importing package's manifest, no package's sources import their own modules
 * in a cycle, the node-free entries reach no `node:` module, and installing the app API brings no role, UI or
 * ZooKeeper client (the list of what it brings is printed). The layers are read from the document's table, so the
 * document cannot drift from what is enforced.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

const root = fileURLToPath(new URL("..", import.meta.url))
const packagesDir = Path.join(root, "packages")
const document = Fs.readFileSync(Path.join(root, "docs/architecture.md"), "utf8")

// `| 4 | `@kindling/master` | … |`
const layers = new Map(
  [...document.matchAll(/^\| (\d+) \| `(@kindling\/[a-z]+)` \|/gm)].map((row) => [row[2]!, Number(row[1])])
)
// "- The node-free entries (`@kindling/conf`, …)"
const nodeFreeEntries = [...(/^- The node-free entries \(([^)]*)\)/m.exec(document)?.[1] ?? "").matchAll(/`([^`]+)`/g)]
  .map((match) => match[1]!)

interface Manifest {
  readonly name: string
  readonly dependencies?: Record<string, string>
  readonly devDependencies?: Record<string, string>
  readonly exports: Record<string, { readonly "@kindling/source": string }>
}

const packageDirs = Fs.readdirSync(packagesDir).filter((dir) =>
  Fs.existsSync(Path.join(packagesDir, dir, "package.json"))
)
const manifests = new Map(packageDirs.map((dir) => {
  const manifest: Manifest = JSON.parse(Fs.readFileSync(Path.join(packagesDir, dir, "package.json"), "utf8"))
  return [manifest.name, { dir: Path.join(packagesDir, dir), manifest }] as const
}))

const sourceFiles = (dir: string): Array<string> =>
  !Fs.existsSync(dir) ? [] : Fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = Path.join(dir, entry.name)
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : sourceFiles(path)
    return /\.(ts|mts)$/.test(entry.name) && !entry.name.endsWith(".d.ts") ? [path] : []
  })

interface Import {
  readonly specifier: string
  /** Whether it is gone at run time (`import type`, `export type`). */
  readonly typeOnly: boolean
  /**
   * Whether every name it brings is a type, gone at run time or not: `import { type A } from "m"` leaves
   * `import "m"` behind under verbatimModuleSyntax, and loads `m` for nothing.
   */
  readonly onlyTypes: boolean
}

const everyNameIsAType = (bindings: ts.NamedImportBindings | ts.NamedExportBindings | undefined): boolean =>
  bindings !== undefined && (ts.isNamedImports(bindings) || ts.isNamedExports(bindings)) &&
  bindings.elements.length > 0 && bindings.elements.every((element) => element.isTypeOnly)

// Static imports and re-exports, `import("…")` and `import x = require("…")`, read with TypeScript's parser.
const importsOf = (file: string): ReadonlyArray<Import> => {
  const source = ts.createSourceFile(file, Fs.readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true)
  const found: Array<Import> = []
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause
      const typeOnly = clause?.isTypeOnly ?? false
      found.push({
        specifier: node.moduleSpecifier.text,
        typeOnly,
        onlyTypes: typeOnly || (clause?.name === undefined && everyNameIsAType(clause?.namedBindings))
      })
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push({
        specifier: node.moduleSpecifier.text,
        typeOnly: node.isTypeOnly,
        onlyTypes: node.isTypeOnly || everyNameIsAType(node.exportClause)
      })
    } else if (
      ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] !== undefined && ts.isStringLiteral(node.arguments[0])
    ) {
      found.push({ specifier: node.arguments[0].text, typeOnly: false, onlyTypes: false })
    } else if (
      ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)
    ) {
      found.push({ specifier: node.argument.literal.text, typeOnly: true, onlyTypes: true })
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

const packageOf = (specifier: string): string | undefined => /^(@kindling\/[a-z]+)(\/.*)?$/.exec(specifier)?.[1]

// A relative specifier (with its `.js` suffix, as the sources write them) to the source file it names.
const resolveRelative = (from: string, specifier: string): string => {
  const path = Path.resolve(Path.dirname(from), specifier)
  for (const candidate of [path.replace(/\.js$/, ".ts"), path.replace(/\.mjs$/, ".mts"), `${path}.ts`]) {
    if (Fs.existsSync(candidate)) return candidate
  }
  return path
}

// The modules of an import graph that lie on a cycle, each cycle as one group (Tarjan's strongly connected
// components of more than one module, or of one that imports itself).
const cycles = (graph: ReadonlyMap<string, ReadonlyArray<string>>): Array<Array<string>> => {
  const index = new Map<string, number>()
  const lowest = new Map<string, number>()
  const stack: Array<string> = []
  const onStack = new Set<string>()
  const found: Array<Array<string>> = []
  const connect = (module: string) => {
    index.set(module, index.size)
    lowest.set(module, index.get(module)!)
    stack.push(module)
    onStack.add(module)
    for (const next of graph.get(module) ?? []) {
      if (!graph.has(next)) continue
      if (!index.has(next)) {
        connect(next)
        lowest.set(module, Math.min(lowest.get(module)!, lowest.get(next)!))
      } else if (onStack.has(next)) {
        lowest.set(module, Math.min(lowest.get(module)!, index.get(next)!))
      }
    }
    if (lowest.get(module) !== index.get(module)) return
    const component: Array<string> = []
    let member: string
    do {
      member = stack.pop()!
      onStack.delete(member)
      component.push(member)
    } while (member !== module)
    if (component.length > 1 || graph.get(module)!.includes(module)) found.push(component)
  }
  for (const module of graph.keys()) if (!index.has(module)) connect(module)
  return found
}

interface Installable {
  readonly dependencies?: Record<string, string>
  readonly optionalDependencies?: Record<string, string>
  readonly peerDependencies?: Record<string, string>
  readonly peerDependenciesMeta?: Record<string, { readonly optional?: boolean }>
}

// Where `name` is installed for the package in `from`, as Node looks for it: `node_modules/<name>` there or in a
// folder above (pnpm links each package's own dependencies beside it).
const installedDir = (from: string, name: string): string | undefined => {
  for (let dir = from; dir !== Path.dirname(dir); dir = Path.dirname(dir)) {
    const candidate = Path.join(dir, "node_modules", name)
    if (Fs.existsSync(Path.join(candidate, "package.json"))) return Fs.realpathSync(candidate)
  }
  return undefined
}

// What installing `name` brings, as npm installs it for a user: its production dependencies (optional ones where
// they are installed, and the peers it needs), theirs, and so on — each package by name, with the one that first
// needed it. Workspace packages are read from their manifests here; npm packages from the install beside them.
const installs = (name: string): Map<string, string> => {
  const found = new Map<string, string>()
  const visit = (dir: string, by: string) => {
    const manifest: Installable = JSON.parse(Fs.readFileSync(Path.join(dir, "package.json"), "utf8"))
    const optional = new Set([
      ...Object.keys(manifest.optionalDependencies ?? {}),
      ...Object.entries(manifest.peerDependenciesMeta ?? {}).filter(([, meta]) => meta.optional).map(([n]) => n)
    ])
    const needed = Object.keys({
      ...manifest.dependencies,
      ...manifest.optionalDependencies,
      ...manifest.peerDependencies
    })
    for (const dependency of needed) {
      if (found.has(dependency)) continue
      const at = installedDir(dir, dependency)
      if (at === undefined) {
        assert.isTrue(optional.has(dependency), `${dependency}, which ${by} needs, is not installed`)
        continue
      }
      found.set(dependency, by)
      visit(at, dependency)
    }
  }
  visit(manifests.get(name)!.dir, name)
  return found
}

describe("the architecture of docs/architecture.md", () => {
  it("lists every package, each with a layer", () => {
    assert.deepStrictEqual([...layers.keys()].sort(), [...manifests.keys()].sort())
    assert.isAbove(nodeFreeEntries.length, 0)
  })

  it("no package imports one of its own layer or above, and each declares what it imports", () => {
    const problems: Array<string> = []
    for (const [name, { dir, manifest }] of manifests) {
      const layer = layers.get(name)!
      const declared = new Set(Object.keys(manifest.dependencies ?? {}))
      const declaredForTests = new Set([...declared, ...Object.keys(manifest.devDependencies ?? {})])
      for (const [kind, allowed] of [["src", declared], ["test", declaredForTests]] as const) {
        for (const file of sourceFiles(Path.join(dir, kind))) {
          for (const { specifier } of importsOf(file)) {
            const imported = packageOf(specifier)
            if (imported === undefined || imported === name) continue
            const where = `${Path.relative(root, file)} imports ${specifier}`
            const importedLayer = layers.get(imported)
            if (importedLayer === undefined) problems.push(`${where}, which is no package`)
            else if (importedLayer >= layer) {
              problems.push(`${where}: layer ${importedLayer} from layer ${layer} (${name})`)
            }
            if (!allowed.has(imported)) problems.push(`${where}, not declared in ${name}'s package.json`)
          }
        }
      }
      for (const dependency of Object.keys(manifest.dependencies ?? {})) {
        const dependencyLayer = layers.get(dependency)
        if (dependencyLayer !== undefined && dependencyLayer >= layer) {
          problems.push(`${name} depends on ${dependency}: layer ${dependencyLayer} from layer ${layer}`)
        }
      }
    }
    assert.deepStrictEqual(problems, [])
  })

  it("no package's modules import each other in a cycle", () => {
    const found: Array<string> = []
    for (const { dir } of manifests.values()) {
      const graph = new Map(
        sourceFiles(Path.join(dir, "src")).map((file) => [
          file,
          importsOf(file).filter((i) => !i.typeOnly && i.specifier.startsWith(".")).map((i) =>
            resolveRelative(file, i.specifier)
          )
        ])
      )
      for (const cycle of cycles(graph)) found.push(cycle.map((file) => Path.relative(root, file)).join(" → "))
    }
    assert.deepStrictEqual(found, [])
  })

  it("the node-free entries reach no node: module", () => {
    const problems: Array<string> = []
    for (const entry of nodeFreeEntries) {
      const [, name, subPath] = /^(@kindling\/[a-z]+)(?:\/(.+))?$/.exec(entry)!
      const { dir, manifest } = manifests.get(name!)!
      const exported = manifest.exports[subPath === undefined ? "." : `./${subPath}`]
      assert.isDefined(exported, `${entry} is no export of ${name}`)
      const seen = new Set<string>()
      const visit = (file: string) => {
        if (seen.has(file)) return
        seen.add(file)
        for (const { specifier, typeOnly } of importsOf(file)) {
          if (typeOnly) continue
          if (specifier.startsWith("node:")) {
            problems.push(`${entry}: ${Path.relative(root, file)} imports ${specifier}`)
          } else if (specifier.startsWith(".")) visit(resolveRelative(file, specifier))
        }
      }
      visit(Path.join(dir, exported!["@kindling/source"]))
    }
    assert.deepStrictEqual(problems, [])
  })

  // What `import { type A } from "m"` would leave in the JavaScript (`import "m"`) is what this checks in the build:
  // a package whose sources import another only for types must not load it at run time.
  const built = [...manifests.values()].every(({ dir }) => Fs.existsSync(Path.join(dir, "dist")))
  it.skipIf(!built)("the built JavaScript loads only the packages the sources import for their values", () => {
    const problems: Array<string> = []
    for (const [name, { dir }] of manifests) {
      const forValues = new Set(
        sourceFiles(Path.join(dir, "src")).flatMap((file) =>
          importsOf(file).filter((i) => !i.onlyTypes).flatMap((i) => packageOf(i.specifier) ?? [])
        )
      )
      const distDir = Path.join(dir, "dist")
      for (const file of Fs.readdirSync(distDir).filter((entry) => entry.endsWith(".js"))) {
        for (const { specifier } of importsOf(Path.join(distDir, file))) {
          const imported = packageOf(specifier)
          if (imported !== undefined && imported !== name && !forValues.has(imported)) {
            problems.push(`${name}'s dist/${file} loads ${specifier}, which its sources import only for types`)
          }
        }
      }
    }
    assert.deepStrictEqual(problems, [])
  })

  it("installing the app API brings no role, UI or ZooKeeper client", () => {
    const installed = installs("@kindling/app")
    console.info(
      `@kindling/app installs ${installed.size} packages:\n` +
        [...installed].sort(([a], [b]) => a.localeCompare(b)).map(([name, by]) => `  ${name} (for ${by})`).join("\n")
    )
    // What an app's install must hold: the app API and what it runs in the app's own process — the record codecs,
    // the protocol's task plans, and the data formats and storage port its datasets read through (`@kindling/data`).
    // No role — the master, a worker (an app reaches them over the wire), the executor (whose engine runs where
    // `kindling` runs an app) — nor what watches apps, nor the driver's runtime: `kindling` brings those. The roles
    // sit in the app API's layer, so they are among the packages of its layer and above.
    const appLayer = layers.get("@kindling/app")!
    const above = [...layers].filter(([name, layer]) => layer >= appLayer && name !== "@kindling/app").map(([n]) => n)
    const forbidden = [
      "@kindling/master",
      "@kindling/worker",
      "@kindling/executor",
      ...above,
      "@dagrejs/dagre",
      "node-zookeeper-client"
    ]
    assert.deepStrictEqual(
      forbidden.filter((name) => installed.has(name)).map((name) => `${name} (for ${installed.get(name)})`),
      []
    )
    // The walk reaches what it should: the packages the app API runs on, to the npm packages under them.
    for (const name of ["@kindling/protocol", "@kindling/data", "effect", "msgpackr", "hyparquet"]) {
      assert.isTrue(installed.has(name), name)
    }
  })

  it("catches what it is there to catch", () => {
    // The checks above pass on a correct tree; these make sure they could fail.
    assert.deepStrictEqual(cycles(new Map([["a", ["b"]], ["b", ["a"]], ["c", ["a"]]])).map((c) => c.sort()), [[
      "a",
      "b"
    ]])
    assert.deepStrictEqual(cycles(new Map([["a", ["a"]]])), [["a"]])
    assert.deepStrictEqual(cycles(new Map([["a", ["b"]], ["b", []]])), [])
    // The command's install holds what the app's must not, found as the app's would be.
    const everything = installs("@kindling/cli")
    for (const name of ["@kindling/master", "@kindling/monitoring", "@dagrejs/dagre", "node-zookeeper-client"]) {
      assert.isTrue(everything.has(name), name)
    }
    const file = Path.join(root, "packages/worker/src/Runners.ts")
    assert.isTrue(importsOf(file).some((i) => i.specifier === "@kindling/installation" && i.typeOnly))
    assert.isTrue(importsOf(file).some((i) => i.specifier === "./DriverRunner.js" && !i.typeOnly))
    // An import whose every name is a type, but not written `import type`, stays in the JavaScript.
    const scratch = Path.join(root, "node_modules", ".architecture-scratch.ts")
    Fs.writeFileSync(scratch, "import { type A } from \"@kindling/x\"\nimport type { B } from \"@kindling/y\"\n")
    try {
      assert.deepStrictEqual(importsOf(scratch), [
        { specifier: "@kindling/x", typeOnly: false, onlyTypes: true },
        { specifier: "@kindling/y", typeOnly: true, onlyTypes: true }
      ])
    } finally {
      Fs.rmSync(scratch)
    }
  })
})
