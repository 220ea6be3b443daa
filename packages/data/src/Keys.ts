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

// Whether two keys with one hash are the same key: `===`, else by structure (arrays element by element, NaN equal
// to NaN); keys of different kinds never are, since `compare` ranks kinds apart.
const same = (a: Key, b: Key): boolean => a === b || (typeof a !== "string" && compare(a, b) === 0)

// A hash's slot among 2^(32 - shift): its product with the golden ratio's top bits, which all of the hash's bits
// move (integer keys' hashes differ in their high bits alone when the keys are multiples of a power of two).
const slotOf = (h: number, shift: number): number => Math.imul(h, 0x9e3779b1) >>> shift

/**
 * A map from keys to values with structural equality: primitives by value, -0 as 0 and NaN as NaN (as `Map` compares
 * them), arrays by their elements. Entries keep the order they were added in.
 *
 * It is the map-side combine's table, looked up once per record: each key is hashed once (`hash`, the hash that
 * places it in a reduce partition) into an open-addressed index over the entries, rather than named by a string
 * built for it (arrays) or hashed again by `Map` on every lookup of a fresh string. A record updates its key's
 * entry in place through `locate` and `values`, one lookup where `get` then `set` would be two.
 *
 * @since 0.1.0
 * @category models
 */
export class KeyMap<V> {
  /** The keys, in the order they were added. */
  readonly keys: Array<Key> = []
  /** Each key's value, at its key's position. */
  readonly values: Array<V> = []
  private hashes: Array<number> = []
  // Slot → entry position + 1 (0: empty): 2^(32 - shift) slots, kept at most half full.
  private index = new Int32Array(16)
  private shift = 28

  get size(): number {
    return this.keys.length
  }

  /**
   * The position of `key`'s entry, or, when it has none, `~position` of the entry made for it — its value
   * `undefined` until set through `values`.
   */
  locate(key: Key): number {
    const h = typeof key === "string" ? hashString(key, 0) : hash(key)
    const found = this.probe(key, h)
    if (found >= 0) return found
    const position = this.keys.length
    this.keys.push(key)
    this.values.push(undefined as V)
    this.hashes.push(h)
    this.index[~found] = position + 1
    if (2 * this.keys.length > this.index.length) this.grow()
    return ~position
  }

  get(key: Key): V | undefined {
    const at = this.find(key)
    return at < 0 ? undefined : this.values[at]
  }

  set(key: Key, value: V): void {
    const at = this.locate(key)
    this.values[at < 0 ? ~at : at] = value
  }

  *entries(): Generator<[Key, V]> {
    for (let i = 0; i < this.keys.length; i++) yield [this.keys[i]!, this.values[i]!]
  }

  clear(): void {
    this.keys.length = 0
    this.values.length = 0
    this.hashes = []
    this.index = new Int32Array(16)
    this.shift = 28
  }

  private find(key: Key): number {
    const found = this.probe(key, typeof key === "string" ? hashString(key, 0) : hash(key))
    return found >= 0 ? found : -1
  }

  // The position of the entry of `key` (hashed `h`), or `~slot` of the empty slot where its probe ended.
  private probe(key: Key, h: number): number {
    const index = this.index
    const mask = index.length - 1
    for (let slot = slotOf(h, this.shift);; slot = (slot + 1) & mask) {
      const at = index[slot]!
      if (at === 0) return ~slot
      if (this.hashes[at - 1] === h && same(this.keys[at - 1]!, key)) return at - 1
    }
  }

  private grow(): void {
    const index = new Int32Array(this.index.length * 2)
    const mask = index.length - 1
    this.shift--
    for (let i = 0; i < this.hashes.length; i++) {
      let slot = slotOf(this.hashes[i]!, this.shift)
      while (index[slot] !== 0) slot = (slot + 1) & mask
      index[slot] = i + 1
    }
    this.index = index
  }
}
