// Poisson draws as commons-math's PoissonDistribution.sample makes them, which Spark's PoissonSampler draws with for
// fractions over 0.4: for a mean under 40 the uniform draws multiplied until below exp(-mean); from 40, the
// rejection method of its nextPoisson (normal and exponential proposals, log-factorials), with its exponential
// distribution's own draws. Each step is the library's, in its order, so that the draws are the same from the same
// generator; its FastMath functions are the platform's here, which may differ in the last bit.
import { SparkRandom } from "@kindling/data"

// The factorials a long holds, as doubles: CombinatoricsUtils' table.
const factorials: ReadonlyArray<number> = Array.from({ length: 21 }, (_, n) => {
  let product = 1n
  for (let i = 2n; i <= BigInt(n); i++) product *= i
  return Number(product)
})

// CombinatoricsUtils.factorialLog: the log of the table's factorial, past it a sum of logs.
const factorialLog = (n: number): number => {
  if (n < 21) return Math.log(factorials[n]!)
  let sum = 0
  for (let i = 2; i <= n; i++) sum += Math.log(i)
  return sum
}

// ExponentialDistribution's table for Ahrens and Dieter's SA algorithm: the partial sums of ln(2)^i / i!, up to the
// first that reaches 1.
const saTable: ReadonlyArray<number> = (() => {
  const table: Array<number> = []
  for (let sum = 0, i = 1; sum < 1; i++) {
    sum += Math.log(2) ** i / factorials[i]!
    table.push(sum)
  }
  return table
})()

// ExponentialDistribution(mean 1).sample.
const exponential = (random: SparkRandom.Well19937c): number => {
  let whole = 0
  let u = random.nextDouble()
  while (u < 0.5) {
    whole += saTable[0]!
    u *= 2
  }
  u += u - 1
  if (u <= saTable[0]!) return whole + u
  let i = 0
  let smallest = random.nextDouble()
  do {
    i++
    const next = random.nextDouble()
    if (next < smallest) smallest = next
  } while (u > saTable[i]!)
  return whole + smallest * saTable[0]!
}

type Draw = (random: SparkRandom.Well19937c) => number

// nextPoisson for a mean under 40.
const products = (mean: number): Draw => {
  const limit = Math.exp(-mean)
  return (random) => {
    let n = 0
    let product = 1
    while (n < 1000 * mean) {
      product *= random.nextDouble()
      if (product >= limit) n++
      else return n
    }
    return n
  }
}

// nextPoisson for a mean of 40 or more: the constants it computes on each call, computed once.
const rejection = (mean: number): Draw => {
  const lambda = Math.floor(mean)
  const fractional = mean - lambda
  const logLambda = Math.log(lambda)
  const logLambdaFactorial = factorialLog(SparkRandom.javaInt(lambda))
  const ofFraction = fractional < Number.MIN_VALUE ? undefined : products(fractional)
  const delta = Math.sqrt(lambda * Math.log((32 * lambda) / Math.PI + 1))
  const halfDelta = delta / 2
  const twolpd = 2 * lambda + delta
  const a1 = Math.sqrt(Math.PI * twolpd) * Math.exp(1 / (8 * lambda))
  const a2 = (twolpd / delta) * Math.exp((-delta * (1 + delta)) / twolpd)
  const aSum = a1 + a2 + 1
  const p1 = a1 / aSum
  const p2 = a2 / aSum
  const c1 = 1 / (8 * lambda)
  return (random) => {
    const y2 = ofFraction === undefined ? 0 : ofFraction(random)
    let y: number
    for (;;) {
      const u = random.nextDouble()
      let x: number
      let v: number
      if (u <= p1) {
        const n = random.nextGaussian()
        x = n * Math.sqrt(lambda + halfDelta) - 0.5
        if (x > delta || x < -lambda) continue
        y = x < 0 ? Math.floor(x) : Math.ceil(x)
        v = -exponential(random) - (n * n) / 2 + c1
      } else {
        if (u > p1 + p2) {
          y = lambda
          break
        }
        x = delta + (twolpd / delta) * exponential(random)
        y = Math.ceil(x)
        v = -exponential(random) - (delta * (x + 1)) / twolpd
      }
      const a = x < 0 ? 1 : 0
      const t = (y * (y + 1)) / (2 * lambda)
      if (v < -t && a === 0) {
        y = lambda + y
        break
      }
      const qr = t * ((2 * y + 1) / (6 * lambda) - 1)
      const qa = qr - (t * t) / (3 * (lambda + a * (y + 1)))
      if (v < qa) {
        y = lambda + y
        break
      }
      if (v > qr) continue
      if (v < y * logLambda - factorialLog(SparkRandom.javaInt(y + lambda)) + logLambdaFactorial) {
        y = lambda + y
        break
      }
    }
    return y2 + SparkRandom.javaLong(y)
  }
}

/** PoissonDistribution(mean).sample: a draw function for the mean (> 0), capped at Java's largest int. */
export const poissonDraws = (mean: number): Draw => {
  const draw = mean < 40 ? products(mean) : rejection(mean)
  return (random) => Math.min(draw(random), 2 ** 31 - 1)
}
