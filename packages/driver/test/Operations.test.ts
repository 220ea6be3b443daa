// The operations a Spark port reaches for beyond the basics, each against the same computation on plain arrays
// (and, where Spark's answer is particular, the answer PySpark 4.3 gives, noted beside it).
import { layer } from "@effect/vitest"
import { assert } from "@effect/vitest"
import { type AppEvents, EmptyDataset, InvalidArgument, JobFailed, Kindling } from "@kindling/app"
import { LocalMode } from "@kindling/driver"
import { Effect, FastCheck as fc, Fiber, Queue, Stream } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Zlib from "node:zlib"
import { driverConfig } from "./fixtures/driverConfig.js"

const local = LocalMode.layer({
  appName: "operations",
  threads: 2,
  driver: driverConfig(1),
  heartbeatIntervalMillis: 10_000,
  validateState: true
})

const sumOf = (numbers: ReadonlyArray<number>) => numbers.reduce((a, b) => a + b, 0)

interface SparkSamples {
  readonly sample: ReadonlyArray<
    {
      records: number
      slices: number
      withReplacement: boolean
      fraction: number
      seed: number
      spark: Array<number>
    }
  >
  readonly takeSample: ReadonlyArray<
    { records: number; slices: number; withReplacement: boolean; num: number; seed: number; spark: Array<number> }
  >
  readonly randomSplit: ReadonlyArray<
    { records: number; slices: number; weights: Array<number>; seed: number; spark: Array<Array<number>> }
  >
}
const spark: SparkSamples = JSON.parse(
  Fs.readFileSync(new URL("./fixtures/spark-sampling.json", import.meta.url), "utf8")
)

layer(local, { timeout: 60_000 })("more operations in local[2]", (it) => {
  it.effect("histogram: counted buckets, even or given, as PySpark's", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      const numbers = kc.parallelize([1, 2, 2.5, 3, 4, 5, 10, Number.NaN], 3)
      // PySpark: ([1.0, 2.8, 4.6, 6.4, 8.2, 10.0], [3, 2, 1, 0, 1]), ([0, 2, 4, 10], [1, 3, 3]), …
      assert.deepStrictEqual(yield* numbers.histogram(5), [[1, 2.8, 4.6, 6.4, 8.2, 10], [3, 2, 1, 0, 1]])
      assert.deepStrictEqual(yield* numbers.histogram([0, 2, 4, 10]), [[0, 2, 4, 10], [1, 3, 3]])
      assert.deepStrictEqual(yield* numbers.histogram([0, 5, 10]), [[0, 5, 10], [5, 2]])
      assert.deepStrictEqual(yield* kc.parallelize([3, 3]).histogram(4), [[3, 3], [2]])
      assert.deepStrictEqual(yield* kc.range(1, 11, 1, 2).histogram(3), [[1, 4, 7, 10], [3, 3, 4]])
      assert.instanceOf(yield* Effect.flip(kc.parallelize<number>([], 2).histogram(3)), EmptyDataset)
      assert.instanceOf(yield* Effect.flip(numbers.histogram([3, 1])), InvalidArgument)
      assert.instanceOf(yield* Effect.flip(kc.parallelize([1, Infinity]).histogram(2)), InvalidArgument)
      // Against a plain count, for random numbers and bounds.
      for (
        const [values, bounds] of fc.sample(
          fc.tuple(
            fc.array(fc.integer({ min: -50, max: 50 }), { maxLength: 40 }),
            fc.uniqueArray(fc.integer({ min: -60, max: 60 }), { minLength: 2, maxLength: 6 })
          ),
          { numRuns: 15, seed: 5 }
        )
      ) {
        const sorted = [...bounds].sort((a, b) => a - b)
        const counts = sorted.slice(1).map((upper, i) =>
          values.filter((x) => x >= sorted[i]! && (x < upper || (i === sorted.length - 2 && x === upper))).length
        )
        assert.deepStrictEqual(yield* kc.parallelize(values, 3).histogram(sorted), [sorted, counts])
      }
    }))

  it.effect("takeSample: as many as asked, distinct without replacement, all when fewer; the same seed, the same", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      const ds = kc.range(0, 1000, 1, 4)
      const ten = yield* ds.takeSample(false, 10, 7)
      assert.strictEqual(ten.length, 10)
      assert.strictEqual(new Set(ten).size, 10)
      assert.isTrue(ten.every((x) => x >= 0 && x < 1000))
      assert.deepStrictEqual(yield* ds.takeSample(false, 10, 7), ten)
      assert.strictEqual((yield* ds.takeSample(true, 1500, 3)).length, 1500)
      assert.deepStrictEqual((yield* kc.range(0, 5).takeSample(false, 10, 1)).sort(), [0, 1, 2, 3, 4])
      assert.deepStrictEqual(yield* ds.takeSample(false, 0), [])
      assert.instanceOf(yield* Effect.flip(ds.takeSample(false, -1)), InvalidArgument)
      // One Effect run twice draws twice from the seed.
      const drawn = ds.takeSample(true, 5, 11)
      assert.deepStrictEqual(yield* drawn, yield* drawn)
      assert.strictEqual(
        (yield* Effect.flip(ds.takeSample(false, 3, 1.5))).message,
        "takeSample: the seed must be an integer of at most 2^53 - 1 in size, got 1.5"
      )
      assert.throws(() => ds.sample(false, 0.5, Number.NaN), /^sample: the seed must be an integer .*, got NaN$/)
      assert.throws(
        () => ds.randomSplit([1, 1], 2 ** 60),
        /^randomSplit: the seed must be an integer .*, got 1152921504606847000$/
      )
    }))

  it.effect("sample, takeSample and randomSplit draw Spark's samples: those of the same seed and partitions", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      // Each case over the integers 0…records-1 in `slices` partitions, as scripts/compat/sampling_peer.py had
      // Spark 4.3 draw them.
      const ints = (records: number, slices: number) =>
        kc.parallelize(Array.from({ length: records }, (_, i) => i), slices)
      for (const c of spark.sample) {
        const drawn = yield* ints(c.records, c.slices).sample(c.withReplacement, c.fraction, c.seed).collect()
        assert.deepStrictEqual(drawn, c.spark, `sample ${JSON.stringify({ ...c, spark: undefined })}`)
      }
      for (const c of spark.takeSample) {
        const drawn = yield* ints(c.records, c.slices).takeSample(c.withReplacement, c.num, c.seed)
        assert.deepStrictEqual(drawn, c.spark, `takeSample ${JSON.stringify({ ...c, spark: undefined })}`)
      }
      for (const c of spark.randomSplit) {
        const drawn = yield* Effect.forEach(
          ints(c.records, c.slices).randomSplit(c.weights, c.seed),
          (split) => split.collect()
        )
        assert.deepStrictEqual(drawn, c.spark, `randomSplit ${JSON.stringify({ ...c, spark: undefined })}`)
      }
    }))

  it.effect("zip pairs records by place; zipPartitions runs a function over partitions side by side", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      const letters = [..."abcdef"]
      assert.deepStrictEqual(
        yield* kc.range(0, 6, 1, 2).zip(kc.parallelize(letters, 2)).collect(),
        letters.map((letter, i) => [i, letter])
      )
      const sums = yield* kc.range(0, 6, 1, 2).zipPartitions(
        kc.range(10, 16, 1, 2),
        (mine, theirs) => [[...mine].reduce((a, b) => a + b, 0) + [...theirs].reduce((a, b) => a + b, 0)]
      ).collect()
      assert.deepStrictEqual(sums, [0 + 1 + 2 + 10 + 11 + 12, 3 + 4 + 5 + 13 + 14 + 15])
      const uneven = yield* Effect.flip(kc.range(0, 6, 1, 2).zip(kc.range(0, 7, 1, 2)).collect())
      assert.instanceOf(uneven, JobFailed)
      assert.include(uneven.message, "zip: partitions of unequal numbers of records")
      const partitions = yield* Effect.flip(kc.range(0, 6, 1, 2).zip(kc.range(0, 6, 1, 3)).collect())
      assert.include((partitions as JobFailed).message, "unequal numbers of partitions (2 and 3)")
    }))

  it.effect("subtractByKey keeps the pairs whose key the other lacks, duplicates kept", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      for (
        const [left, right] of fc.sample(
          fc.tuple(
            fc.array(fc.tuple(fc.integer({ min: 0, max: 9 }), fc.integer()), { maxLength: 30 }),
            fc.array(fc.tuple(fc.integer({ min: 0, max: 9 }), fc.string()), { maxLength: 10 })
          ),
          { numRuns: 10, seed: 9 }
        )
      ) {
        const keys = new Set(right.map(([key]) => key))
        const expected = left.filter(([key]) => !keys.has(key))
        const got = yield* kc.parallelize(left, 3).subtractByKey(kc.parallelize(right, 2)).collect()
        const order = (pairs: Array<readonly [number, number]>) => [...pairs].sort((a, b) => a[0] - b[0] || a[1] - b[1])
        assert.deepStrictEqual(order(got), order(expected))
      }
    }))

  it.effect("randomSplit: every record in exactly one split, about in the weights' proportion", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      const splits = kc.range(0, 10_000, 1, 4).randomSplit([1, 2, 7], 42)
      const parts = yield* Effect.forEach(splits, (split) => split.collect())
      assert.deepStrictEqual(parts.flat().sort((a, b) => a - b), Array.from({ length: 10_000 }, (_, i) => i))
      assert.closeTo(parts[0]!.length, 1000, 150)
      assert.closeTo(parts[1]!.length, 2000, 200)
      const again = yield* kc.range(0, 10_000, 1, 4).randomSplit([1, 2, 7], 42)[0]!.collect()
      assert.deepStrictEqual(again, parts[0])
      assert.throws(() => kc.range(0, 10).randomSplit([0, 0]), /the weights must be non-negative/)
    }))

  it.effect("treeAggregate and treeReduce give aggregate's and reduce's answers, at any depth", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      for (
        const [values, partitions, depth] of fc.sample(
          fc.tuple(
            fc.array(fc.integer({ min: -99, max: 99 }), { minLength: 1, maxLength: 80 }),
            fc.integer({ min: 1, max: 12 }),
            fc.integer({ min: 1, max: 4 })
          ),
          { numRuns: 10, seed: 3 }
        )
      ) {
        const ds = kc.parallelize(values, partitions)
        const expected: [number, number] = [sumOf(values), values.length]
        assert.deepStrictEqual(
          yield* ds.treeAggregate(
            [0, 0] as [number, number],
            (acc, x) => [acc[0] + x, acc[1] + 1] as [number, number],
            (a, b) => [a[0] + b[0], a[1] + b[1]] as [number, number],
            depth
          ),
          expected
        )
        assert.strictEqual(yield* ds.treeReduce((a, b) => Math.max(a, b), depth), Math.max(...values))
      }
      assert.instanceOf(yield* Effect.flip(kc.parallelize<number>([], 3).treeReduce((a, b) => a + b)), EmptyDataset)
      assert.instanceOf(yield* Effect.flip(kc.range(0, 4).treeReduce((a, b) => a + b, 0)), InvalidArgument)
    }))

  it.effect("takeOrdered and top by a key function order records that are not keys themselves", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      for (
        const [scores, n] of fc.sample(
          fc.tuple(fc.array(fc.integer({ min: -50, max: 50 }), { maxLength: 40 }), fc.integer({ min: 0, max: 8 })),
          { numRuns: 10, seed: 11 }
        )
      ) {
        const records = scores.map((score, i) => ({ name: `p${i}`, score }))
        const ds = kc.parallelize(records, 3)
        const byScore = [...records].sort((a, b) => a.score - b.score)
        const lowest = yield* ds.takeOrdered(n, (record) => record.score)
        const highest = yield* ds.top(n, (record) => record.score)
        // Ties may come in any order: the scores are what must match.
        assert.deepStrictEqual(lowest.map((r) => r.score), byScore.slice(0, n).map((r) => r.score))
        assert.deepStrictEqual(highest.map((r) => r.score), [...byScore].reverse().slice(0, n).map((r) => r.score))
        assert.isTrue(lowest.every((r) => records.some((x) => x.name === r.name && x.score === r.score)))
      }
      assert.deepStrictEqual(yield* kc.parallelize([3, 1, 2], 2).takeOrdered(2), [1, 2])
    }))

  it.effect("kc.union of several datasets; setName names a dataset in its lineage", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      const all = kc.union([kc.range(0, 3, 1, 1), kc.parallelize([10, 11], 2), kc.range(20, 22, 1, 1)])
      assert.deepStrictEqual(yield* all.collect(), [0, 1, 2, 10, 11, 20, 21])
      assert.strictEqual(yield* all.getNumPartitions(), 4)
      const named = kc.range(0, 3).setName("numbers")
      assert.strictEqual(named.name, "numbers")
      assert.match(yield* named.toDebugString(), /^\(\d+\) numbers RangeDataset\[\d+\] at range at /)
    }))

  it.effect("textFile reads globs, comma-separated paths and gzip'd files; wholeTextFiles reads files whole", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "kindling-inputs-"))
      const write = (name: string, lines: ReadonlyArray<string>) => {
        Fs.mkdirSync(Path.dirname(Path.join(dir, name)), { recursive: true })
        Fs.writeFileSync(Path.join(dir, name), lines.join("\n") + "\n")
      }
      write("jan/a.log", ["j1", "j2"])
      write("feb/b.log", ["f1"])
      write("feb/c.txt", ["not a log"])
      write("mar/d.log", ["m1"])
      Fs.writeFileSync(
        Path.join(dir, "big.log.gz"),
        Zlib.gzipSync(Array.from({ length: 5000 }, (_, i) => `z${i}`).join("\n") + "\n")
      )
      const read = (path: string) => Effect.map(kc.textFile(path, 3).collect(), (lines) => [...lines].sort())
      assert.deepStrictEqual(yield* read(Path.join(dir, "{jan,feb}/*.log")), ["f1", "j1", "j2"])
      assert.deepStrictEqual(yield* read(`${Path.join(dir, "jan")},${Path.join(dir, "mar/d.log")}`), ["j1", "j2", "m1"])
      assert.deepStrictEqual(yield* read(Path.join(dir, "[jm]a*")), ["j1", "j2", "m1"])
      const gz = yield* kc.textFile(Path.join(dir, "big.log.gz"), 4).collect()
      assert.deepStrictEqual(gz, Array.from({ length: 5000 }, (_, i) => `z${i}`))
      assert.strictEqual(yield* kc.textFile(Path.join(dir, "big.log.gz"), 4).getNumPartitions(), 1)
      const missing = yield* Effect.flip(kc.textFile(Path.join(dir, "apr/*.log")).count())
      assert.include(missing.message, "matches no file")
      const whole = yield* kc.wholeTextFiles(Path.join(dir, "*/*.log"), 2).collect()
      assert.deepStrictEqual(whole, [
        [`file:${Path.join(dir, "feb/b.log")}`, "f1\n"],
        [`file:${Path.join(dir, "jan/a.log")}`, "j1\nj2\n"],
        [`file:${Path.join(dir, "mar/d.log")}`, "m1\n"]
      ])
      Fs.rmSync(dir, { recursive: true })
    }))

  it.effect("checkpoint: after the next action a dataset is read from its saved partitions, its lineage no more", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      assert.throws(() => kc.range(0, 3).checkpoint(), /the checkpoint directory has not been set/)
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "kindling-checkpoints-"))
      yield* kc.setCheckpointDir(dir)
      const calls = kc.longAccumulator("calls")
      const doubled = kc.range(0, 100, 1, 4).map((x, env) => {
        env.calls.add(1)
        return { x, twice: x * 2, at: new Map([[x, [x]]]) }
      }, { calls })
      doubled.checkpoint()
      assert.isFalse(doubled.isCheckpointed)
      assert.strictEqual(yield* doubled.map((record) => record.twice).sum(), 9900)
      assert.isTrue(doubled.isCheckpointed)
      // Computed for the action, and once more for the checkpoint (it was not persisted).
      assert.strictEqual(calls.value, 200)
      const parts = Fs.readdirSync(doubled.checkpointFile!).filter((name) => name.startsWith("part-"))
      assert.deepStrictEqual(parts.sort(), ["part-00000", "part-00001", "part-00002", "part-00003"])
      const again = yield* doubled.collect()
      assert.deepStrictEqual(
        again,
        Array.from({ length: 100 }, (_, x) => ({ x, twice: x * 2, at: new Map([[x, [x]]]) }))
      )
      assert.strictEqual(yield* doubled.map((record) => record.x).filter((x) => x % 2 === 0).count(), 50)
      assert.strictEqual(calls.value, 200, "read from the checkpoint, never computed again")
      Fs.rmSync(dir, { recursive: true })
    }))

  it.effect("job groups: a description and group ride on the fiber's jobs; cancelJobGroup fails those running", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      const events = yield* kc.subscribe
      const starts = yield* Queue.unbounded<Extract<AppEvents.AppEvent, { _tag: "JobStart" }>>()
      yield* Effect.forkScoped(
        Stream.runForEach(events, (event) => event._tag === "JobStart" ? Queue.offer(starts, event) : Effect.void)
      )
      const slow = Effect.gen(function*() {
        yield* kc.setJobGroup("reports", "the nightly reports")
        return yield* kc.range(0, 4, 1, 2).map((x) => {
          const pause = new Int32Array(new SharedArrayBuffer(4))
          Atomics.wait(pause, 0, 0, 3000)
          return x
        }).count()
      })
      const fiber = yield* Effect.fork(slow)
      const first = yield* Queue.take(starts)
      assert.strictEqual(first.jobGroup, "reports")
      assert.strictEqual(first.description, "the nightly reports")
      yield* kc.cancelJobGroup("reports")
      const failure = yield* Effect.flip(Fiber.join(fiber))
      assert.instanceOf(failure, JobFailed)
      assert.match(failure.message, /^Job \d+ cancelled part of cancelled job group reports/)
      // This fiber's jobs are in no group; its description is its own.
      yield* kc.setJobDescription("counting")
      assert.strictEqual(yield* kc.range(0, 4).count(), 4)
      const second = yield* Queue.take(starts)
      assert.strictEqual(second.description, "counting")
      assert.isUndefined(second.jobGroup)
    }).pipe(Effect.scoped))
})
