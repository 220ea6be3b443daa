/**
 * Spark's random numbers, bit for bit, so that a seeded sample draws what Spark's draws from the same records in
 * the same partitions: `java.util.Random` (what gives each partition of a sample its seed, and what `takeSample`
 * draws its seeds and shuffles with), Spark's `XORShiftRandom` (what its Bernoulli and gap samplers draw with) and
 * commons-math's `Well19937c` (what its Poisson sampler draws with, for fractions over 0.4). Checked against the
 * JVM's numbers (`packages/executor/test/Samplers.test.ts`) and Spark 4.3's own samples
 * (`packages/driver/test/fixtures/spark-sampling.json`).
 *
 * It imports nothing: task threads load it.
 *
 * @since 0.1.0
 */

const mask48 = (1n << 48n) - 1n

// Java's casts of a double to an integer: truncated, NaN 0, saturated at the type's bounds.
const javaCast = (bits: 32 | 64) => {
  const max = 2 ** (bits - 1)
  return (x: number): number => (Number.isNaN(x) ? 0 : Math.max(-max, Math.min(max - 1, Math.trunc(x))))
}

/**
 * Java's `(int)` of a double, as Spark's samplers cast the gaps they draw.
 *
 * @since 0.1.0
 */
export const javaInt: (x: number) => number = javaCast(32)

/**
 * Java's `(long)` of a double (as a number: past 2^53 not exact).
 *
 * @since 0.1.0
 */
export const javaLong: (x: number) => number = javaCast(64)

/**
 * `java.util.Random`: a 48-bit linear congruential generator.
 *
 * @since 0.1.0
 * @category models
 */
export class JavaRandom {
  private seed: bigint

  constructor(seed: number | bigint) {
    this.seed = (BigInt.asIntN(64, BigInt(seed)) ^ 0x5deece66dn) & mask48
  }

  private next(bits: number): number {
    this.seed = (this.seed * 0x5deece66dn + 0xbn) & mask48
    return Number(BigInt.asIntN(32, this.seed >> BigInt(48 - bits)))
  }

  /** A signed 32-bit integer; with `bound`, one in [0, bound). */
  nextInt(bound?: number): number {
    if (bound === undefined) return this.next(32)
    let r = this.next(31)
    const m = bound - 1
    if ((bound & m) === 0) return Number((BigInt(bound) * BigInt(r)) >> 31n)
    // Java's rejection of the values that would favour the low ones, its int overflow included.
    for (let u = r; ((u - (r = u % bound) + m) | 0) < 0; u = this.next(31)) {
      // drawn again
    }
    return r
  }

  /** A signed 64-bit integer. */
  nextLong(): bigint {
    return BigInt.asIntN(64, (BigInt(this.next(32)) << 32n) + BigInt(this.next(32)))
  }
}

// Scala's MurmurHash3.bytesHash, by which XORShiftRandom spreads its seed.
const rotl = (x: number, r: number) => (x << r) | (x >>> (32 - r))
const mixLast = (hash: number, data: number) => hash ^ Math.imul(rotl(Math.imul(data, 0xcc9e2d51), 15), 0x1b873593)
const mix = (hash: number, data: number) => (Math.imul(rotl(mixLast(hash, data), 13), 5) + 0xe6546b64) | 0
const bytesHash = (data: Uint8Array, seed: number): number => {
  let h = seed
  let i = 0
  for (; i + 4 <= data.length; i += 4) {
    h = mix(h, data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24))
  }
  const left = data.length - i
  let k = 0
  if (left === 3) k ^= data[i + 2]! << 16
  if (left >= 2) k ^= data[i + 1]! << 8
  if (left >= 1) h = mixLast(h, k ^ data[i]!)
  h ^= data.length
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b)
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35)
  return h ^ (h >>> 16)
}
const arraySeed = 0x3c074a61

/**
 * Spark's `XORShiftRandom`: a 64-bit xorshift generator (held as two 32-bit halves) whose seed is spread by
 * MurmurHash3 first.
 *
 * @since 0.1.0
 * @category models
 */
export class XORShiftRandom {
  private high: number
  private low: number

  constructor(seed: number | bigint) {
    const bytes = new Uint8Array(8)
    new DataView(bytes.buffer).setBigInt64(0, BigInt.asIntN(64, BigInt(seed)))
    const low = bytesHash(bytes, arraySeed)
    this.low = low >>> 0
    this.high = bytesHash(bytes, low) >>> 0
  }

  private next(bits: number): number {
    let { high, low } = this
    // x ^= x << 21; x ^= x >>> 35; x ^= x << 4
    high = (high ^ ((high << 21) | (low >>> 11))) >>> 0
    low = (low ^ (low << 21)) >>> 0
    low = (low ^ (high >>> 3)) >>> 0
    high = (high ^ ((high << 4) | (low >>> 28))) >>> 0
    low = (low ^ (low << 4)) >>> 0
    this.high = high
    this.low = low
    return low & ((1 << bits) - 1)
  }

  /** A double in [0, 1), as `java.util.Random.nextDouble` makes one of 53 bits. */
  nextDouble(): number {
    return (this.next(26) * 2 ** 27 + this.next(27)) * 2 ** -53
  }
}

// Well19937c's state and the positions its recurrence reads, relative to the current one.
const words = 624
const offsets = (by: number) => Int32Array.from({ length: words }, (_, j) => (j + by) % words)
const minus1 = offsets(words - 1)
const minus2 = offsets(words - 2)
const plus70 = offsets(70)
const plus179 = offsets(179)
const plus449 = offsets(449)

/**
 * commons-math's `Well19937c` (the WELL generator with Matsumoto–Kurita tempering), seeded as its `setSeed(long)`
 * seeds it.
 *
 * @since 0.1.0
 * @category models
 */
export class Well19937c {
  private readonly v = new Int32Array(words)
  private index = 0
  // The second of the pair of normal deviates the last nextGaussian made, until it is drawn.
  private gaussian = Number.NaN

  constructor(seed: number | bigint) {
    const long = BigInt.asIntN(64, BigInt(seed))
    const v = this.v
    v[0] = Number(BigInt.asIntN(32, long >> 32n))
    v[1] = Number(BigInt.asIntN(32, long))
    for (let i = 2; i < words; i++) {
      const l = BigInt(v[i - 2]!)
      v[i] = Number(BigInt.asIntN(32, 1812433253n * (l ^ (l >> 30n)) + BigInt(i)))
    }
  }

  private next(bits: number): number {
    const { index, v } = this
    const r1 = minus1[index]!
    const r2 = minus2[index]!
    const v0 = v[index]!
    const vM1 = v[plus70[index]!]!
    const vM2 = v[plus179[index]!]!
    const vM3 = v[plus449[index]!]!
    const z0 = (0x80000000 & v[r1]!) ^ (0x7fffffff & v[r2]!)
    const z1 = v0 ^ (v0 << 25) ^ (vM1 ^ (vM1 >>> 27))
    const z2 = (vM2 >>> 9) ^ (vM3 ^ (vM3 >>> 1))
    const z3 = z1 ^ z2
    let z4 = z0 ^ (z1 ^ (z1 << 9)) ^ (z2 ^ (z2 << 21)) ^ (z3 ^ (z3 >>> 21))
    v[index] = z3
    v[r1] = z4
    v[r2] = v[r2]! & 0x80000000
    this.index = r1
    z4 ^= (z4 << 7) & 0xe46e1700
    z4 ^= (z4 << 15) & 0x9b868000
    return z4 >>> (32 - bits)
  }

  /** A double in [0, 1) of 52 bits, as commons-math's `BitsStreamGenerator` makes one. */
  nextDouble(): number {
    return (this.next(26) * 2 ** 26 + this.next(26)) * 2 ** -52
  }

  /** A standard normal deviate: `BitsStreamGenerator`'s Box–Muller transform, which makes them in pairs. */
  nextGaussian(): number {
    const held = this.gaussian
    if (!Number.isNaN(held)) {
      this.gaussian = Number.NaN
      return held
    }
    const angle = 2 * Math.PI * this.nextDouble()
    const radius = Math.sqrt(-2 * Math.log(this.nextDouble()))
    this.gaussian = radius * Math.sin(angle)
    return radius * Math.cos(angle)
  }
}

/**
 * The seed of partition `partition` of a sample seeded with `seed`: Spark's `PartitionwiseSampledRDD` draws one
 * long per partition, in order, from `java.util.Random(seed)`.
 *
 * @since 0.1.0
 */
export const partitionSeed = (seed: number, partition: number): bigint => {
  const random = new JavaRandom(seed)
  let drawn = random.nextLong()
  for (let i = 0; i < partition; i++) drawn = random.nextLong()
  return drawn
}
