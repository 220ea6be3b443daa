// Spark's generators against the numbers the JVM prints for them (Java 17's java.util.Random, Spark 4.3's
// XORShiftRandom, commons-math 3.6.1's Well19937c, by jshell), and the properties of the samplers built on them.
// That the samplers draw Spark's very samples is checked against Spark itself in the driver's Operations test.
import { assert, describe, it } from "@effect/vitest"
import { SparkRandom } from "@kindling/data"
import { FastCheck as fc } from "effect"
import { sampled } from "../src/engine/internal/samplers.js"

const draws = <A>(n: number, draw: () => A) => Array.from({ length: n }, draw)

describe("SparkRandom", () => {
  it("java.util.Random: ints, bounded ints (a power of 2, and a bound that rejects half the draws), longs", () => {
    const random = new SparkRandom.JavaRandom(42)
    assert.deepStrictEqual(draws(3, () => random.nextInt()), [-1170105035, 234785527, -1360544799])
    const bounded = new SparkRandom.JavaRandom(-7)
    assert.deepStrictEqual(
      [10, 16, 2 ** 30 + 1, 2 ** 30 + 1, 2 ** 30 + 1, 2 ** 30 + 1].map((bound) => bounded.nextInt(bound)),
      [2, 14, 314447087, 677675436, 184135245, 425474944]
    )
    const longs = new SparkRandom.JavaRandom(2 ** 53 - 1)
    assert.deepStrictEqual(draws(2, () => longs.nextLong()), [4961115982468162243n, 226341162490527646n])
  })

  it("XORShiftRandom, its seed spread by MurmurHash3", () => {
    const random = new SparkRandom.XORShiftRandom(42)
    assert.deepStrictEqual(draws(3, () => random.nextDouble()), [
      0.619189370225301,
      0.5096018842446481,
      0.8325259388871524
    ])
    const negative = new SparkRandom.XORShiftRandom(-(2 ** 40))
    assert.deepStrictEqual(draws(2, () => negative.nextDouble()), [0.22448608674105341, 0.2502398221634343])
  })

  it("Well19937c: doubles, the normal deviates made in pairs, and the thousand-and-first draw", () => {
    const random = new SparkRandom.Well19937c(42)
    assert.deepStrictEqual(
      [random.nextDouble(), random.nextDouble(), random.nextGaussian(), random.nextGaussian(), random.nextGaussian()],
      [0.28813207678514097, 0.7223645124852498, 1.184260794617974, -2.297748640363674, 0.21612532086748457]
    )
    const later = new SparkRandom.Well19937c(-3)
    for (let i = 0; i < 1000; i++) later.nextDouble()
    assert.strictEqual(later.nextDouble(), 0.7584144342182229)
  })

  it("Java's casts of a double: truncated, NaN 0, saturated", () => {
    assert.deepStrictEqual(
      [-2.7, 2.7, Number.NaN, 1e12, -1e12, Infinity].map(SparkRandom.javaInt),
      [-2, 2, 0, 2 ** 31 - 1, -(2 ** 31), 2 ** 31 - 1]
    )
    assert.strictEqual(SparkRandom.javaLong(1e12), 1e12)
  })
})

// The regimes of Spark's samplers: gap sampling up to 0.4, a draw per record above; with replacement, Poisson
// draws by products of uniforms under 40, by rejection from 40.
const withoutReplacement = fc.oneof(fc.constantFrom(0, 0.4, 1), fc.double({ min: 0, max: 1, noNaN: true }))
const withReplacement = fc.oneof(
  fc.constantFrom(0, 0.4, 40),
  fc.double({ min: 0, max: 3, noNaN: true }),
  fc.double({ min: 39, max: 90, noNaN: true })
)
const seed = fc.integer({ min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER })
const records = fc.nat(300).map((n) => Array.from({ length: n }, (_, i) => i))
const partition = fc.nat(20)

// One partition's sample of numbers.
const sample = (rs: ReadonlyArray<number>, options: Parameters<typeof sampled>[1]) =>
  [...sampled(rs, options)] as Array<number>

// Whether `drawn` is a subsequence of `records` (0…n-1, so in increasing order), repeats allowed or not.
const isSubsequence = (drawn: ReadonlyArray<number>, records: ReadonlyArray<number>, repeats: boolean) =>
  drawn.every((record, i) =>
    records.includes(record) && (i === 0 || (repeats ? record >= drawn[i - 1]! : record > drawn[i - 1]!))
  )

describe("Spark's samplers", () => {
  it("a seed and a partition always draw the same sample", () => {
    fc.assert(
      fc.property(fc.boolean(), withReplacement, seed, partition, records, (replacement, f, seed, partition, rs) => {
        const fraction = replacement ? f : Math.min(f, 1)
        const draw = () => sample(rs, { withReplacement: replacement, fraction, seed, partition })
        assert.deepStrictEqual(draw(), draw())
      }),
      { numRuns: 200 }
    )
  })

  it("without replacement: records in their order, none twice; none at 0, all at 1", () => {
    fc.assert(
      fc.property(withoutReplacement, seed, partition, records, (fraction, seed, partition, rs) => {
        const drawn = sample(rs, { withReplacement: false, fraction, seed, partition })
        assert.isTrue(isSubsequence(drawn, rs, false))
        if (fraction === 0) assert.deepStrictEqual(drawn, [])
        if (fraction === 1) assert.deepStrictEqual(drawn, rs)
      }),
      { numRuns: 300 }
    )
  })

  it("with replacement: each record some number of times, in their order; none at 0", () => {
    fc.assert(
      fc.property(withReplacement, seed, partition, records, (fraction, seed, partition, rs) => {
        const drawn = sample(rs, { withReplacement: true, fraction, seed, partition })
        assert.isTrue(isSubsequence(drawn, rs, true))
        if (fraction === 0) assert.deepStrictEqual(drawn, [])
      }),
      { numRuns: 200 }
    )
  })

  it("the partitions of a sample are seeded apart: a fraction of 0.5 keeps other records in another partition", () => {
    const rs = Array.from({ length: 200 }, (_, i) => i)
    fc.assert(
      fc.property(fc.boolean(), seed, (replacement, seed) => {
        const of = (partition: number) => sample(rs, { withReplacement: replacement, fraction: 0.5, seed, partition })
        assert.notDeepEqual(of(0), of(1))
      }),
      { numRuns: 50 }
    )
  })

  it("randomSplit's ranges of one seed: every record in exactly one, in its order", () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 5 }),
        seed,
        partition,
        records,
        (cuts, seed, partition, rs) => {
          const bounds = [0, ...[...cuts].sort((a, b) => a - b), 1]
          const splits = bounds.slice(1).map((upper, i) =>
            sample(rs, { withReplacement: false, fraction: upper, lowerBound: bounds[i]!, seed, partition })
          )
          for (const split of splits) assert.isTrue(isSubsequence(split, rs, false))
          assert.deepStrictEqual(splits.flat().sort((a, b) => a - b), rs)
        }
      ),
      { numRuns: 200 }
    )
  })

  it("takeSample(true, 1, 173865) over 10 records finds its first sample empty, so the fixture's case draws again", () => {
    // takeSample's fraction for 1 record of 10 with replacement: (1 + 12·√1) / 10, its sample's seed the first int
    // of java.util.Random(173865).
    const rs = Array.from({ length: 10 }, (_, i) => i)
    const first = new SparkRandom.JavaRandom(173865).nextInt()
    assert.deepStrictEqual(sample(rs, { withReplacement: true, fraction: 1.3, seed: first, partition: 0 }), [])
  })
})
