/**
 * An app: an ES module whose default export is `App.make(main)`, where `main` takes the app's arguments and
 * returns an Effect that uses the app context (`Kindling`). Functions the module exports — or registers with
 * `App.register` — travel to executors by name.
 *
 * @since 0.1.0
 */
import * as Records from "@kindling/protocol/records"
import type * as Effect from "effect/Effect"
import type * as Schema from "effect/Schema"
import type { Kindling } from "./Kindling.js"
import * as RecordSchemas from "./RecordSchemas.js"
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

/**
 * Makes the instances of `cls` travel as instances — through a shuffle, a broadcast, the cache, `collect` —
 * under `name` (the class's own name by default; give another when two classes share one). An instance arrives
 * as an object of the class with the instance's own fields; its constructor is not run, and `#private` fields
 * do not travel. Call it at the top level of the app module, so that every executor, which imports the module,
 * registers it too. An instance of a class not registered is refused, naming the class.
 *
 * @since 0.1.0
 */
export const registerClass = <C extends abstract new(...args: Array<any>) => unknown>(cls: C, name?: string): C => {
  Records.registerClass(cls, name)
  return cls
}

/**
 * Registers an Effect Schema under `name`, for a reader to type its records with (`kc.read.csv(path, { schema
 * })`): executors decode each record by it as they read it. Call it at the top level of the app module, so
 * that every executor, which imports the module, registers it too.
 *
 * @since 0.1.0
 */
export const registerSchema: <S extends Schema.Schema<any, any, never>>(name: string, schema: S) => S =
  RecordSchemas.register
