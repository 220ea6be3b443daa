// `sortByKey`'s range partitioner, Spark's RangePartitioner: a sample of keys per partition, weighted by how many
// records each stands for, cut into ranges of equal weight.
import { Keys } from "@kindling/data"
import type { TaskPlan } from "@kindling/protocol"
import * as Effect from "effect/Effect"
import type { Dataset, DatasetError } from "../Dataset.js"
import { runJob } from "./actions.js"
import { shuffleCount } from "./partitions.js"

// How many keys a range partitioner samples per reduce partition (Spark's 20, before its 3× oversampling).
const samplesPerPartition = 60

// The bounds of `numPartitions` ranges (when undefined, the default count: see `Partitions.defaultPartitions`);
// sampling the keys takes a job.
export const rangeBounds = <A>(
  dataset: Dataset<A>,
  ascending: boolean,
  numPartitions: number | undefined
): Effect.Effect<typeof TaskPlan.Partitioner.Encoded, DatasetError> =>
  Effect.gen(function*() {
    const lineage = yield* dataset.lineage
    const partitions = shuffleCount(dataset, lineage.plans.length, numPartitions, false)
    if (partitions <= 1 || lineage.plans.length === 0) return { _tag: "Range", bounds: [], ascending }
    const size = Math.ceil((samplesPerPartition * partitions) / lineage.plans.length)
    // Seeded by the dataset, as Spark's RangePartitioner is: the same data gives the same bounds on every run.
    const seed = Math.imul(dataset.id + 1, 0x9e3779b1) >>> 0
    const samples = (yield* runJob(
      dataset.runtime,
      lineage,
      (partition) => ({ _tag: "SampleKeys", size, seed: seed + partition }),
      "sortByKey"
    )) as Array<{ readonly count: number; readonly keys: Array<Keys.Key> }>
    const weighted = samples.flatMap(({ count, keys }) => keys.map((key) => [key, count / keys.length] as const))
    weighted.sort((a, b) => Keys.compare(a[0], b[0]))
    const total = weighted.reduce((sum, [, weight]) => sum + weight, 0)
    const step = total / partitions
    const bounds: Array<Keys.Key> = []
    let cumulative = 0
    let target = step
    for (const [key, weight] of weighted) {
      cumulative += weight
      if (cumulative < target) continue
      if (bounds.length === 0 || Keys.compare(key, bounds[bounds.length - 1]!) > 0) bounds.push(key)
      target += step
      if (bounds.length === partitions - 1) break
    }
    // A descending sort sends the largest keys to partition 0: the bounds are read from the other end.
    return { _tag: "Range", bounds, ascending }
  })
