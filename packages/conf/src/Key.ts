/**
 * A configuration key: its name, the type of its value, its default or the key it falls back to, and the line of
 * documentation the reference shows. A role declares its keys next to the code that reads them and reads them
 * with `conf.get(key)`, typed by the key.
 *
 * @since 0.1.0
 */
import type { ValueType } from "./ValueType.js"

/**
 * A key whose value, as `conf.get` returns it, is an `A` (with `undefined` when the key is optional).
 *
 * @since 0.1.0
 * @category models
 */
export interface Key<out Name extends string, out A> {
  readonly name: Name
  readonly type: ValueType<NonNullable<A>>
  /** The value when no source sets it, as it would be written in a file. */
  readonly default: string | undefined
  /** The key whose value this one takes when no source sets it (Spark's fallback entries). */
  readonly fallback: Key<string, A> | undefined
  /** Redacted wherever effective values are listed. */
  readonly secret: boolean
  readonly description: string
}

/**
 * Any key, whatever its name and value.
 *
 * @since 0.1.0
 * @category models
 */
export type Any = Key<string, any>

/**
 * What `conf.get` returns for a key.
 *
 * @since 0.1.0
 * @category models
 */
export type Value<K extends Any> = K extends Key<string, infer A> ? A : never

interface Common {
  readonly description: string
  readonly secret?: boolean
}

/**
 * Declares a key. One with a default, or with a fallback to a key of the same type, always has a value; one with
 * neither is optional.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: {
  <const Name extends string, A>(
    name: Name,
    type: ValueType<A>,
    options: Common & { readonly default: string }
  ): Key<Name, A>
  <const Name extends string, A>(
    name: Name,
    type: ValueType<A>,
    options: Common & { readonly fallback: Key<string, A> }
  ): Key<Name, A>
  <const Name extends string, A>(name: Name, type: ValueType<A>, options: Common): Key<Name, A | undefined>
} = (
  name: string,
  type: ValueType<unknown>,
  options: Common & { readonly default?: string; readonly fallback?: Any }
): Any => ({
  name,
  type,
  default: options.default,
  fallback: options.fallback,
  secret: options.secret ?? false,
  description: options.description
})
