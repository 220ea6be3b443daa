/**
 * An app's artifact: `kindling submit APP` bundles the app module with esbuild into one ES module, as a jar is
 * built — its own imports inlined, `effect`, `@effect/*` and `@kindling/*` left out, so that they resolve to the
 * Kindling installation that runs it and there is one copy of `effect` at run time. A syntax or type-stripping
 * error stops the submission with esbuild's message, before anything starts.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Esbuild from "esbuild"
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

/**
 * The app could not be bundled.
 *
 * @since 0.1.0
 * @category errors
 */
export class AppBuildFailed extends Data.TaggedError("AppBuildFailed")<{
  readonly app: string
  readonly reason: string
}> {
  override get message() {
    return `The app ${this.app} cannot be built:\n${this.reason}`
  }
}

// What an artifact imports from the installation that runs it.
const provided = ["effect", "@effect/platform", "@kindling/driver", "@kindling/protocol"]
const external = ["effect", "effect/*", "@effect/*", "@kindling/*"]

/**
 * Bundles `app` into `dir/app.mjs` and links the installation's `effect` and `@kindling/*` packages into
 * `dir/node_modules`, so that the artifact imports them from there. Returns the artifact's path.
 *
 * @since 0.1.0
 * @category constructors
 */
export const build = (app: string, dir: string): Effect.Effect<string, AppBuildFailed> =>
  Effect.gen(function*() {
    const outfile = Path.join(dir, "app.mjs")
    const result = yield* Effect.tryPromise({
      try: () =>
        Esbuild.build({
          entryPoints: [Path.resolve(app)],
          outfile,
          bundle: true,
          format: "esm",
          platform: "node",
          target: "node20",
          external,
          logLevel: "silent",
          sourcemap: "inline",
          // Bundled CommonJS dependencies may call `require`: give them one.
          banner: {
            js:
              "import { createRequire as __kindlingRequire } from 'node:module'; const require = __kindlingRequire(import.meta.url);"
          }
        }),
      catch: (error) => {
        const failure = error as Esbuild.BuildFailure
        const messages = Array.isArray(failure.errors)
          ? Esbuild.formatMessagesSync(failure.errors, { kind: "error", color: false }).join("\n")
          : String(error)
        return new AppBuildFailed({ app, reason: messages.trim() })
      }
    })
    if (result.errors.length > 0) {
      const reason = Esbuild.formatMessagesSync(result.errors, { kind: "error", color: false }).join("\n")
      return yield* new AppBuildFailed({ app, reason: reason.trim() })
    }
    yield* Effect.sync(() => linkInstallation(dir))
    return outfile
  })

// The directory of the package a specifier resolves to from this module: the closest package.json above its
// entry point whose name is the package's.
const packageRoot = (name: string): string | undefined => {
  let entry: string
  try {
    entry = createRequire(import.meta.url).resolve(`${name}/package.json`)
    return Path.dirname(entry)
  } catch {
    // a package whose exports hide package.json: walk up from its entry point
  }
  try {
    entry = fileURLToPath(import.meta.resolve(name))
  } catch {
    return undefined
  }
  for (let dir = Path.dirname(entry); dir !== Path.dirname(dir); dir = Path.dirname(dir)) {
    const manifest = Path.join(dir, "package.json")
    if (Fs.existsSync(manifest) && JSON.parse(Fs.readFileSync(manifest, "utf8")).name === name) return dir
  }
  return undefined
}

const linkInstallation = (dir: string) => {
  for (const name of provided) {
    const root = packageRoot(name)
    if (root === undefined) continue
    const link = Path.join(dir, "node_modules", name)
    Fs.mkdirSync(Path.dirname(link), { recursive: true })
    Fs.rmSync(link, { force: true, recursive: true })
    Fs.symlinkSync(Fs.realpathSync(root), link, "dir")
  }
}
