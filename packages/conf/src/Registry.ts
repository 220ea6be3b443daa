/**
 * The keys a process knows: groups of keys, each declared and exported by the package whose code reads them,
 * put together by whoever starts the process. The `kindling` command registers every group; a process Kindling
 * starts itself registers the groups of its role.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import type * as Key from "./Key.js"

/**
 * The keys of one role or concern, with a title and a sentence for the reference.
 *
 * @since 0.1.0
 * @category models
 */
export interface Group<K extends Key.Any> {
  readonly title: string
  readonly description: string
  readonly keys: ReadonlyArray<K>
}

/**
 * Every key a process knows, in the order of its groups, and each key by name.
 *
 * @since 0.1.0
 * @category models
 */
export interface Registry<K extends Key.Any> {
  readonly groups: ReadonlyArray<Group<K>>
  readonly keys: ReadonlyArray<K>
  readonly byName: ReadonlyMap<string, K>
}

/**
 * The keys of a group or a registry, as a union: what a `Conf` resolved from it can be asked for.
 *
 * @since 0.1.0
 * @category models
 */
export type KeyOf<R extends { readonly keys: ReadonlyArray<Key.Any> }> = R["keys"][number]

/**
 * A group of the keys in `keys`, in their order; the same object serves its package as `conf.get(keys.x)`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const group = <Keys extends Readonly<Record<string, Key.Any>>>(options: {
  readonly title: string
  readonly description: string
  readonly keys: Keys
}): Group<Keys[keyof Keys]> => ({
  title: options.title,
  description: options.description,
  keys: Object.values(options.keys) as Array<Keys[keyof Keys]>
})

// Each part of a name becomes one part of its environment variable, so a part may hold only letters and digits.
const validName = /^kindling(\.[A-Za-z0-9]+)+$/

// Names that Spark's default `spark.redaction.regex` hides the values of: a key named so is a credential, and
// must say so (`secret`), for its value to be redacted wherever values are listed (`Conf.entries`).
const credential = /secret|password|token|access[.]?key/i

const mistakes = (keys: ReadonlyArray<Key.Any>): Array<string> => {
  const byName = new Map(keys.map((key) => [key.name, key]))
  const seen = new Map<string, string>()
  return keys.flatMap((key) => {
    const found: Array<string> = []
    if (!validName.test(key.name)) found.push(`${key.name} is not kindling. and dotted letters and digits`)
    const twin = seen.get(key.name.toLowerCase())
    if (twin !== undefined) found.push(`${key.name} and ${twin} differ only in case (or are the same key)`)
    seen.set(key.name.toLowerCase(), key.name)
    const decoded = key.default === undefined ? undefined : key.type.decode(key.default)
    if (decoded !== undefined && Either.isLeft(decoded)) found.push(`${key.name}'s default: ${decoded.left}`)
    if (credential.test(key.name) && key.secret !== true) {
      found.push(`${key.name} is named as a credential but not declared secret: its value would be shown`)
    }
    if (key.fallback !== undefined && byName.get(key.fallback.name) !== key.fallback) {
      found.push(`${key.name} falls back to ${key.fallback.name}, which is not registered`)
    }
    return found
  })
}

/**
 * The registry of the groups' keys. Names must be unique regardless of case (a key's environment variable is
 * matched that way), defaults must be valid for their key, fallbacks must be registered too, and a key named as a
 * credential (a secret, password, token or access key) must be declared `secret`: a registry that
 * breaks these rules is a mistake in a declaration, so `make` throws and the first test that builds it fails.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <const Groups extends ReadonlyArray<Group<Key.Any>>>(
  ...groups: Groups
): Registry<KeyOf<Groups[number]>> => {
  const keys = groups.flatMap((group) => group.keys)
  const found = mistakes(keys)
  if (found.length > 0) throw new Error(`Invalid configuration registry:\n  ${found.join("\n  ")}`)
  return { groups, keys, byName: new Map(keys.map((key) => [key.name, key])) }
}
