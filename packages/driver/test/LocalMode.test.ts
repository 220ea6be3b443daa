// Apps in local[2]: the driver and an executor with two task threads in this process, each task run on a real
// worker thread.
import { assert, describe, it, layer } from "@effect/vitest"
import {
  Dataset,
  EmptyDataset,
  JobFailed,
  Kindling,
  OutputDirectoryExists,
  OutputNotWritable,
  UserFunctions
} from "@kindling/app"
import { LocalFiles } from "@kindling/data"
import { LocalMode, SchedulerPool } from "@kindling/driver"
import { Deadlines } from "@kindling/protocol/testing"
import { Chunk, Effect, Exit, FastCheck as fc, Fiber, Option, Stream } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Chains from "./fixtures/chains.js"
import { driverConfig } from "./fixtures/driverConfig.js"

const local = (maxFailures: number, maxDirectResultSize?: number) =>
  LocalMode.layer({
    appName: "test",
    threads: 2,
    driver: driverConfig(maxFailures),
    heartbeatIntervalMillis: 10_000,
    validateState: true,
    ...(maxDirectResultSize === undefined ? {} : { maxDirectResultSize })
  })

layer(local(1), { timeout: 60_000 })("local[2]", (it) => {
  it.effect("for random arrays and chains of narrow transformations, collect equals the chain on the array", () =>
    Effect.gen(function*() {
      const failures = yield* Chains.check(yield* Kindling, 25)
      assert.deepStrictEqual(failures, [])
    }))

  it.effect("the actions: count, reduce, fold, aggregate, take, first, foreach", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      const ds = kc.range(0, 1000, 1, 7)
      assert.strictEqual(yield* ds.count(), 1000)
      assert.strictEqual(yield* ds.reduce((a, b) => a + b), 499_500)
      assert.strictEqual(yield* ds.fold(0, (a, b) => a + b), 499_500)
      assert.deepStrictEqual(
        yield* ds.aggregate([0, 0], ([s, n], x) => [s + x, n + 1], ([s1, n1], [s2, n2]) => [s1 + s2, n1 + n2]),
        [499_500, 1000]
      )
      assert.deepStrictEqual(yield* ds.filter((x) => x > 990).take(3), [991, 992, 993])
      assert.deepStrictEqual(yield* kc.range(10, 0, -2, 3).collect(), [10, 8, 6, 4, 2])
      assert.strictEqual(yield* ds.first(), 0)
      assert.instanceOf(yield* Effect.flip(kc.parallelize<number>([], 3).reduce((a, b) => a + b)), EmptyDataset)
      assert.instanceOf(yield* Effect.flip(kc.parallelize([], 2).first()), EmptyDataset)
      yield* ds.foreach((x) => {
        if (x < 0) throw new Error("never")
      })
    }))

  it.effect("the numeric actions, isEmpty, getNumPartitions and collectAsMap agree with the same on an array", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      const cases = fc.sample(
        fc.tuple(fc.array(fc.integer({ min: -1000, max: 1000 }), { maxLength: 60 }), fc.integer({ min: 1, max: 5 })),
        { numRuns: 12, seed: 24 }
      )
      for (
        const [numbers, partitions] of [
          ...cases,
          [[], 3] as [Array<number>, number],
          [[7], 4] as [Array<number>, number]
        ]
      ) {
        const ds = kc.parallelize(numbers, partitions)
        const n = numbers.length
        const sum = numbers.reduce((a, b) => a + b, 0)
        const mean = n === 0 ? 0 : sum / n
        const variance = n === 0 ? Number.NaN : numbers.reduce((a, x) => a + (x - mean) ** 2, 0) / n
        const sampleVariance = n <= 1 ? Number.NaN : (variance * n) / (n - 1)
        assert.strictEqual(yield* ds.sum(), sum)
        assert.strictEqual(yield* ds.isEmpty(), n === 0)
        assert.strictEqual(yield* ds.getNumPartitions(), partitions)
        const stats = yield* ds.stats()
        assert.strictEqual(stats.count, n)
        assert.closeTo(stats.mean, mean, 1e-9)
        assert.closeTo(yield* ds.mean(), mean, 1e-9)
        assert.closeTo(stats.sum, sum, 1e-6)
        if (n === 0) {
          assert.isNaN(stats.variance)
          assert.deepStrictEqual([stats.max, stats.min], [-Infinity, Infinity])
          assert.instanceOf(yield* Effect.flip(ds.max()), EmptyDataset)
          assert.instanceOf(yield* Effect.flip(ds.min()), EmptyDataset)
        } else {
          assert.closeTo(stats.variance, variance, 1e-6)
          assert.closeTo(stats.stdev, Math.sqrt(variance), 1e-6)
          assert.deepStrictEqual([stats.max, stats.min], [Math.max(...numbers), Math.min(...numbers)])
          assert.strictEqual(yield* ds.max(), Math.max(...numbers))
          assert.strictEqual(yield* ds.min(), Math.min(...numbers))
        }
        if (n <= 1) assert.isNaN(stats.sampleVariance)
        else assert.closeTo(stats.sampleVariance, sampleVariance, 1e-6)
        // Of a key's several values, the last: keys are the numbers' residues, values their positions.
        const pairs = numbers.map((x, i): [number, number] => [((x % 7) + 7) % 7, i])
        assert.deepStrictEqual(yield* kc.parallelize(pairs, partitions).collectAsMap(), new Map(pairs))
      }
      // NaN is the greatest, as in Spark's ordering of doubles.
      assert.isNaN(yield* kc.parallelize([1, Number.NaN, 3], 2).max())
      assert.strictEqual(yield* kc.parallelize([1, Number.NaN, 3], 2).min(), 1)
    }))

  it.effect("sample: the same seed gives the same sample, and about the fraction asked for", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      const ds = kc.range(0, 10_000, 1, 4)
      const a = yield* ds.sample(false, 0.1, 99).collect()
      assert.deepStrictEqual(yield* ds.sample(false, 0.1, 99).collect(), a)
      assert.isTrue(a.length > 800 && a.length < 1200, `sampled ${a.length}`)
      const b = yield* ds.sample(true, 2, 5).count()
      assert.isTrue(b > 19_000 && b < 21_000, `sampled ${b} with replacement`)
    }))

  it.effect("saveAsTextFile writes one part per partition and _SUCCESS; textFile reads the lines back", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      const dir = Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "kindling-save-")), "out")
      const lines = Array.from({ length: 500 }, (_, i) => (i % 7 === 0 ? { i } : `line ${i}`))
      yield* kc.parallelize(lines, 3).saveAsTextFile(dir)
      assert.deepStrictEqual(Fs.readdirSync(dir).sort(), ["_SUCCESS", "part-00000", "part-00001", "part-00002"])
      const back = yield* kc.textFile(dir, 5).collect()
      assert.deepStrictEqual(back, lines.map((l) => (typeof l === "string" ? l : JSON.stringify(l))))
      assert.instanceOf(yield* Effect.flip(kc.parallelize([1]).saveAsTextFile(dir)), OutputDirectoryExists)
      Fs.rmSync(Path.dirname(dir), { recursive: true })
    }))

  it.effect("tasks count the bytes and lines they read from files and wrote to them, and their CPU time", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "kindling-io-"))
      const input = Path.join(dir, "in.txt")
      const lines = Array.from({ length: 3000 }, (_, i) => `line ${i} ${"x".repeat(i % 50)}`)
      Fs.writeFileSync(input, lines.join("\n") + "\n")
      const events = yield* kc.subscribe
      yield* kc.textFile(input, 4).filter((line) => line.length % 2 === 0).saveAsTextFile(Path.join(dir, "out"))
      const ends = Chunk.toArray(
        yield* events.pipe(
          Stream.filterMap((event) => event._tag === "TaskEnd" ? Option.some(event.metrics) : Option.none()),
          Stream.take(4),
          Stream.runCollect
        )
      )
      const total = (metric: string) => ends.reduce((sum, metrics) => sum + (metrics[metric] ?? 0), 0)
      const kept = lines.filter((line) => line.length % 2 === 0)
      const parts = Fs.readdirSync(Path.join(dir, "out")).filter((name) => name.startsWith("part-"))
      const written = parts.reduce((sum, name) => sum + Fs.statSync(Path.join(dir, "out", name)).size, 0)
      // Every line is read once; a split also reads the end of the line it starts inside of, which its neighbour
      // gives, so the bytes read pass the file's size by at most a line per split.
      assert.strictEqual(total("inputRecords"), lines.length)
      const size = Fs.statSync(input).size
      assert.isAtLeast(total("inputBytes"), size)
      assert.isAtMost(total("inputBytes"), size + 4 * 70)
      assert.strictEqual(total("outputRecords"), kept.length)
      assert.strictEqual(total("outputBytes"), written)
      Fs.rmSync(dir, { recursive: true })
    }).pipe(Effect.scoped))

  it.effect("on Linux, a task's CPU time is its thread's: most of a busy task's, and never more than the process's", () =>
    Effect.gen(function*() {
      if (process.platform !== "linux") return
      const kc = yield* Kindling
      const events = yield* kc.subscribe
      const before = process.cpuUsage()
      // A fixed amount of work, about 100 ms of a core's time, in each of two tasks.
      yield* kc.range(0, 2, 1, 2).map((x) => {
        let acc = x
        for (let i = 0; i < 60_000_000; i++) acc = (acc * 31 + i) % 1_000_003
        return acc
      }).count()
      const used = process.cpuUsage(before)
      const cpu = Chunk.toArray(
        yield* events.pipe(
          Stream.filterMap((event) =>
            event._tag === "TaskEnd" ? Option.some(event.metrics["cpuTime"] ?? 0) : Option.none()
          ),
          Stream.take(2),
          Stream.runCollect
        )
      )
      const busy = cpu.reduce((a, b) => a + b, 0)
      // The kernel counts a thread's time at its ticks (a few ms): the tasks' times are that close to true.
      assert.isTrue(cpu.every((nanos) => nanos > 20e6), `task CPU times ${cpu}`)
      assert.isAtMost(busy / 1e3, used.user + used.system + 10_000)
    }).pipe(Effect.scoped))

  it.effect("saveAsTextFile where the driver cannot make the directory fails with OutputNotWritable naming it", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      const parent = Fs.mkdtempSync(Path.join(Os.tmpdir(), "kindling-save-"))
      // Under a regular file: ENOTDIR, even for root (whom a read-only directory would not stop).
      Fs.writeFileSync(Path.join(parent, "file"), "")
      const dir = Path.join(parent, "file", "out")
      const error = yield* Effect.flip(kc.parallelize(["a"]).saveAsTextFile(dir))
      Fs.rmSync(parent, { recursive: true })
      assert.instanceOf(error, OutputNotWritable)
      assert.strictEqual(error._tag, "OutputNotWritable")
      assert.strictEqual(error.path, dir)
      assert.match(error.message, /^Output directory (.*) cannot be written: ENOTDIR: not a directory, \w+ '(.*)'$/)
      assert.include(error.message, `'${dir}'`)
    }))

  it.effect("a part an executor cannot write fails the job, which names the file and the system's reason", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      const parent = Fs.mkdtempSync(Path.join(Os.tmpdir(), "kindling-save-"))
      const dir = Path.join(parent, "out")
      // The task holds its part open while its record takes a second; the directory vanishes meanwhile.
      const save = yield* Effect.fork(
        kc.parallelize(["a"], 1).map((line) => {
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1000)
          return line
        }).saveAsTextFile(dir)
      )
      const temporary = Path.join(dir, "_temporary")
      while (!(Fs.existsSync(temporary) && Fs.readdirSync(temporary).some((name) => name.startsWith("part-")))) {
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
      }
      Fs.rmSync(dir, { recursive: true })
      const error = yield* Effect.flip(Fiber.join(save))
      Fs.rmSync(parent, { recursive: true })
      assert.instanceOf(error, JobFailed)
      assert.strictEqual(error._tag, "JobFailed")
      assert.include(error.message, `DiskError: ENOENT: no such file or directory, rename '${temporary}/part-00000.`)
    }))

  it.effect("an action's job runs in the scheduler pool its fiber is in", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      const events = yield* kc.subscribe
      yield* kc.range(0, 4, 1, 2).count().pipe(SchedulerPool.within("reports"))
      yield* kc.range(0, 4, 1, 2).count()
      const pools = yield* events.pipe(
        Stream.filterMap((event) => event._tag === "JobStart" ? Option.some(event.pool) : Option.none()),
        Stream.take(2),
        Stream.runCollect
      )
      assert.deepStrictEqual(Chunk.toArray(pools), ["reports", "default"])
    }).pipe(Effect.scoped))

  it.effect("a task that throws fails the job with Spark's message; the next job runs", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      const error = yield* Effect.flip(
        kc.range(0, 10, 1, 2).map((x) => {
          if (x === 7) throw new RangeError(`bad record ${x}`)
          return x
        }).collect()
      )
      assert.instanceOf(error, JobFailed)
      assert.match(
        error.message,
        /^Job aborted due to stage failure: Task 1 in stage \d+\.0 failed 1 times, most recent failure: Lost task 1\.0 in stage \d+\.0 \(TID \d+\) \(localhost executor driver\): RangeError: bad record 7/
      )
      assert.strictEqual(yield* kc.range(0, 10).count(), 10)
    }))

  it.effect("interrupting an action kills its running tasks, even ones that never return", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      const forever = kc.range(0, 2, 1, 2).map((x) => {
        for (;;) {
          // spins: only ending its thread stops it
        }
        return x
      })
      const action = yield* Effect.fork(forever.count())
      // In real time (the test clock does not move): long enough for both tasks to be spinning on their threads.
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 300)))
      const outcome = yield* Fiber.interrupt(action)
      assert.isTrue(Exit.isInterrupted(outcome))
      // Both threads were taken by the spinning tasks: that new jobs run shows they were killed and replaced.
      assert.strictEqual(yield* kc.range(0, 100, 1, 4).count(), 100)
    }))

  // Found by the simulated cluster (seed 286): an action cancelled while zipWithIndex counted its partitions left
  // the cancellation cached as the dataset's lineage, and every later job of the dataset was interrupted too.
  it.effect("an action cancelled while zipWithIndex counts leaves the dataset whole for the next", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      const slow = kc.range(0, 40, 1, 4).map((x) => {
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50)
        return x
      })
      const indexed = slow.zipWithIndex()
      const first = yield* Effect.fork(indexed.count())
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))
      assert.isTrue(Exit.isInterrupted(yield* Fiber.interrupt(first)))
      const pairs = yield* indexed.collect()
      assert.deepStrictEqual(pairs, Array.from({ length: 40 }, (_, i) => [i, i]))
    }))
})

layer(local(3), { timeout: 60_000 })("local[2,3]", (it) => {
  it.effect("a task that always throws fails after maxFailures attempts", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      const error = yield* Effect.flip(
        kc.parallelize([1], 1).map(() => {
          throw new Error("always")
        }).collect()
      )
      assert.include(error.message, "failed 3 times, most recent failure: Lost task 0.2 in stage")
    }))

  // The driver hands its executor each launch as it is, the task's bytes included, and keeps them for the task's
  // next attempts: an executor that took them (a buffer transferred to its task thread) would leave a retry nothing.
  it.effect("a task retried runs from the same bytes as its first attempt", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      const values = yield* kc.parallelize([1, 2, 3, 4], 2).map((x, env) => {
        if (x === 3 && env.task.attemptNumber === 0) throw new Error("first attempt")
        return x * 10
      }, { task: kc.taskContext }).collect()
      assert.deepStrictEqual(values, [10, 20, 30, 40])
    }))
})

// Results over 1 KiB are left on the executor's data plane and fetched by the driver.
layer(local(1, 1024), { timeout: 60_000 })("local[2] with large results", (it) => {
  it.effect("large and small results of one job arrive whole, in partition order", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      // Partitions 0 and 3 are small (in the status update), 1 and 2 large (fetched).
      const sizes = [10, 5_000, 20_000, 30]
      const parts = yield* kc.parallelize([0, 1, 2, 3], 4)
        .flatMap((p, env) => Array.from({ length: env.sizes[p]! }, (_, i) => `${p}:${i}`), { sizes })
        .glom()
        .collect()
      assert.deepStrictEqual(parts.map((part) => part.length), sizes)
      assert.deepStrictEqual(parts[2]![19_999], "2:19999")
      // And again: each block was read once and forgotten, so nothing stale is served.
      const again = yield* kc.range(0, 50_000, 1, 2).collect()
      assert.strictEqual(again.length, 50_000)
      assert.strictEqual(again[49_999], 49_999)
    }))
})

describe("functions", () => {
  it("a function that captures a variable is rejected when declared, naming it; passed in the environment it works", () => {
    const ds = Dataset.of<number>(
      {
        runJob: () => Effect.succeed([]),
        reference: referenceHere,
        newDatasetId: () => 0,
        newShuffleId: () => 0,
        defaultPartitions: () => undefined,
        unpersist: () => Effect.void,
        files: LocalFiles.files,
        checkpoints: { dir: undefined },
        unrun: { made: () => () => undefined, neverRun: () => [] }
      },
      Effect.succeed([]),
      "ParallelCollectionDataset",
      "parallelize"
    )
    const k = 3
    assert.throws(() => ds.map((x) => x * k), /The function given to map refers to `k`/)
    assert.doesNotThrow(() => ds.map((x, env) => x * env.k, { k }))
    // Globals of the platform are not captures.
    assert.doesNotThrow(() => ds.map((x) => Math.max(x, JSON.stringify(x).length)))
  })
})

const referenceHere = (fn: UserFunctions.AnyFunction, env: unknown, transformation: string) =>
  UserFunctions.reference(fn, env, transformation, {})

describe("local[2] heartbeats", () => {
  it.scopedLive(
    "report the executor's memory and how many records each running task has read",
    () =>
      Effect.gen(function*() {
        const kc = yield* Kindling
        const events = yield* kc.subscribe
        // One task that reads its records slowly, so that heartbeats see it at work.
        const job = yield* Effect.fork(
          kc.range(0, 200_000, 1, 1).map((x) => {
            const until = performance.now() + 0.005
            while (performance.now() < until) {
              // a little work per record
            }
            return x
          }).count()
        )
        const update = yield* events.pipe(
          Stream.filterMap((event) =>
            event._tag === "ExecutorMetricsUpdate" && event.tasks.some((task) => (task.metrics.recordsRead ?? 0) > 0)
              ? Option.some(event)
              : Option.none()
          ),
          Stream.runHead,
          Effect.map(Option.getOrThrow)
        )
        assert.isAbove(update.executorMetrics.processRss!, 0)
        assert.isAbove(update.executorMetrics.heapUsed!, 0)
        const [task] = update.tasks
        assert.isAbove(task!.metrics.executorRunTime!, 0)
        assert.isBelow(task!.metrics.recordsRead!, 200_000)
        assert.strictEqual(yield* Fiber.join(job), 200_000)
      }).pipe(
        Effect.provide(LocalMode.layer({
          appName: "test",
          threads: 2,
          driver: driverConfig(1),
          heartbeatIntervalMillis: 100,
          validateState: true
        }))
      ),
    Deadlines.scaled(60_000)
  )
})
