// The sizes `takeSample` samples with, as Spark's SamplingUtils computes them: a fraction that gives at least the
// number of records asked for with very high probability (99.99 %), so that one pass almost always does.

// Poisson: the mean plus enough standard deviations (more for small means, where the tail is fatter).
const poissonUpperBound = (size: number): number => {
  const deviations = size < 6 ? 12 : size < 16 ? 9 : 6
  return Math.max(size + deviations * Math.sqrt(size), 1e-10)
}

// Binomial: the fraction raised by the bound of the failure probability delta.
const binomialUpperBound = (delta: number, total: number, fraction: number): number => {
  const gamma = -Math.log(delta) / total
  return Math.min(1, Math.max(1e-10, fraction + gamma + Math.sqrt(gamma * gamma + 2 * gamma * fraction)))
}

export const fractionFor = (size: number, total: number, withReplacement: boolean): number =>
  withReplacement ? poissonUpperBound(size) / total : binomialUpperBound(1e-4, total, size / total)

// A seeded generator (mulberry32) for the driver's side of sampling: the seeds of the samples and the shuffle.
export const seeded = (seed: number): () => number => {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

// Fisher–Yates, in place.
export const shuffle = <A>(items: Array<A>, random: () => number): Array<A> => {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    const held = items[i]!
    items[i] = items[j]!
    items[j] = held
  }
  return items
}
