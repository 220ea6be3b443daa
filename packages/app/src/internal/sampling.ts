// What `takeSample` draws with, as Spark's: the fraction of its sample, as SamplingUtils computes it (one that gives
// at least the number of records asked for with very high probability, 99.99 %, so that one pass almost always
// does), and the shuffle of what it drew.
import type { SparkRandom } from "@kindling/data"

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

// Fisher–Yates, in place, as Spark's Utils.randomizeInPlace draws it.
export const shuffle = <A>(items: Array<A>, random: SparkRandom.JavaRandom): Array<A> => {
  for (let i = items.length - 1; i > 0; i--) {
    const j = random.nextInt(i + 1)
    const held = items[i]!
    items[i] = items[j]!
    items[j] = held
  }
  return items
}
