/**
 * How nodes make directories, enforced: never through Node's recursive `mkdir`, which loops for ever on a path
 * where no directory can be made (`/proc/x`), but through `@kindling/installation/Directories`; and every node's
 * platform `FileSystem` is `DiskOperations.nodeFileSystem`, whose recursive `makeDirectory` goes through it too.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const packagesDir = fileURLToPath(new URL("../packages", import.meta.url))

const sources = (dir: string): Array<string> =>
  Fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = Path.join(dir, entry.name)
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : sources(path)
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [path] : []
  })

const packageSources = Fs.readdirSync(packagesDir).flatMap((name) => {
  const src = Path.join(packagesDir, name, "src")
  return Fs.existsSync(src) ? sources(src) : []
})

const relative = (file: string) => Path.relative(packagesDir, file)

// A call of `mkdir`/`mkdirSync` (node:fs or node:fs/promises) whose arguments ask for recursion.
const recursiveMkdir = /\bmkdir(Sync)?\((?:[^()]|\([^()]*\))*?recursive\s*:\s*true/

describe("making directories", () => {
  it("no package's sources make directories through Node's recursive mkdir", () => {
    const found = packageSources.filter((file) => recursiveMkdir.test(Fs.readFileSync(file, "utf8"))).map(relative)
    assert.deepStrictEqual(found, [])
  })

  it("no package provides Node's FileSystem but through DiskOperations.nodeFileSystem", () => {
    const found = packageSources.filter((file) => {
      const text = Fs.readFileSync(file, "utf8")
      const nodeLayer = /\b(NodeFileSystem|NodeContext)\.layer\b/.test(text)
      // The one that wraps it, and what provides the wrapper over Node's context.
      return nodeLayer && !relative(file).endsWith("kernel/src/DiskOperations.ts") &&
        !/DiskOperations\.nodeFileSystem/.test(text)
    }).map(relative)
    assert.deepStrictEqual(found, [])
  })

  it("catches what it is there to catch", () => {
    assert.isTrue(recursiveMkdir.test(`Fs.mkdirSync(path, { recursive: true })`))
    assert.isTrue(recursiveMkdir.test(`yield* attempt("create", dir, () => Fs.mkdir(dir, {\n recursive: true }))`))
    assert.isFalse(recursiveMkdir.test(`Fs.mkdirSync(path)\nFs.rmSync(other, { recursive: true })`))
  })
})
