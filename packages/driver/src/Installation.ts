/**
 * An app artifact imports `effect` and `@kindling/*` from the Kindling installation that runs it, not from a copy
 * of its own: wherever an artifact is put, `link` makes those packages resolvable next to it, as symbolic links
 * into this installation — so there is one copy of `effect` at run time, shared with the runtime itself.
 *
 * @since 0.1.0
 */
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

// What an artifact imports from the installation that runs it.
const provided = ["effect", "@effect/platform", "@kindling/driver", "@kindling/protocol"]

const isPackageRoot = (dir: string, name: string) => {
  const manifest = Path.join(dir, "package.json")
  return Fs.existsSync(manifest) && JSON.parse(Fs.readFileSync(manifest, "utf8")).name === name
}

// The directory of a package as this package resolves it; this package's own is above this module.
const packageRoot = (name: string): string | undefined => {
  let from: string
  if (name === "@kindling/driver") {
    from = fileURLToPath(import.meta.url)
  } else {
    try {
      from = createRequire(import.meta.url).resolve(name)
    } catch {
      // a package for `import` only (as every @kindling one): resolve it as an import would
      try {
        from = fileURLToPath(import.meta.resolve(name))
      } catch {
        return undefined
      }
    }
  }
  for (let dir = Path.dirname(from); dir !== Path.dirname(dir); dir = Path.dirname(dir)) {
    if (isPackageRoot(dir, name)) return dir
  }
  return undefined
}

/**
 * The installation's packages an artifact imports, each with the directory it is installed in.
 *
 * @since 0.1.0
 */
export const packages = (): ReadonlyArray<{ readonly name: string; readonly root: string }> =>
  provided.flatMap((name) => {
    const root = packageRoot(name)
    return root === undefined ? [] : [{ name, root: Fs.realpathSync(root) }]
  })

/**
 * Links the installation's `effect`, `@effect/platform` and `@kindling/*` packages into `dir/node_modules`.
 *
 * @since 0.1.0
 */
export const link = (dir: string): void => {
  for (const { name, root } of packages()) {
    const target = Path.join(dir, "node_modules", name)
    Fs.mkdirSync(Path.dirname(target), { recursive: true })
    Fs.rmSync(target, { force: true, recursive: true })
    Fs.symlinkSync(root, target, "dir")
  }
}
