/**
 * The process a worker starts for a driver (Spark's DriverWrapper): `DriverWrapper <workerUrl> <appPath>
 * [app args…]`. It loads the app module and calls its default export with the app arguments. Returning (or
 * resolving) exits with 0; throwing (or rejecting) prints the error on stderr and exits with 1, as does a module
 * that cannot be loaded or has no default export function.
 *
 * Running this module is the point of importing it, so the package barrel does not re-export it.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"

class DriverFailed extends Data.TaggedError("DriverFailed")<{ readonly reason: string }> {}

const describe = (error: unknown): string => error instanceof Error ? error.stack ?? error.message : String(error)

const run = (argv: ReadonlyArray<string>): Effect.Effect<void, DriverFailed> =>
  Effect.gen(function*() {
    // The worker URL is kept on the command line for the driver's worker watcher; until the driver has an
    // RpcEnv, parent-watch is what ends this process when its worker dies.
    const [_workerUrl, appPath, ...args] = argv
    if (appPath === undefined) {
      return yield* new DriverFailed({ reason: "usage: DriverWrapper <workerUrl> <appPath> [app args...]" })
    }
    const module: { readonly default?: unknown } = yield* Effect.tryPromise({
      try: () => import(pathToFileURL(Path.resolve(appPath)).href),
      catch: (error) => new DriverFailed({ reason: `Cannot load the app module ${appPath}: ${describe(error)}` })
    })
    const main = module.default
    if (typeof main !== "function") {
      const found = main === undefined ? "it has none" : `it is a ${typeof main}`
      return yield* new DriverFailed({
        reason: `The app module ${appPath} must have a default export that is a function ` +
          `(args: ReadonlyArray<string>) => void | Promise<void>; ${found}`
      })
    }
    yield* Effect.tryPromise({
      try: async () => {
        await main(args)
      },
      catch: (error) => new DriverFailed({ reason: describe(error) })
    })
  })

// The exit is explicit because the app's result decides the driver's final state: a timer or socket the app
// left open must not keep a finished driver running.
Effect.runPromiseExit(run(process.argv.slice(2))).then(Exit.match({
  onSuccess: () => process.exit(0),
  onFailure: (cause) => {
    const text = Option.match(Cause.failureOption(cause), {
      onNone: () => Cause.pretty(cause),
      onSome: (e) => e.reason
    })
    process.stderr.write(`${text}\n`)
    process.exit(1)
  }
}))
