// Spark's samplers (its RandomSampler.scala), drawing what Spark's draw from the same seed: a partition's records
// kept by Bernoulli trials, or each repeated a Poisson number of times, and `randomSplit`'s ranges of one draw.
import { SparkRandom } from "@kindling/data"
import { poissonDraws } from "./poissonDraws.js"

// Fractions up to this are sampled by the gaps between kept records, one draw per kept record (Spark's
// defaultMaxGapSamplingFraction); the smallest draw a gap is computed from (its rngEpsilon).
const maxGapFraction = 0.4
const epsilon = 5e-11

// Spark's BernoulliSampler: each record kept with probability `fraction`.
function* bernoulli(records: Iterable<unknown>, fraction: number, seed: bigint): Generator<unknown> {
  if (fraction <= 0) return
  if (fraction >= 1) return yield* records
  const random = new SparkRandom.XORShiftRandom(seed)
  if (fraction > maxGapFraction) {
    for (const record of records) if (random.nextDouble() <= fraction) yield record
    return
  }
  // GapSampling: the records dropped before the next kept one, geometric.
  const lnq = Math.log1p(-fraction)
  const gap = () => SparkRandom.javaInt(Math.log(Math.max(random.nextDouble(), epsilon)) / lnq)
  yield* gapSampled(records, gap, () => 1)
}

// Spark's gap sampling: `gap()` records dropped, then one kept, `times()` over, and so on; each kept record's times
// are drawn before the gap after it, as Spark draws them.
function* gapSampled(records: Iterable<unknown>, gap: () => number, times: () => number): Generator<unknown> {
  let dropping = -1
  for (const record of records) {
    if (dropping < 0) dropping = gap()
    if (dropping > 0) {
      dropping--
      continue
    }
    const kept = times()
    dropping = gap()
    for (let n = kept; n > 0; n--) yield record
  }
}

// Spark's PoissonSampler: each record repeated a Poisson(`fraction`) number of times.
function* poissonSampled(records: Iterable<unknown>, fraction: number, seed: bigint): Generator<unknown> {
  if (fraction <= 0) return
  if (fraction > maxGapFraction) {
    const random = new SparkRandom.Well19937c(seed)
    const poisson = poissonDraws(fraction)
    for (const record of records) {
      for (let n = poisson(random); n > 0; n--) yield record
    }
    return
  }
  // GapSamplingReplacement: the records repeated 0 times skipped (geometric), the others repeated a Poisson number
  // of times conditioned on at least one.
  const random = new SparkRandom.XORShiftRandom(seed)
  const q = Math.exp(-fraction)
  const gap = () => SparkRandom.javaInt(Math.log(Math.max(random.nextDouble(), epsilon)) / -fraction)
  const atLeastOne = () => {
    let p = q + (1 - q) * random.nextDouble()
    let n = 1
    p *= random.nextDouble()
    while (p > q) {
      n++
      p *= random.nextDouble()
    }
    return n
  }
  yield* gapSampled(records, gap, atLeastOne)
}

// Spark's BernoulliCellSampler, as randomSplit uses it: a record is in the split whose range its draw falls in.
function* cell(records: Iterable<unknown>, lower: number, upper: number, seed: bigint): Generator<unknown> {
  if (upper - lower <= 0) return
  const random = new SparkRandom.XORShiftRandom(seed)
  for (const record of records) {
    const x = random.nextDouble()
    if (x >= lower && x < upper) yield record
  }
}

/**
 * One partition's sample, as Spark's `sample` (seeded per partition from `seed`: `SparkRandom.partitionSeed`) or,
 * with a lower bound, as a split of Spark's `randomSplit` (its range [lowerBound, fraction), seeded with `seed`
 * plus the partition).
 */
export const sampled = (
  records: Iterable<unknown>,
  options: {
    readonly withReplacement: boolean
    readonly fraction: number
    readonly lowerBound?: number | undefined
    readonly seed: number
    readonly partition: number
  }
): Iterable<unknown> => {
  if (options.lowerBound !== undefined) {
    return cell(records, options.lowerBound, options.fraction, BigInt(options.seed) + BigInt(options.partition))
  }
  const seed = SparkRandom.partitionSeed(options.seed, options.partition)
  return options.withReplacement
    ? poissonSampled(records, options.fraction, seed)
    : bernoulli(records, options.fraction, seed)
}
