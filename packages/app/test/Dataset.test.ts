/**
 * Every transformation's plan, as the driver is handed it: each dataset is counted over a driver that only
 * records its jobs (`fixtures/recordingDriver`), and the tasks' plans are read back from their bytes.
 */
import { assert, describe, it } from "@effect/vitest"
import { AppContext, type Dataset, type JobGraph, type KindlingContext } from "@kindling/app"
import type { TaskPlan } from "@kindling/protocol"
import * as Records from "@kindling/protocol/records"
import { Effect } from "effect"
import { recordingDriver } from "./fixtures/recordingDriver.js"

type PlanNode = typeof TaskPlan.PlanNode.Encoded
type Task = { readonly plan: PlanNode; readonly result: typeof TaskPlan.ResultOp.Encoded }

// A plan as one line: each operator with its inputs, a shuffle read by how it reads.
const shape = (node: PlanNode): string => {
  switch (node._tag) {
    case "ShuffleRead":
      return `ShuffleRead:${node.read._tag}`
    case "CoGroup":
      return `CoGroup(${
        node.inputs.map((input) => (input._tag === "Shuffled" ? "Shuffled" : shape(input.plan))).join(", ")
      })`
    case "Cartesian":
      return `Cartesian(${shape(node.left)}, ${shape(node.right)})`
    case "Concat":
    case "ZipPartitions":
      return `${node._tag}(${node.children.map(shape).join(", ")})`
    default:
      return "child" in node ? `${node._tag}(${shape(node.child)})` : node._tag
  }
}
const decode = (task: TaskPlan.EncodedTask) => Records.decode(task.bytes) as Task

// A job as lines: its shuffles' map tasks and what they write, then its result tasks, each plan once with the
// number of tasks that have it.
const jobShape = (job: JobGraph.JobGraph): Array<string> => {
  const counted = (plans: Array<string>) =>
    [...new Set(plans)].map((plan) => `${plans.filter((p) => p === plan).length}× ${plan}`).join(" | ")
  const shuffles = job.shuffles.map((shuffle) => {
    const writes = shuffle.mapTasks.map(decode)
    const write = writes[0]!.result as Extract<Task["result"], { _tag: "ShuffleWrite" }>
    const combine = write.combine === undefined ? "" : "+combine"
    const partitioner = write.partitioner._tag === "Range"
      ? `Range${JSON.stringify(write.partitioner.bounds)}${write.partitioner.ascending ? "↑" : "↓"}`
      : write.partitioner._tag
    return `${counted(writes.map((t) => shape(t.plan)))} → ${partitioner}${combine}×${shuffle.numReduces}`
  })
  return [...shuffles, counted(job.tasks.map((bytes) => shape(decode(bytes).plan)))]
}

const planOf = <A>(make: (kc: KindlingContext) => Dataset<A>): Effect.Effect<Array<string>, unknown> =>
  Effect.gen(function*() {
    // A sort's sampling job is answered with keys 1..6 from each partition, each standing for two records.
    const { driver, jobs } = recordingDriver((job) =>
      job.tasks.map((bytes, i) =>
        decode(bytes).result._tag === "SampleKeys" ? { count: 12, keys: [1, 2, 3, 4, 5, 6] } : i + 1
      )
    )
    const kc = AppContext.make({ appName: "plans", master: "test", defaultParallelism: () => 2, driver })
    yield* make(kc).count()
    return jobShape(jobs.at(-1)!)
  })

// Each transformation as Spark plans it: narrow ones add an operator to each partition's plan (no new stage); the
// ones that need records by key shuffle them (map tasks writing by a partitioner, with a map-side combine where
// Spark has one: reduceByKey and its kin, not groupByKey), and the reduce side reads them as the operation needs;
// co-partitioned inputs are read in place; cartesian pairs every partition with every other.
const pairs = (kc: KindlingContext) => kc.parallelize([[1, "a"], [2, "b"], [1, "c"]] as Array<[number, string]>, 2)
const cases: Record<string, readonly [(kc: KindlingContext) => Dataset<unknown>, Array<string>]> = {
  parallelize: [(kc) => kc.parallelize([1, 2, 3], 2), ["2× Slice"]],
  range: [(kc) => kc.range(0, 10, 1, 3), ["3× Range"]],
  map: [(kc) => kc.parallelize([1, 2, 3], 2).map((n) => n + 1), ["2× Map(Slice)"]],
  filter: [(kc) => kc.parallelize([1, 2, 3], 2).filter((n) => n > 1), ["2× Filter(Slice)"]],
  flatMap: [(kc) => kc.parallelize([1, 2, 3], 2).flatMap((n) => [n, n]), ["2× FlatMap(Slice)"]],
  mapPartitions: [(kc) => kc.parallelize([1, 2, 3], 2).mapPartitions((it) => it), ["2× MapPartitions(Slice)"]],
  mapPartitionsWithIndex: [(kc) => kc.parallelize([1, 2, 3], 2).mapPartitionsWithIndex((i, it) => it), [
    "2× MapPartitionsWithIndex(Slice)"
  ]],
  union: [(kc) => kc.parallelize([1, 2, 3], 2).union(kc.parallelize([4], 1)), ["3× Slice"]],
  zip: [(kc) => kc.parallelize([1, 2, 3], 2).zip(kc.parallelize([4, 5, 6], 2)), ["2× ZipPartitions(Slice, Slice)"]],
  glom: [(kc) => kc.parallelize([1, 2, 3], 2).glom(), ["2× Glom(Slice)"]],
  sample: [(kc) => kc.parallelize([1, 2, 3], 2).sample(false, 0.5, 1), ["2× Sample(Slice)"]],
  zipWithIndex: [(kc) => kc.parallelize([1, 2, 3], 2).zipWithIndex(), ["2× ZipWithIndex(Slice)"]],
  reduceByKey: [(kc) => pairs(kc).reduceByKey((a, b) => a + b), ["2× Slice → Hash+combine×2", "2× ShuffleRead:Merge"]],
  groupByKey: [(kc) => pairs(kc).groupByKey(), ["2× Slice → Hash×2", "2× ShuffleRead:Combine"]],
  partitionBy: [(kc) => pairs(kc).partitionBy(3), ["2× Slice → Hash×3", "3× ShuffleRead:Records"]],
  sortByKey: [(kc) => pairs(kc).sortByKey(), ["2× Slice → Range[3]↑×2", "2× ShuffleRead:Sort"]],
  sortByKeyDown: [(kc) => pairs(kc).sortByKey(false, 3), ["2× Slice → Range[2,4]↓×3", "3× ShuffleRead:Sort"]],
  sortBy: [(kc) => kc.parallelize([1, 2, 3], 2).sortBy((n) => -n), [
    "2× KeyBy(Slice) → Range[3]↑×2",
    "2× Map(ShuffleRead:Sort)"
  ]],
  foldByKey: [(kc) => pairs(kc).foldByKey("", (a, b) => a + b), ["2× Slice → Hash+combine×2", "2× ShuffleRead:Merge"]],
  aggregateByKey: [(kc) => pairs(kc).aggregateByKey(0, (a, b) => a + b.length, (a, b) => a + b), [
    "2× Slice → Hash+combine×2",
    "2× ShuffleRead:Merge"
  ]],
  combineByKey: [(kc) => pairs(kc).combineByKey((v) => [v], (c, v) => [...c, v], (a, b) => [...a, ...b]), [
    "2× Slice → Hash+combine×2",
    "2× ShuffleRead:Merge"
  ]],
  leftOuterJoin: [(kc) => pairs(kc).leftOuterJoin(pairs(kc)), [
    "2× Slice → Hash×2",
    "2× Slice → Hash×2",
    "2× FlatMapValues(CoGroup(Shuffled, Shuffled))"
  ]],
  subtractByKey: [(kc) => pairs(kc).subtractByKey(pairs(kc)), [
    "2× Slice → Hash×2",
    "2× Slice → Hash×2",
    "2× FlatMapValues(CoGroup(Shuffled, Shuffled))"
  ]],
  groupBy: [(kc) => kc.parallelize([1, 2, 3], 2).groupBy((n) => n % 2), [
    "2× KeyBy(Slice) → Hash×2",
    "2× ShuffleRead:Combine"
  ]],
  values: [(kc) => pairs(kc).values(), ["2× Map(Slice)"]],
  joinCoPartitioned: [(kc) => pairs(kc).partitionBy(2).join(pairs(kc).partitionBy(2)), [
    "2× Slice → Hash×2",
    "2× Slice → Hash×2",
    "2× FlatMapValues(CoGroup(ShuffleRead:Records, ShuffleRead:Records))"
  ]],
  unionShuffled: [(kc) => pairs(kc).reduceByKey((a, b) => a + b).union(pairs(kc)), [
    "2× Slice → Hash+combine×2",
    "2× ShuffleRead:Merge | 2× Slice"
  ]],
  repartition: [(kc) => kc.parallelize([1, 2, 3], 2).repartition(3), [
    "2× Slice → RoundRobin×3",
    "3× ShuffleRead:Records"
  ]],
  coalesce: [(kc) => kc.parallelize([1, 2, 3], 4).coalesce(2), ["2× Concat(Slice, Slice)"]],
  coalesceShuffle: [(kc) => kc.parallelize([1, 2, 3], 4).coalesce(2, true), [
    "4× Slice → RoundRobin×2",
    "2× ShuffleRead:Records"
  ]],
  join: [(kc) => pairs(kc).join(pairs(kc)), [
    "2× Slice → Hash×2",
    "2× Slice → Hash×2",
    "2× FlatMapValues(CoGroup(Shuffled, Shuffled))"
  ]],
  cogroup: [(kc) => pairs(kc).cogroup(pairs(kc)), [
    "2× Slice → Hash×2",
    "2× Slice → Hash×2",
    "2× CoGroup(Shuffled, Shuffled)"
  ]],
  mapValues: [(kc) => pairs(kc).mapValues((v) => v + v), ["2× MapValues(Slice)"]],
  flatMapValues: [(kc) => pairs(kc).flatMapValues((v) => [v]), ["2× FlatMapValues(Slice)"]],
  keys: [(kc) => pairs(kc).keys(), ["2× Map(Slice)"]],
  keyBy: [(kc) => kc.parallelize([1, 2, 3], 2).keyBy((n) => n % 2), ["2× KeyBy(Slice)"]],
  distinct: [(kc) => kc.parallelize([1, 2, 3], 2).distinct(), [
    "2× Map(Slice) → Hash+combine×2",
    "2× Map(ShuffleRead:Merge)"
  ]],
  intersection: [(kc) => kc.parallelize([1, 2, 3], 2).intersection(kc.parallelize([2], 1)), [
    "2× Map(Slice) → Hash×2",
    "1× Map(Slice) → Hash×2",
    "2× Map(Filter(CoGroup(Shuffled, Shuffled)))"
  ]],
  subtract: [(kc) => kc.parallelize([1, 2, 3], 2).subtract(kc.parallelize([2], 1)), [
    "2× Map(Slice) → Hash×2",
    "1× Map(Slice) → Hash×2",
    "2× FlatMap(CoGroup(Shuffled, Shuffled))"
  ]],
  cartesian: [(kc) => kc.parallelize([1, 2, 3], 2).cartesian(kc.parallelize([4, 5], 2)), [
    "4× Cartesian(Slice, Slice)"
  ]],
  cache: [(kc) => kc.parallelize([1, 2, 3], 2).cache().map((n) => n), ["2× Map(Cached(Slice))"]]
}

describe("every transformation's plan", () => {
  for (const [name, [make, expected]] of Object.entries(cases)) {
    it.effect(`${name}: ${expected.join("; ")}`, () =>
      Effect.gen(function*() {
        assert.deepStrictEqual(yield* planOf(make), expected)
      }))
  }
})

describe("what a plan carries", () => {
  const tasksOf = <E>(make: (kc: KindlingContext) => Effect.Effect<unknown, E>) =>
    Effect.gen(function*() {
      const { driver, jobs } = recordingDriver()
      const kc = AppContext.make({ appName: "plans", master: "test", defaultParallelism: () => 2, driver })
      yield* make(kc)
      return jobs.at(-1)!
    })

  it.effect("sources: parallelize's slices as Spark cuts them, range's bounds per partition", () =>
    Effect.gen(function*() {
      const slices = yield* tasksOf((kc) => kc.parallelize([1, 2, 3, 4, 5], 3).count())
      assert.deepStrictEqual(slices.tasks.map((t) => decode(t).plan), [
        { _tag: "Slice", items: [1] },
        { _tag: "Slice", items: [2, 3] },
        { _tag: "Slice", items: [4, 5] }
      ])
      const ranges = yield* tasksOf((kc) => kc.range(0, 10, 3, 2).count())
      assert.deepStrictEqual(ranges.tasks.map((t) => decode(t).plan), [
        // 0, 3 | 6, 9: each partition ends its count of steps past its start.
        { _tag: "Range", start: 0, end: 6, step: 3 },
        { _tag: "Range", start: 6, end: 12, step: 3 }
      ])
      assert.deepStrictEqual(slices.tasks.map((t) => decode(t).result), [
        { _tag: "Count" },
        { _tag: "Count" },
        { _tag: "Count" }
      ])
    }))

  it.effect("each partition's index, seed and place: mapPartitionsWithIndex, sample, zipWithIndex, persist", () =>
    Effect.gen(function*() {
      const indexed = yield* tasksOf((kc) => kc.parallelize([1, 2, 3], 2).mapPartitionsWithIndex((_, it) => it).count())
      assert.deepStrictEqual(indexed.tasks.map((t) => (decode(t).plan as { partition: number }).partition), [0, 1])
      const sampled = yield* tasksOf((kc) => kc.parallelize([1, 2, 3], 2).sample(true, 0.25, 7).count())
      for (const [i, task] of sampled.tasks.entries()) {
        const plan = decode(task).plan as Extract<PlanNode, { _tag: "Sample" }>
        assert.deepInclude(plan, { withReplacement: true, fraction: 0.25, seed: 7, partition: i })
      }
      // zipWithIndex counts the partitions before each first (a job of its own), as Spark does.
      const { driver, jobs } = recordingDriver()
      const kc = AppContext.make({ appName: "plans", master: "test", defaultParallelism: () => 2, driver })
      yield* kc.parallelize([1, 2, 3, 4, 5], 3).zipWithIndex().count()
      assert.strictEqual(jobs.length, 2)
      // The counting job's tasks answered 1, 2 and 3: the partitions start at 0, 1 and 3.
      assert.deepStrictEqual(jobs[1]!.tasks.map((t) => (decode(t).plan as { offset: number }).offset), [0, 1, 3])
      const cached = yield* tasksOf((kc) => {
        const numbers = kc.parallelize([1, 2, 3], 2).persist("MEMORY_AND_DISK")
        return numbers.count()
      })
      const blocks = cached.tasks.map((t) => decode(t).plan as Extract<PlanNode, { _tag: "Cached" }>)
      assert.deepStrictEqual(blocks.map((b) => [b.level, b.partition]), [["MEMORY_AND_DISK", 0], [
        "MEMORY_AND_DISK",
        1
      ]])
      // A task over a persisted partition would rather run where its block is.
      assert.deepStrictEqual(cached.preferredBlocks, blocks.map((b) => `rdd_${b.rddId}_${b.partition}`))
    }))

  it.effect("a shuffle's map tasks write their own map index, the reduce count and the operation's name", () =>
    Effect.gen(function*() {
      const job = yield* tasksOf((kc) =>
        kc.parallelize([[1, 1], [2, 2]] as Array<readonly [number, number]>, 2).reduceByKey(
          (a, b) => a + b,
          undefined,
          5
        )
          .count()
      )
      const [shuffle] = job.shuffles
      const writes = shuffle!.mapTasks.map((t) => decode(t).result as Extract<Task["result"], { _tag: "ShuffleWrite" }>)
      assert.deepStrictEqual(writes.map((w) => [w.mapIndex, w.numReduces, w.operation, w.shuffle.shuffleId]), [
        [0, 5, "reduceByKey", shuffle!.shuffleId],
        [1, 5, "reduceByKey", shuffle!.shuffleId]
      ])
      const reads = job.tasks.map((t) => decode(t).plan as Extract<PlanNode, { _tag: "ShuffleRead" }>)
      assert.deepStrictEqual(reads.map((r) => r.reduceId), [0, 1, 2, 3, 4])
      assert.isTrue(reads.every((r) => r.shuffle.token === writes[0]!.shuffle.token))
    }))
})
