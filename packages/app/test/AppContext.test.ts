/**
 * The app API against the contract it has with the driver's runtime, without one: an app context built over a
 * driver that only records the jobs it is handed shows what actions ask of the runtime (`JobGraph`) and what
 * they make of its answers.
 */
import { assert, describe, it } from "@effect/vitest"
import { AppContext } from "@kindling/app"
import { Effect } from "effect"
import * as Fs from "node:fs"
import { fileURLToPath } from "node:url"
import { recordingDriver } from "./fixtures/recordingDriver.js"

// The line of this file that holds `text`: where a call site must point.
const lineOf = (text: string) =>
  Fs.readFileSync(fileURLToPath(import.meta.url), "utf8").split("\n").findIndex((line) => line.includes(text)) + 1

const context = (driver: AppContext.AppDriver) =>
  AppContext.make({ appName: "contract", master: "test", defaultParallelism: () => 3, driver })

describe("the app API's contract with the driver's runtime", () => {
  it.effect("an action hands the driver one result task per partition, and folds the tasks' results", () =>
    Effect.gen(function*() {
      const { driver, jobs } = recordingDriver()
      const count = yield* context(driver).parallelize([1, 2, 3, 4, 5, 6, 7], 3).count()
      assert.strictEqual(count, 1 + 2 + 3)
      assert.strictEqual(jobs.length, 1)
      const [job] = jobs
      assert.strictEqual(job!.tasks.length, 3)
      assert.deepStrictEqual(job!.shuffles, [])
      assert.deepStrictEqual(job!.parents, [])
      // Named as Spark names it: the action, where the app's code called it.
      const line = lineOf("parallelize([1, 2, 3, 4, 5, 6, 7], 3).count()")
      assert.strictEqual(job!.name, `count at AppContext.test.ts:${line}`)
      assert.include(job!.details!, `AppContext.test.ts:${line}:`)
    }))

  it.effect("a shuffle is a shuffle of the job's graph: its map tasks, its reduce side as the job's parent", () =>
    Effect.gen(function*() {
      const { driver, jobs } = recordingDriver()
      yield* context(driver)
        .parallelize([1, 2, 3, 4], 2)
        .map((n) => [n % 2, n] as const)
        .reduceByKey((a, b) => a + b, undefined, 4)
        .count()
      const [job] = jobs
      assert.strictEqual(job!.tasks.length, 4)
      assert.strictEqual(job!.shuffles.length, 1)
      const [shuffle] = job!.shuffles
      assert.strictEqual(shuffle!.mapTasks.length, 2)
      assert.strictEqual(shuffle!.numReduces, 4)
      assert.deepStrictEqual(shuffle!.parents, [])
      assert.deepStrictEqual(job!.parents, [shuffle!.shuffleId])
      // A map stage is named after the dataset it shuffles: the last its map tasks compute.
      assert.strictEqual(shuffle!.name, `map at AppContext.test.ts:${lineOf(".map((n) => [n % 2, n] as const)")}`)
    }))

  it.effect("actions made and never run are told by where they were made; those that ran, or ran there, are not", () =>
    Effect.gen(function*() {
      const kc = context(recordingDriver().driver)
      const numbers = kc.parallelize([1, 2, 3, 4], 2)
      numbers.saveAsTextFile("/nowhere")
      const counted = numbers.count()
      const summed = numbers.sum()
      yield* counted
      // Made on every turn of a loop, run on some: what the loop is for.
      for (const n of [1, 2]) {
        const count = numbers.count()
        if (n === 2) yield* count
      }
      // An action another makes (`mean` makes `stats`) is named after the app's call, as the outer one is.
      numbers.mean()
      yield* summed
      assert.deepStrictEqual(yield* kc.unrunActions, [
        `saveAsTextFile at AppContext.test.ts:${lineOf(`numbers.saveAsTextFile("/nowhere")`)}`,
        `mean at AppContext.test.ts:${lineOf("numbers.mean()")}`
      ])
    }))
})

describe("the partitions of what is given no count (Spark's defaultPartitioner and spark.default.parallelism)", () => {
  const withParallelism = (configured: number | undefined) =>
    AppContext.make({
      appName: "parallelism",
      master: "test",
      defaultParallelism: () => configured ?? 2,
      configuredParallelism: configured,
      driver: recordingDriver().driver
    })
  const pairs = (kc: ReturnType<typeof withParallelism>, partitions: number) =>
    kc.parallelize(Array.from({ length: 50 }, (_, i): [number, number] => [i % 7, i]), partitions)

  it.effect("unset: a shuffle takes the most partitions of what it reads, or a hash partitioning within 10× of it", () =>
    Effect.gen(function*() {
      const kc = withParallelism(undefined)
      assert.strictEqual(yield* kc.parallelize([1, 2, 3]).getNumPartitions(), 2)
      assert.strictEqual(yield* pairs(kc, 4).reduceByKey((a, b) => a + b).getNumPartitions(), 4)
      assert.strictEqual(yield* pairs(kc, 4).distinct().getNumPartitions(), 4)
      assert.strictEqual(yield* pairs(kc, 4).join(pairs(kc, 6)).getNumPartitions(), 6)
      // Spark's isEligiblePartitioner: 40 partitions are within an order of magnitude of 5, not of 2.
      assert.strictEqual(yield* pairs(kc, 4).partitionBy(5).join(pairs(kc, 40)).getNumPartitions(), 5)
      assert.strictEqual(yield* pairs(kc, 4).partitionBy(2).join(pairs(kc, 40)).getNumPartitions(), 40)
      assert.strictEqual(yield* pairs(kc, 4).union(pairs(kc, 6)).getNumPartitions(), 10)
    }))

  it.effect("set: sources and shuffles take it, but for a hash partitioning kept as Spark keeps it", () =>
    Effect.gen(function*() {
      const kc = withParallelism(3)
      assert.strictEqual(yield* kc.parallelize([1, 2, 3]).getNumPartitions(), 3)
      assert.strictEqual(yield* kc.range(0, 10).getNumPartitions(), 3)
      assert.strictEqual(yield* pairs(kc, 4).reduceByKey((a, b) => a + b).getNumPartitions(), 3)
      assert.strictEqual(yield* pairs(kc, 40).groupByKey().getNumPartitions(), 3)
      assert.strictEqual(yield* pairs(kc, 4).distinct().getNumPartitions(), 3)
      assert.strictEqual(yield* pairs(kc, 4).join(pairs(kc, 6)).getNumPartitions(), 3)
      assert.strictEqual(yield* pairs(kc, 4).subtractByKey(pairs(kc, 6)).getNumPartitions(), 3)
      // A dataset hash-partitioned already keeps its partitioning, as it is no smaller than the default count or
      // within an order of magnitude of the largest input.
      assert.strictEqual(yield* pairs(kc, 4).partitionBy(5).reduceByKey((a, b) => a + b).getNumPartitions(), 5)
      assert.strictEqual(yield* pairs(kc, 4).partitionBy(5).join(pairs(kc, 40)).getNumPartitions(), 5)
      assert.strictEqual(yield* pairs(kc, 4).partitionBy(2).join(pairs(kc, 4)).getNumPartitions(), 2)
      assert.strictEqual(yield* pairs(kc, 4).partitionBy(2).join(pairs(kc, 40)).getNumPartitions(), 3)
      // A count given wins; a union adds its inputs' partitions, as in Spark.
      assert.strictEqual(yield* pairs(kc, 4).reduceByKey((a, b) => a + b, undefined, 7).getNumPartitions(), 7)
      assert.strictEqual(yield* pairs(kc, 4).union(pairs(kc, 6)).getNumPartitions(), 10)
    }))
})
