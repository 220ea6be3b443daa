/**
 * Runs an app in the `kindling submit` process, as Spark's client deploy mode does: today in `local[N]`, where
 * the driver and an executor with N task threads share the process. The app is bundled into an artifact first
 * (`Artifact`), so it runs exactly as it would on a cluster, and the task threads import the same artifact.
 *
 * @since 0.1.0
 */
import type { Conf } from "@kindling/conf"
import { App, DriverConf, Local, type MasterSpec } from "@kindling/driver"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import * as Artifact from "./Artifact.js"
import type * as Settings from "./Settings.js"

// The gist of an app's failure: a typed error's message, else the whole cause.
const describe = (cause: Cause.Cause<unknown>): string => {
  const failure = Cause.failureOption(cause)
  if (failure._tag === "Some") {
    const error = failure.value
    return error instanceof Error ? `${error.name}: ${error.message}` : String(error)
  }
  return Cause.pretty(cause)
}

/**
 * Runs the app to its end; the exit code is 0 when its main succeeded and 1 when it failed (the failure is
 * printed on stderr).
 *
 * @since 0.1.0
 * @category running
 */
export const runLocal = (options: {
  readonly app: string
  readonly args: ReadonlyArray<string>
  readonly spec: Extract<MasterSpec.MasterSpec, { _tag: "Local" }>
  readonly conf: Conf.Conf<Settings.Keys>
}): Effect.Effect<number, Artifact.AppBuildFailed> =>
  Effect.acquireUseRelease(
    Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "kindling-app-"))),
    (dir) =>
      Effect.gen(function*() {
        const artifact = yield* Artifact.build(options.app, dir)
        const appUrl = pathToFileURL(artifact).href
        const module = yield* Effect.promise(() => import(appUrl) as Promise<Record<string, unknown>>)
        const main = module.default
        const name = options.conf.get(DriverConf.keys.appName) ?? Path.basename(options.app)
        const exit = App.isApp(main)
          ? yield* Effect.exit(
            main.main(options.args).pipe(Effect.provide(Local.layer({
              appName: name,
              threads: options.spec.threads,
              appUrl,
              appExports: module,
              driver: DriverConf.coreConfig(options.conf, options.spec.maxFailures),
              heartbeatIntervalMillis: options.conf.get(DriverConf.keys.executorHeartbeatInterval)
            })))
          )
          : typeof main === "function"
          ? yield* Effect.exit(Effect.tryPromise({
            try: async () => {
              await main(options.args)
            },
            catch: (error) => error
          }))
          : Exit.fail(`The app ${options.app} must have a default export: App.make(…) or a function (args) => …`)
        if (Exit.isSuccess(exit)) return 0
        process.stderr.write(`${describe(exit.cause)}\n`)
        return 1
      }),
    (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
  )
