/**
 * Keys of `[key, value]` records, as shuffles see them: strings, numbers, bigints, booleans, and arrays (tuples)
 * of those, compared by structure, never by identity. Equal keys hash alike in every process, so they meet in
 * the same reduce partition; they sort in one total order, so sorted runs can be merged. Anything else as a key
 * is an `InvalidKey` error naming the operation, rather than a silently wrong grouping.
 *
 * The order: booleans (false first), then numbers (NaN last among them; -0 equals 0), then bigints, then
 * strings (by UTF-16 code units, as `<` compares them), then arrays (element by element, a prefix first).
 *
 * It imports nothing, so that a task thread can load it alone.
 *
 * @since 0.1.0
 */

/**
 * @since 0.1.0
 * @category models
 */
export type Key = string | number | bigint | boolean | ReadonlyArray<Key>

/**
 * A record's key is not one a shuffle can compare.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidKey extends Error {}
// On the prototype, so that the stack, taken when the error is made, starts with it.
InvalidKey.prototype.name = "InvalidKey"

const describe = (value: unknown): string => {
  if (value === null) return "null"
  if (value === undefined) return "undefined"
  if (typeof value === "object") return `an object (${value.constructor?.name ?? "Object"})`
  return `a ${typeof value}`
}

/**
 * Throws `InvalidKey` unless `key` is a valid key; `operation` names the transformation for the message.
 *
 * @since 0.1.0
 */
export const check = (key: unknown, operation: string): Key => {
  switch (typeof key) {
    case "string":
    case "number":
    case "bigint":
    case "boolean":
      return key
    case "object":
      if (Array.isArray(key)) {
        for (const element of key) check(element, operation)
        return key as ReadonlyArray<Key>
      }
  }
  throw new InvalidKey(
    `${operation}: a key must be a string, number, bigint, boolean or an array of those, but one was ` +
      describe(key)
  )
}

/**
 * The `[key, value]` pair a record must be for a keyed operation, its key checked.
 *
 * @since 0.1.0
 */
export const pair = (record: unknown, operation: string): readonly [Key, unknown] => {
  if (!Array.isArray(record) || record.length !== 2) {
    throw new InvalidKey(`${operation}: the records must be [key, value] pairs, but one was ${describe(record)}`)
  }
  check(record[0], operation)
  return record as unknown as readonly [Key, unknown]
}

const hashString = (text: string, seed: number): number => {
  // FNV-1a over UTF-16 code units.
  let h = seed ^ 0x811c9dc5
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193)
  return h
}

/**
 * A 32-bit hash, the same in every process for structurally equal keys (0 and -0 alike).
 *
 * @since 0.1.0
 */
export const hash = (key: Key): number => {
  switch (typeof key) {
    case "string":
      return hashString(key, 0)
    case "number":
      return key === (key | 0) ? Math.imul(key, 0x9e3779b1) : hashString(String(key), 1)
    case "bigint":
      return hashString(key.toString(), 2)
    case "boolean":
      return key ? 1231 : 1237
    default: {
      let h = 0x2f
      for (const element of key) h = (Math.imul(h, 31) + hash(element)) | 0
      return h
    }
  }
}

/**
 * The reduce partition of `key` among `partitions`, by hash.
 *
 * @since 0.1.0
 */
export const partitionOf = (key: Key, partitions: number): number => (hash(key) >>> 0) % partitions

const rank = (key: Key): number => {
  switch (typeof key) {
    case "boolean":
      return 0
    case "number":
      return 1
    case "bigint":
      return 2
    case "string":
      return 3
    default:
      return 4
  }
}

/**
 * The total order of keys: negative when `a` comes first, 0 when they are equal, positive otherwise.
 *
 * @since 0.1.0
 */
export const compare = (a: Key, b: Key): number => {
  const ra = rank(a)
  const rb = rank(b)
  if (ra !== rb) return ra - rb
  switch (ra) {
    case 1: {
      const x = a as number
      const y = b as number
      if (x < y) return -1
      if (x > y) return 1
      if (x === y) return 0
      return Number.isNaN(x) ? (Number.isNaN(y) ? 0 : 1) : -1
    }
    case 4: {
      const x = a as ReadonlyArray<Key>
      const y = b as ReadonlyArray<Key>
      const n = Math.min(x.length, y.length)
      for (let i = 0; i < n; i++) {
        const c = compare(x[i]!, y[i]!)
        if (c !== 0) return c
      }
      return x.length - y.length
    }
    default:
      return a < b ? -1 : a > b ? 1 : 0
  }
}

// An array key as a string that identifies its structure: type-tagged elements, strings quoted.
const canonical = (key: Key): string => {
  switch (typeof key) {
    case "string":
      return JSON.stringify(key)
    case "number":
      return Number.isNaN(key) ? "NaN" : String(key) // String(-0) is "0": equal keys, one name
    case "bigint":
      return `${key}n`
    case "boolean":
      return key ? "t" : "f"
    default:
      return `[${key.map(canonical).join(",")}]`
  }
}

/**
 * A map from keys to values with structural equality: primitives by value (as `Map` compares them), arrays by
 * their elements.
 *
 * @since 0.1.0
 * @category models
 */
export class KeyMap<V> {
  private readonly primitives = new Map<Key, V>()
  private readonly arrays = new Map<string, { readonly key: Key; value: V }>()

  get size(): number {
    return this.primitives.size + this.arrays.size
  }

  get(key: Key): V | undefined {
    return typeof key === "object" ? this.arrays.get(canonical(key))?.value : this.primitives.get(key)
  }

  set(key: Key, value: V): void {
    if (typeof key !== "object") {
      this.primitives.set(key, value)
      return
    }
    const name = canonical(key)
    const entry = this.arrays.get(name)
    if (entry === undefined) this.arrays.set(name, { key, value })
    else entry.value = value
  }

  *entries(): Generator<[Key, V]> {
    yield* this.primitives.entries()
    for (const entry of this.arrays.values()) yield [entry.key, entry.value]
  }

  clear(): void {
    this.primitives.clear()
    this.arrays.clear()
  }
}
