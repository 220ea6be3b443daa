/**
 * An app artifact imports `effect` and `@kindling/*` from the Kindling installation that runs it, not from a copy
 * of its own: wherever an artifact is put, `link` makes those packages resolvable next to it, as symbolic links
 * into the installation — so there is one copy of `effect` at run time, shared with the runtime itself. A worker
 * starts drivers and executors from the installation's entry modules (`resolveModule`).
 *
 * Where the installation's packages are is a question of module resolution, which in a strict layout (pnpm's)
 * only a package that depends on them can answer: an `Installation` is made by the package composing a node,
 * from its own `import.meta`, and handed to the roles that need it.
 *
 * @since 0.1.0
 */
// The module itself, not the package's barrel: an executor imports this package, and the barrel would load all of
// @effect/platform (HTTP, workers, …) into every executor process.
import * as FileSystem from "@effect/platform/FileSystem"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

/**
 * What an artifact imports from the installation that runs it.
 *
 * @since 0.1.0
 * @category constants
 */
export const provided = [
  "effect",
  "@effect/platform",
  "@kindling/app",
  "@kindling/driver",
  "@kindling/protocol",
  "@kindling/rpc"
] as const

/**
 * One of the installation's packages and the directory it is installed in.
 *
 * @since 0.1.0
 * @category models
 */
export interface InstalledPackage {
  readonly name: string
  readonly root: string
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Installation {
  /** The installation's packages an artifact imports (`provided`), each with its directory; those not found are left out. */
  readonly packages: () => ReadonlyArray<InstalledPackage>
  /** The file of one of the installation's entry modules (a specifier such as `@kindling/executor/main`). */
  readonly resolveModule: (specifier: string) => string
}

/**
 * The resolution an installation is made from: the `import.meta` of a module of the package that composes the
 * node (or any object with its `url` and `resolve`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Resolver {
  readonly url: string
  readonly resolve: (specifier: string) => string
}

const isPackageRoot = (dir: string, name: string) => {
  const manifest = Path.join(dir, "package.json")
  return Fs.existsSync(manifest) && JSON.parse(Fs.readFileSync(manifest, "utf8")).name === name
}

// The directory of a package as `resolver` resolves it: Node's `require` resolution first, then `import`'s for
// the packages that only export `import` (every @kindling one).
const packageRoot = (resolver: Resolver, name: string): string | undefined => {
  let from: string
  try {
    from = createRequire(resolver.url).resolve(name)
  } catch {
    try {
      from = fileURLToPath(resolver.resolve(name))
    } catch {
      return undefined
    }
  }
  for (let dir = Path.dirname(from); dir !== Path.dirname(dir); dir = Path.dirname(dir)) {
    if (isPackageRoot(dir, name)) return dir
  }
  return undefined
}

/**
 * The installation as `resolver` — the composing module's `import.meta` — sees it. Packages are looked up on
 * first use and remembered.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (resolver: Resolver): Installation => {
  let found: ReadonlyArray<InstalledPackage> | undefined
  return {
    packages: () =>
      found ??= provided.flatMap((name) => {
        const root = packageRoot(resolver, name)
        return root === undefined ? [] : [{ name, root: Fs.realpathSync(root) }]
      }),
    resolveModule: (specifier) => fileURLToPath(resolver.resolve(specifier))
  }
}

/**
 * One of the installation's packages could not be linked into a directory.
 *
 * @since 0.1.0
 * @category errors
 */
export class LinkFailed extends Data.TaggedError("LinkFailed")<{ readonly path: string; readonly reason: string }> {
  override get message(): string {
    return `Cannot link the installation's package at ${this.path}: ${this.reason}`
  }
}

/**
 * Links the installation's packages into `dir/node_modules`, through the file system in context, so that an app
 * artifact put in `dir` imports them from the installation that runs it. A link already there is replaced.
 *
 * @since 0.1.0
 * @category linking
 */
export const link = (
  installation: Installation,
  dir: string
): Effect.Effect<void, LinkFailed, FileSystem.FileSystem> =>
  Effect.flatMap(FileSystem.FileSystem, (fs) =>
    Effect.forEach(installation.packages(), ({ name, root }) => {
      const target = Path.join(dir, "node_modules", name)
      return fs.makeDirectory(Path.dirname(target), { recursive: true }).pipe(
        Effect.zipRight(fs.remove(target, { recursive: true, force: true })),
        Effect.zipRight(fs.symlink(root, target)),
        Effect.mapError((error) => new LinkFailed({ path: target, reason: error.message }))
      )
    }, { discard: true }))
