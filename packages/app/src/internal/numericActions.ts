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
