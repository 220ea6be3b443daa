/**
 * Runs an app module's default export: an `App` (its main, with the app context a runtime layer gives) or a plain
 * driver function `(args) => void | Promise<void>`. Used wherever a driver runs — `kindling submit` in client
 * mode and the driver process a worker starts in cluster mode — so an app behaves the same in both.
 *
 * @since 0.1.0
 */
import { App, JobFailed, Kindling, type KindlingContext, StackFrames } from "@kindling/app"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Layer from "effect/Layer"
import * as Module from "node:module"
import { fileURLToPath } from "node:url"

/**
 * An imported app module: where it is (a `file:` URL executors import too) and what it exports.
 *
 * @since 0.1.0
 * @category models
 */
export interface Loaded {
  readonly url: string
  readonly exports: Readonly<Record<string, unknown>>
}

/**
 * The gist of an app's failure: a typed error's class and message, else the whole cause.
 *
 * @since 0.1.0
 */
export const describe = (cause: Cause.Cause<unknown>): string => {
  const failure = Cause.failureOption(cause)
  if (failure._tag === "Some") {
    const error = failure.value
    return error instanceof Error ? `${error.name}: ${error.message}` : String(error)
  }
  return Cause.pretty(cause)
}

/**
 * What a person reads of the failure of the app at `url` (after `run`): its gist (`describe`) with, of the stack
 * traces in it (a task's, a defect's), only the frames of the app's own sources — the files of its bundle's source
 * map, its dependencies' left out — unless `allFrames`; Kindling's, effect's and Node's frames say nothing of the
 * app's mistake.
 *
 * @since 0.1.0
 */
export const summary = (cause: Cause.Cause<unknown>, url: string, allFrames: boolean): string => {
  const text = describe(cause)
  if (allFrames) return text
  const map = Module.findSourceMap(fileURLToPath(url))?.payload
  const own = new Set(
    (map?.sources ?? []).map((source) => new URL(source, map?.sourceRoot || url))
      .filter((source) => source.protocol === "file:" && !source.pathname.includes("/node_modules/"))
      .map((source) => fileURLToPath(source))
  )
  return StackFrames.keeping(text, (file) => own.has(file))
}

// A main that succeeded with actions it made and never ran: most likely a forgotten `yield*` — the action did
// nothing, and nothing else would say so. (A main that failed ended before its actions for a reason of its own.)
const warnUnrun = (kc: KindlingContext) =>
  Effect.flatMap(kc.unrunActions, (sites) =>
    Effect.forEach(sites, (site) => {
      const operation = site.split(" at ")[0]
      return Effect.logWarning(
        `The action ${site} never ran: did you forget \`yield*\`? An action is an Effect, and does nothing until ` +
          `it is run (\`yield* ds.${operation}(…)\`).`
      )
    }, { discard: true }))

/**
 * Imports the module at `url` and runs its default export with `args`; an `App` gets the context `runtime`
 * builds. The exit is the app's: a failure of main, a thrown or rejected driver function, or a module that has
 * no runnable default export — or, when the app's driver stopped on an internal error, that error (`JobFailed`
 * with `internal` set), even if main caught what its jobs failed with.
 *
 * @since 0.1.0
 * @category running
 */
export const run = <E>(options: {
  readonly url: string
  readonly args: ReadonlyArray<string>
  readonly runtime: (app: Loaded) => Layer.Layer<Kindling, E>
}): Effect.Effect<Exit.Exit<unknown, unknown>> =>
  Effect.gen(function*() {
    // The bundle's source map names the app's own files and lines: in its stack traces, and in the call sites
    // that name its jobs and stages.
    process.setSourceMapsEnabled(true)
    const imported = yield* Effect.exit(
      Effect.tryPromise({
        try: () => import(options.url) as Promise<Record<string, unknown>>,
        catch: (error) => error
      })
    )
    if (Exit.isFailure(imported)) return imported
    const exports = imported.value
    const main = exports.default
    if (App.isApp(main)) {
      return yield* Effect.exit(
        Effect.gen(function*() {
          const kc = yield* Kindling
          const exit = yield* Effect.exit(main.main(options.args))
          if (Exit.isSuccess(exit)) yield* warnUnrun(kc)
          const fatal = yield* kc.fatalError
          if (fatal === undefined || Exit.isFailure(exit)) return yield* exit
          return yield* new JobFailed({ reason: `The driver stopped on an internal error: ${fatal}`, internal: true })
        }).pipe(Effect.provide(options.runtime({ url: options.url, exports })))
      )
    }
    if (typeof main === "function") {
      return yield* Effect.exit(Effect.tryPromise({
        try: async () => {
          await main(options.args)
        },
        catch: (error) => error
      }))
    }
    return Exit.fail(`The app module must have a default export: App.make(…) or a function (args) => …`)
  })
