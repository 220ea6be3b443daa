/**
 * The functions the dataset API's own operations ship to executors (`keys`, the join of cogrouped values, …):
 * self-contained source text, so that they travel like any function expression.
 *
 * @since 0.1.0
 */
import type { TaskPlan } from "@kindling/protocol"

type FunctionRef = typeof TaskPlan.FunctionRef.Encoded

const source = (text: string, env?: unknown): FunctionRef => ({ _tag: "SourceFunction", source: text, env })

/** @since 0.1.0 */
export const key = source("(pair) => pair[0]")
/** @since 0.1.0 */
export const value = source("(pair) => pair[1]")
/** @since 0.1.0 */
export const identity = source("(value) => value")
/** @since 0.1.0 */
export const withNull = source("(record) => [record, null]")
/** @since 0.1.0 */
export const keepFirst = source("(a) => a")
/** @since 0.1.0 */
export const one = source("() => 1")
/** @since 0.1.0 */
export const sum = source("(a, b) => a + b")

/**
 * `groupByKey`'s aggregator: the values of a key in an array.
 *
 * @since 0.1.0
 */
export const grouping: typeof TaskPlan.Aggregator.Encoded = {
  createCombiner: source("(value) => [value]"),
  mergeValue: source("(values, value) => { values.push(value); return values }"),
  mergeCombiners: source("(a, b) => a.concat(b)")
}

/**
 * The pairs of values a join makes of a key's cogrouped values: every value of the left with every value of the
 * right, and, for an outer side, its values alone with `undefined` when the other side has none.
 *
 * @since 0.1.0
 */
export const joined = (outer: { readonly left: boolean; readonly right: boolean }): FunctionRef =>
  source(
    `(groups, outer) => {
      const [left, right] = groups
      const pairs = []
      for (const v of left) for (const w of right) pairs.push([v, w])
      if (outer.left && right.length === 0) for (const v of left) pairs.push([v, undefined])
      if (outer.right && left.length === 0) for (const w of right) pairs.push([undefined, w])
      return pairs
    }`,
    outer
  )

/**
 * Keeps the cogrouped records whose groups are all non-empty (`intersection`).
 *
 * @since 0.1.0
 */
export const inAll = source("(pair) => pair[1].every((values) => values.length > 0)")

/**
 * The left values of the keys the right side lacks, once per value (`subtract`).
 *
 * @since 0.1.0
 */
export const onlyLeft = source("(pair) => pair[1][1].length === 0 ? pair[1][0].map(() => pair[0]) : []")

/**
 * Keeps the pairs whose key equals `key` structurally (`lookup`).
 *
 * @since 0.1.0
 */
export const hasKey = (key: unknown): FunctionRef =>
  source(
    `(pair, key) => {
      const equal = (a, b) => Array.isArray(a)
        ? Array.isArray(b) && a.length === b.length && a.every((x, i) => equal(x, b[i]))
        : a === b || (a !== a && b !== b)
      return equal(pair[0], key)
    }`,
    key
  )

/**
 * The left values of a key the right side lacks (`subtractByKey`).
 *
 * @since 0.1.0
 */
export const leftWithoutRight = source("(groups) => groups[1].length === 0 ? groups[0] : []")

/**
 * The records of two partitions side by side, `[a, b]`; partitions of different sizes fail the task (`zip`).
 *
 * @since 0.1.0
 */
export const zip = source(`function* (left, right) {
  const a = left[Symbol.iterator]()
  const b = right[Symbol.iterator]()
  for (;;) {
    const x = a.next()
    const y = b.next()
    if (x.done !== y.done) throw new Error("zip: partitions of unequal numbers of records cannot be zipped")
    if (x.done) return
    yield [x.value, y.value]
  }
}`)

/**
 * Each record keyed by its partition's index modulo `n` (a level of `treeAggregate`).
 *
 * @since 0.1.0
 */
export const keyedByPartition = (n: number): FunctionRef =>
  source("function* (partition, records, n) { for (const record of records) yield [partition % n, record] }", n)
