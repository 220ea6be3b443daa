/**
 * An app: an ES module whose default export is `App.make(main)`, where `main` takes the app's arguments and
 * returns an Effect that uses the app context (`Kindling`). Functions the module exports — or registers with
 * `App.register` — travel to executors by name.
 *
 * @since 0.1.0
 */
import type * as Effect from "effect/Effect"
import type { Kindling } from "./Kindling.js"
import { type AnyFunction, registered } from "./UserFunctions.js"

const AppTypeId: unique symbol = Symbol.for("@kindling/app/App") as never

/**
 * @since 0.1.0
 * @category models
 */
export interface App<E = unknown> {
  readonly [AppTypeId]: typeof AppTypeId
  readonly main: (args: ReadonlyArray<string>) => Effect.Effect<void, E, Kindling>
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const make = <E>(main: (args: ReadonlyArray<string>) => Effect.Effect<void, E, Kindling>): App<E> => ({
  [AppTypeId]: AppTypeId,
  main
})

/**
 * Whether a module's default export is an app (rather than a plain `(args) => void` driver function).
 *
 * @since 0.1.0
 * @category guards
 */
export const isApp = (value: unknown): value is App => typeof value === "object" && value !== null && AppTypeId in value

/**
 * Makes `fn` travel to executors under `name`: for a function that uses other functions or values of its
 * module, which a function sent as source text may not. Call it at the top level of the app module, so that
 * executors, which import the module, register it too.
 *
 * @since 0.1.0
 */
export const register = <F extends AnyFunction>(name: string, fn: F): F => {
  registered().set(name, fn)
  return fn
}
