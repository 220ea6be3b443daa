/**
 * A resolved configuration: the sources merged over the registry's defaults, every value checked against its
 * key, and read back typed with `conf.get(key)`.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import { suggest } from "./internal/suggest.js"
import type * as Key from "./Key.js"
import { InvalidConf, type Problem } from "./Problem.js"
import type { Registry } from "./Registry.js"
import type { Source } from "./Source.js"

/**
 * An effective value as written, and the source that set it (`default` for a key's default).
 *
 * @since 0.1.0
 * @category models
 */
export interface Entry {
  readonly key: string
  readonly value: string
  readonly source: string
}

/**
 * The configuration of a process that knows the keys `K`. A `Conf` comes only from {@link resolve}, which has
 * checked every value it holds.
 *
 * @since 0.1.0
 * @category models
 */
export interface Conf<K extends Key.Any> {
  /**
   * The key's value: from the last source that sets it, else the value of the key it falls back to, else its
   * default; `undefined` for an optional key no source sets. Durations are in milliseconds, sizes in MiB.
   */
  readonly get: <Q extends K>(key: Q) => Key.Value<Q>
  /** Every key that has a value, in the registry's order, with the source that set it; secrets redacted. */
  readonly entries: ReadonlyArray<Entry>
}

/**
 * What to do with a key the registry does not know. The `kindling` command knows every role's keys and fails, so
 * that a misspelt key never passes silently; a process Kindling starts itself knows only its role's keys and
 * ignores the others, which the command that started it has already checked.
 *
 * @since 0.1.0
 * @category models
 */
export type UnknownKeys = "fail" | "ignore"

interface Setting {
  readonly raw: string
  readonly source: string
  readonly value: unknown
}

const redacted = "*********(redacted)"

const make = <K extends Key.Any>(registry: Registry<K>, settings: ReadonlyMap<string, Setting>): Conf<K> => {
  const setting = (key: Key.Any): Setting | undefined =>
    settings.get(key.name) ?? (key.fallback === undefined ? undefined : setting(key.fallback))
  return {
    get: <Q extends K>(key: Q) => {
      // The types allow only registered keys; a key from elsewhere would silently read its default.
      if (registry.byName.get(key.name) !== key) throw new Error(`${key.name} is not a key of this configuration`)
      return setting(key)?.value as Key.Value<Q>
    },
    entries: registry.keys.flatMap((key) => {
      const own = settings.get(key.name)
      const effective = own ?? setting(key)
      if (effective === undefined) return []
      const source = own === undefined ? `${effective.source}, via ${key.fallback?.name}` : effective.source
      return [{ key: key.name, value: key.secret ? redacted : effective.raw, source }]
    })
  }
}

/**
 * Merges sources given lowest first over the registry's defaults: a later source's value wins. Every ill-typed
 * value of every source, and with `unknownKeys: "fail"` (the default) every unknown key, is reported at once.
 *
 * @since 0.1.0
 * @category constructors
 */
export const resolve = <K extends Key.Any>(
  registry: Registry<K>,
  sources: ReadonlyArray<Source>,
  options: { readonly unknownKeys?: UnknownKeys | undefined } = {}
): Either.Either<Conf<K>, InvalidConf> => {
  const settings = new Map<string, Setting>()
  for (const key of registry.keys) {
    if (key.default !== undefined) {
      // Registry.make has checked every default.
      settings.set(key.name, {
        raw: key.default,
        source: "default",
        value: Either.getOrThrow(key.type.decode(key.default))
      })
    }
  }
  const problems: Array<Problem> = []
  for (const source of sources) {
    for (const [name, raw] of Object.entries(source.values)) {
      const line = source.lines?.[name]
      const at = line === undefined ? { source: source.name } : { source: source.name, line }
      const key = registry.byName.get(name)
      if (key === undefined) {
        if (options.unknownKeys === "ignore") continue
        const suggestion = suggest(registry.keys, name)
        problems.push({ _tag: "UnknownKey", ...at, key: name, ...(suggestion === undefined ? {} : { suggestion }) })
        continue
      }
      Either.match(key.type.decode(raw), {
        onLeft: (reason) => problems.push({ _tag: "InvalidValue", ...at, key: name, reason }),
        onRight: (value) => settings.set(name, { raw, source: source.name, value })
      })
    }
  }
  return problems.length > 0 ? Either.left(new InvalidConf({ problems })) : Either.right(make(registry, settings))
}
