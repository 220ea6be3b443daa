import { assert, layer } from "@effect/vitest"
import { type AppEvents, JobFailed, Kindling } from "@kindling/app"
import { LocalMode } from "@kindling/driver"
import { Effect, Fiber, Stream, TestServices } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { driverConfig } from "./fixtures/driverConfig.js"
import * as Pipelines from "./fixtures/pipelines.js"

const spillThreshold = 1024 * 1024

const local = (maxFailures: number) =>
  LocalMode.layer({
    appName: "shuffle-test",
    threads: 2,
    driver: driverConfig(maxFailures),
    heartbeatIntervalMillis: 10_000,
    spillThreshold,
    validateState: true
  })

// The events of `effect`'s run, once it is done.
const eventsOf = <A, E>(effect: Effect.Effect<A, E, Kindling>) =>
  Effect.scoped(Effect.gen(function*() {
    const kc = yield* Kindling
    const events: Array<AppEvents.AppEvent> = []
    const stream = yield* kc.subscribe
    yield* Effect.forkScoped(Stream.runForEach(stream, (event) => Effect.sync(() => events.push(event))))
    const result = yield* effect
    // The last events are on their way (published after the job's end): a moment of real time.
    yield* TestServices.provideLive(Effect.sleep("50 millis"))
    return { result, events }
  }))

// Spill files left in the local dirs of this process's executors.
const spillFiles = () =>
  Fs.readdirSync(Os.tmpdir()).filter((name) => name.startsWith("kindling-executor-")).flatMap((dir) => {
    try {
      return Fs.readdirSync(Path.join(Os.tmpdir(), dir)).filter((name) => name.startsWith("spill"))
    } catch {
      return []
    }
  })

layer(local(4), { timeout: 120_000 })("local[2] shuffles", (it) => {
  it.effect("for random pairs and random pipelines of narrow and shuffle operations, the result equals the model's", () =>
    Effect.gen(function*() {
      const failures = yield* Pipelines.check(yield* Kindling, 30)
      assert.deepStrictEqual(failures, [])
    }))

  it.effect("keyed operations and actions: counts, lookups, orderings, outer joins, combineByKey, cartesian", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      const words = kc.parallelize(["b", "a", "c", "a", "b", "a", "d"], 3)
      const pairs = words.map((w): [string, number] => [w, 1])
      assert.deepStrictEqual([...(yield* pairs.countByKey())].sort(), [["a", 3], ["b", 2], ["c", 1], ["d", 1]])
      assert.deepStrictEqual([...(yield* words.countByValue())].sort(), [["a", 3], ["b", 2], ["c", 1], ["d", 1]])
      const counts = pairs.reduceByKey((a, b) => a + b, undefined, 4)
      assert.deepStrictEqual(yield* counts.lookup("a"), [3])
      assert.deepStrictEqual(yield* counts.lookup("z"), [])
      assert.deepStrictEqual(yield* pairs.lookup("b"), [1, 1])
      assert.deepStrictEqual(yield* counts.sortByKey(false).keys().collect(), ["d", "c", "b", "a"])
      assert.deepStrictEqual(yield* words.top(2), ["d", "c"])
      assert.deepStrictEqual(yield* words.takeOrdered(3), ["a", "a", "a"])
      assert.deepStrictEqual((yield* words.distinct().collect()).sort(), ["a", "b", "c", "d"])
      assert.deepStrictEqual((yield* words.intersection(kc.parallelize(["a", "d", "z"])).collect()).sort(), ["a", "d"])
      const left = kc.parallelize<[string, number]>([["a", 1], ["b", 2]], 2)
      const right = kc.parallelize<[string, string]>([["b", "x"], ["c", "y"]], 1)
      assert.deepStrictEqual(
        (yield* left.fullOuterJoin(right).collect()).sort(),
        [["a", [1, undefined]], ["b", [2, "x"]], ["c", [undefined, "y"]]]
      )
      assert.deepStrictEqual((yield* left.rightOuterJoin(right).collect()).sort(), [["b", [2, "x"]], [
        "c",
        [undefined, "y"]
      ]])
      const averages = kc.parallelize<[string, number]>([["a", 1], ["a", 3], ["b", 5]], 2).combineByKey(
        (v): [number, number] => [v, 1],
        ([s, n], v): [number, number] => [s + v, n + 1],
        ([s1, n1], [s2, n2]): [number, number] => [s1 + s2, n1 + n2]
      ).mapValues(([s, n]) => s / n)
      assert.deepStrictEqual((yield* averages.collect()).sort(), [["a", 2], ["b", 5]])
      assert.deepStrictEqual(
        (yield* left.flatMapValues((v) => Array.from({ length: v }, (_, i) => i)).collect()).sort(),
        [["a", 0], ["b", 0], ["b", 1]]
      )
      assert.deepStrictEqual(
        (yield* kc.parallelize([1, 2, 3, 4, 5]).groupBy((x) => x % 2).mapValues((xs) => xs.sort()).collect()).sort(),
        [[0, [2, 4]], [1, [1, 3, 5]]]
      )
      assert.deepStrictEqual(yield* kc.parallelize([1, 2], 2).cartesian(kc.parallelize(["x", "y"], 2)).count(), 4)
      // Array keys compare by their elements.
      assert.deepStrictEqual(
        yield* kc.parallelize<[[number, string], number]>([[[1, "a"], 1], [[1, "a"], 2], [[1, "b"], 3]], 3)
          .reduceByKey((a, b) => a + b).sortByKey().collect(),
        [[[1, "a"], 3], [[1, "b"], 3]]
      )
      assert.strictEqual(yield* kc.range(0, 100, 1, 5).repartition(3).numPartitions, 3)
      assert.strictEqual(yield* kc.range(0, 100, 1, 5).coalesce(2).numPartitions, 2)
    }))

  it.effect("an object as a key fails the job with InvalidKey, naming the operation", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      const failure = yield* Effect.flip(
        kc.parallelize([{ id: 1 }, { id: 2 }], 2).map((o): [{ id: number }, number] => [o, 1]).reduceByKey((a, b) =>
          a + b
        ).collect()
      )
      assert.instanceOf(failure, JobFailed)
      assert.include(failure.reason, "InvalidKey: reduceByKey: a key must be a string, number, bigint, boolean")
    }))

  it.effect("toDebugString prints the lineage with stage boundaries, as Spark does", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      const counts = kc.parallelize(["a b", "b"], 2).flatMap((l) => l.split(" ")).map((w): [string, number] => [w, 1])
        .reduceByKey((a, b) => a + b)
      const text = yield* counts.toDebugString()
      // Each dataset named where it was made, as Spark's call sites name RDDs.
      const made = Fs.readFileSync(fileURLToPath(import.meta.url), "utf8").split("\n")
        .findIndex((line) => line.includes(`kc.parallelize(["a b", "b"], 2)`)) + 1
      const at = (operation: string, line: number) => `at ${operation} at Shuffle\\.test\\.ts:${line}`
      assert.match(
        text,
        new RegExp(
          `^\\(2\\) ShuffledDataset\\[\\d+\\] ${at("reduceByKey", made + 1)} \\[\\]\\n` +
            ` \\+-\\(2\\) MapPartitionsDataset\\[\\d+\\] ${at("map", made)} \\[\\]\\n` +
            ` {4}\\| {2}MapPartitionsDataset\\[\\d+\\] ${at("flatMap", made)} \\[\\]\\n` +
            ` {4}\\| {2}ParallelCollectionDataset\\[\\d+\\] ${at("parallelize", made)} \\[\\]$`
        )
      )
    }))

  it.effect("a reduce partition four times the spill threshold completes; its spill files are gone after", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      // One reduce partition of about 6 MB of values, grouped: the map side and the reduce side both spill.
      const groups = kc.range(0, 60_000, 1, 4)
        .map((i): [number, string] => [i % 3, `value ${i} ${"x".repeat(80)}`])
        .groupByKey(1)
        .mapValues((values) => values.length)
      const { events, result } = yield* eventsOf(groups.collect())
      assert.deepStrictEqual(result.sort(), [[0, 20_000], [1, 20_000], [2, 20_000]])
      const spilled = events.reduce((sum, e) => sum + (e._tag === "TaskEnd" ? e.metrics.spilledBytes ?? 0 : 0), 0)
      const read = events.reduce((sum, e) => sum + (e._tag === "TaskEnd" ? e.metrics.shuffleBytesRead ?? 0 : 0), 0)
      assert.isAbove(read, 4 * spillThreshold, "the reduce partition is over four times the threshold")
      assert.isAbove(spilled, 0, "spill files were written")
      assert.deepStrictEqual(spillFiles(), [])
      // A sort of the same size spills too, and keeps its order.
      const sorted = yield* kc.range(0, 60_000, 1, 4).map((
        i
      ): [number, string] => [(i * 7919) % 60_000, "y".repeat(80)])
        .sortByKey(true, 1).keys().collect()
      assert.deepStrictEqual(sorted, Array.from({ length: 60_000 }, (_, i) => i))
      assert.deepStrictEqual(spillFiles(), [])
    }))

  it.effect("a cached dataset is not computed again by a second job; unpersisted, it is", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      const calls = kc.longAccumulator("calls")
      const ds = kc.range(0, 1000, 1, 4).map((x, env) => {
        env.calls.add(1)
        return x * 2
      }, { calls }).cache()
      assert.strictEqual(yield* ds.count(), 1000)
      assert.strictEqual(calls.value, 1000)
      const { events, result } = yield* eventsOf(ds.reduce((a, b) => a + b))
      assert.strictEqual(result, 999_000)
      assert.strictEqual(calls.value, 1000, "the second job read the cached partitions")
      const localities = events.flatMap((e) => (e._tag === "TaskStart" ? [e.locality] : []))
      assert.deepStrictEqual(localities, ["PROCESS_LOCAL", "PROCESS_LOCAL", "PROCESS_LOCAL", "PROCESS_LOCAL"])
      assert.include(yield* ds.toDebugString(), "[MEMORY_ONLY]")
      yield* ds.unpersist()
      assert.strictEqual(yield* ds.count(), 1000)
      assert.strictEqual(calls.value, 2000)
    }))

  it.effect("broadcast values reach every task; accumulators count each successful task once", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      const table = kc.broadcast(Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`w${i}`, i])))
      const seen = kc.longAccumulator("seen")
      const odd = kc.collectionAccumulator<string>("odd")
      const looked = yield* kc.parallelize(Array.from({ length: 100 }, (_, i) => `w${i * 3}`), 20)
        .map((w, env) => {
          env.seen.add(1)
          const value = env.table.value[w]!
          if (value % 2 === 1) env.odd.add(w)
          return value
        }, { table, seen, odd })
        .collect()
      assert.deepStrictEqual(looked, Array.from({ length: 100 }, (_, i) => i * 3))
      assert.strictEqual(seen.value, 100)
      assert.strictEqual(odd.value.length, 50)
      assert.strictEqual(table.value.w10, 10)
    }))

  it.effect("two jobs over independent shuffles run their map stages at the same time", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      const slow = (tag: string) =>
        kc.range(0, 2, 1, 1).map((x, env) => {
          const until = Date.now() + 400
          while (Date.now() < until) { /* a map task that takes a while */ }
          return [`${env.tag}${x}`, 1] as [string, number]
        }, { tag }).reduceByKey((a, b) => a + b).collect()
      const { events } = yield* eventsOf(Effect.all([slow("a"), slow("b")], { concurrency: 2 }))
      const maps = events.filter((e): e is Extract<AppEvents.AppEvent, { _tag: "StageSubmitted" }> =>
        e._tag === "StageSubmitted" && e.name.startsWith("map at Shuffle.test.ts")
      )
      assert.strictEqual(maps.length, 2)
      const ended = (stageId: number) => events.findIndex((e) => e._tag === "StageCompleted" && e.stageId === stageId)
      // Each map stage started before the other ended.
      assert.isBelow(events.indexOf(maps[1]!), ended(maps[0]!.stageId))
      assert.isBelow(events.indexOf(maps[0]!), ended(maps[1]!.stageId))
    }))

  it.effect("a job reusing a finished shuffle skips its map stage", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      const counts = kc.parallelize(["a", "b", "a"], 2).map((w): [string, number] => [w, 1]).reduceByKey((a, b) =>
        a + b
      )
      yield* counts.count()
      const { events } = yield* eventsOf(counts.collect())
      const start = events.find((e) => e._tag === "JobStart")
      const submitted = events.flatMap((e) => (e._tag === "StageSubmitted" ? [e.stageId] : []))
      assert.isDefined(start)
      assert.strictEqual(start!._tag === "JobStart" ? start!.stageIds.length : 0, 2)
      assert.strictEqual(submitted.length, 1, "only the result stage ran")
    }))

  it.effect("interrupting an action cancels the stages no other job needs; a shared map stage runs on", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      const slowCounts = () =>
        kc.range(0, 8, 1, 4).map((x) => {
          const until = Date.now() + 300
          while (Date.now() < until) { /* a slow map task */ }
          return [x % 2, x] as [number, number]
        }).reduceByKey((a, b) => a + b, undefined, 2)
      const counts = slowCounts()
      const { events, result } = yield* eventsOf(Effect.gen(function*() {
        const first = yield* Effect.fork(counts.collect())
        const second = yield* Effect.fork(counts.count())
        yield* TestServices.provideLive(Effect.sleep("150 millis"))
        yield* Fiber.interrupt(first)
        return yield* Fiber.join(second)
      }))
      assert.strictEqual(result, 2)
      const ends = events.flatMap((e) => (e._tag === "JobEnd" ? [[e.jobId, e.succeeded]] : []))
      assert.strictEqual(ends.filter(([, succeeded]) => succeeded === false).length, 1)
      const completed = events.filter((e) => e._tag === "StageCompleted")
      assert.isTrue(
        completed.length > 0 && completed.every((e) => e._tag === "StageCompleted" && e.failureReason === undefined)
      )
      // Alone, the interrupted job's running map stage is cancelled with it.
      const alone = yield* eventsOf(Effect.gen(function*() {
        const fiber = yield* Effect.fork(slowCounts().collect())
        yield* TestServices.provideLive(Effect.sleep("150 millis"))
        yield* Fiber.interrupt(fiber)
      }))
      const cancelled = alone.events.filter((e) => e._tag === "StageCompleted")
      assert.isTrue(cancelled.some((e) => e._tag === "StageCompleted" && e.failureReason !== undefined))
    }))
})
