// The actions on a dataset of numbers (Spark's DoubleRDDFunctions): a sum, the greatest and least, and the
// statistics of Spark's StatCounter — count, mean, variance, extremes — computed in one pass per partition and
// merged on the driver (Chan et al.'s parallel algorithm, as Spark's).
import type { TaskPlan } from "@kindling/protocol"

type FunctionRef = typeof TaskPlan.FunctionRef.Encoded

// A function that runs both on the executors (shipped as its own source, so it must be self-contained) and on the
// driver, which merges what the partitions gave.
const both = <F extends (...args: Array<never>) => unknown>(f: F): { readonly ref: FunctionRef; readonly f: F } => ({
  ref: { _tag: "SourceFunction", source: String(f), env: undefined },
  f
})

// NaN is the greatest, as in Spark's ordering of doubles.
export const greater = both((a: number, b: number): number => (a > b || Number.isNaN(a) ? a : b))
export const lesser = both((a: number, b: number): number => (a < b || Number.isNaN(b) ? a : b))

/** [count, mean, sum of squared deviations, max, min]: what a partition's numbers fold into. */
export type Counter = readonly [number, number, number, number, number]

export const emptyCounter: Counter = [0, 0, 0, Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY]

// Welford's update, one number at a time.
export const add = both((counter: Counter, x: number): Counter => {
  const [n, mean, m2, max, min] = counter
  const delta = x - mean
  const next = mean + delta / (n + 1)
  return [n + 1, next, m2 + delta * (x - next), Math.max(max, x), Math.min(min, x)]
})

// Two partitions' counters as one; the mean weighted toward the larger side to keep its precision, as Spark does.
export const merge = (a: Counter, b: Counter): Counter => {
  const [n, mean, m2, max, min] = a
  const [m, otherMean, otherM2, otherMax, otherMin] = b
  if (m === 0) return a
  if (n === 0) return b
  const delta = otherMean - mean
  const merged = m * 10 < n
    ? mean + (delta * m) / (n + m)
    : n * 10 < m
    ? otherMean - (delta * n) / (n + m)
    : (mean * n + otherMean * m) / (n + m)
  return [
    n + m,
    merged,
    m2 + otherM2 + (delta * delta * n * m) / (n + m),
    Math.max(max, otherMax),
    Math.min(min, otherMin)
  ]
}

/**
 * The statistics of some numbers, as Spark's `StatCounter` gives them: of none, a count and sum of 0, a mean of
 * 0, variances NaN, `max` −∞ and `min` +∞.
 */
export interface Stats {
  readonly count: number
  readonly mean: number
  readonly sum: number
  readonly max: number
  readonly min: number
  /** The population variance (divided by the count). */
  readonly variance: number
  /** The sample variance (divided by the count less one). */
  readonly sampleVariance: number
  readonly stdev: number
  readonly sampleStdev: number
}

export const stats = ([n, mean, m2, max, min]: Counter): Stats => {
  const variance = n === 0 ? Number.NaN : m2 / n
  const sampleVariance = n <= 1 ? Number.NaN : m2 / (n - 1)
  return {
    count: n,
    mean,
    sum: n * mean,
    max,
    min,
    variance,
    sampleVariance,
    stdev: Math.sqrt(variance),
    sampleStdev: Math.sqrt(sampleVariance)
  }
}

/** Where `histogram` counts: bucket bounds, and whether they are evenly spaced (a bucket is then computed). */
export interface Buckets {
  readonly bounds: ReadonlyArray<number>
  readonly even: boolean
}

/**
 * The buckets of `histogram(bounds)`, as PySpark checks them: at least two bounds, none NaN, increasing; even when
 * their steps differ by less than 1e-10. What is wrong with them when they are not buckets.
 */
export const bucketsOf = (bounds: ReadonlyArray<number>): Buckets | string => {
  if (bounds.length < 2) return "the buckets need at least two bounds"
  if (bounds.some((bound) => typeof bound !== "number" || Number.isNaN(bound))) return "a bucket bound is NaN"
  for (let i = 1; i < bounds.length; i++) {
    if (!(bounds[i]! > bounds[i - 1]!)) return "the bucket bounds must increase, without duplicates"
  }
  const steps = bounds.slice(1).map((bound, i) => bound - bounds[i]!)
  return { bounds, even: Math.max(...steps) - Math.min(...steps) < 1e-10 }
}

/**
 * `count` evenly spaced buckets from `min` to `max`, as PySpark makes them (the last bound `max` itself).
 */
export const evenBuckets = (min: number, max: number, count: number): Buckets => {
  const step = (max - min) / count
  return { bounds: [...Array.from({ length: count }, (_, i) => i * step + min), max], even: true }
}

/**
 * A partition's counts per bucket: a number in `[bound i, bound i+1)` counts in bucket i, the last bucket closed;
 * NaN and numbers outside the bounds are not counted. Shipped as its own source: it must be self-contained.
 */
export const countBuckets = both((counts: Array<number>, x: number, buckets: Buckets): Array<number> => {
  const { bounds, even } = buckets
  const min = bounds[0]!
  const max = bounds[bounds.length - 1]!
  if (typeof x !== "number" || Number.isNaN(x) || x < min || x > max) return counts
  let bucket: number
  if (even) {
    bucket = Math.min(Math.floor((x - min) / ((max - min) / (bounds.length - 1))), bounds.length - 2)
  } else {
    // The last bound not above x.
    let low = 0
    let high = bounds.length - 1
    while (low < high) {
      const middle = (low + high + 1) >> 1
      if (bounds[middle]! <= x) low = middle
      else high = middle - 1
    }
    bucket = Math.min(low, bounds.length - 2)
  }
  counts[bucket]!++
  return counts
})
