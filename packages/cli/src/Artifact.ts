/**
 * An app's artifact: `kindling submit APP` bundles the app module with esbuild into one ES module, as a jar is
 * built — its own imports inlined, `effect`, `@effect/*` and `@kindling/*` left out, so that they resolve to the
 * Kindling installation that runs it and there is one copy of `effect` at run time (imported module by module:
 * `EffectImports`), and each of its functions hoisted so that it travels to executors (`ClosureHoisting`). A
 * syntax or type-stripping error stops the submission with esbuild's message, before anything starts.
 *
 * @since 0.1.0
 */
import { Installation } from "@kindling/installation"
import { DiskOperations } from "@kindling/kernel"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Esbuild from "esbuild"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import * as ClosureHoisting from "./ClosureHoisting.js"
import * as EffectImports from "./EffectImports.js"
import { installation } from "./ThisInstallation.js"

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

const external = ["effect", "effect/*", "@effect/*", "@kindling/*"]

const loaders: Record<string, Esbuild.Loader> = {
  ".ts": "ts",
  ".mts": "ts",
  ".cts": "ts",
  ".tsx": "tsx",
  ".js": "js",
  ".mjs": "js",
  ".cjs": "js",
  ".jsx": "jsx"
}

// The app's own modules (not its dependencies'), as the artifact holds them: their imports of effect's index
// made into imports of its modules (`EffectImports`), and their functions hoisted so that they travel
// (`ClosureHoisting`; not in CommonJS modules, which cannot import). Their ids name them from the app's folder.
const appSources = (effectModules: ReadonlySet<string>, root: string): Esbuild.Plugin => ({
  name: "kindling-app-sources",
  setup: (build) => {
    build.onLoad({ filter: /\.[cm]?[jt]sx?$/ }, (args) => {
      if (args.path.split(Path.sep).includes("node_modules")) return undefined
      const extension = Path.extname(args.path)
      const loader = loaders[extension] ?? "js"
      let source = Fs.readFileSync(args.path, "utf8")
      if (effectModules.size > 0 && source.includes("effect")) source = EffectImports.rewrite(source, effectModules)
      if (extension === ".cjs" || extension === ".cts") return { contents: source, loader }
      const file = Path.relative(root, args.path).split(Path.sep).join("/")
      try {
        return { contents: ClosureHoisting.rewriteFile(source, args.path, loader, file), loader: "js" }
      } catch (error) {
        // A syntax error: esbuild's own load of the source reports it, with where it is.
        if (Array.isArray((error as Esbuild.BuildFailure).errors)) return { contents: source, loader }
        throw error
      }
    })
  }
})

/**
 * Bundles `app` into `dir/app.mjs` and links the installation's `effect` and `@kindling/*` packages next to it
 * (`Installation.link`). Returns the artifact's path.
 *
 * @since 0.1.0
 * @category constructors
 */
export const build = (app: string, dir: string): Effect.Effect<string, AppBuildFailed> =>
  Effect.gen(function*() {
    const outfile = Path.join(dir, "app.mjs")
    const effect = installation.packages().find((installed) => installed.name === "effect")
    const effectModules = effect === undefined ? new Set<string>() : EffectImports.modulesOf(effect.root)
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
          metafile: true,
          sourcemap: "inline",
          // The sources named from the submitting machine's root, not from the artifact (which executors keep
          // elsewhere): a stack trace names the user's own file wherever it runs.
          sourceRoot: `${pathToFileURL(dir).href}/`,
          plugins: [appSources(effectModules, Path.dirname(Path.resolve(app)))],
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
    // An app is run by its default export: one without it could only fail once it is running.
    if (!Object.values(result.metafile.outputs).some((output) => output.exports.includes("default"))) {
      return yield* new AppBuildFailed({
        app,
        reason: "it has no default export (an App, or a driver function (args) => void)"
      })
    }
    yield* Installation.link(installation, dir).pipe(
      Effect.provide(DiskOperations.nodeFileSystem),
      Effect.mapError((error) => new AppBuildFailed({ app, reason: error.message }))
    )
    return outfile
  }).pipe(
    // esbuild's processes (its service, and the one of its synchronous calls) would outlive the command by a second
    // or more: they are stopped once the app is bundled, whatever came of it.
    Effect.ensuring(Effect.promise(() => Esbuild.stop()))
  )
