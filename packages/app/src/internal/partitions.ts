// Partition counts and ranges: a count an app gives, checked; the count of a shuffle given none; `coalesce`'s
// consecutive partitions merged; and `zipWithIndex`'s offsets, each partition's from the counts of those before it.
import type { TaskPlan } from "@kindling/protocol"
import * as Effect from "effect/Effect"
import { InvalidArgument } from "../AppErrors.js"
import type { Dataset, DatasetError } from "../Dataset.js"
import * as Lineage from "../Lineage.js"
import { runJob } from "./actions.js"

type PlanNode = typeof TaskPlan.PlanNode.Encoded

export const checkPartitions = (numPartitions: number, operation: string) => {
  if (!Number.isInteger(numPartitions) || numPartitions < 1) {
    throw new InvalidArgument({
      reason: `${operation}: the number of partitions must be a positive integer, got ${numPartitions}`
    })
  }
}

/** A dataset a shuffle reads: its partitions, and how many it is hash-partitioned into, if it is. */
export interface ShuffleInput {
  readonly partitions: number
  readonly hashPartitions: number | undefined
}

/**
 * The partitions of a shuffle given no count, as Spark's `Partitioner.defaultPartitioner` picks them: of the
 * inputs already hash-partitioned, the one with the most partitions keeps its partitioning (and is read in place)
 * when its count is within an order of magnitude of the largest input's, or no smaller than the default count;
 * otherwise the default count, which is `configured` (`kindling.default.parallelism`) when set, else the largest
 * input's partitions.
 */
export const defaultPartitions = (inputs: ReadonlyArray<ShuffleInput>, configured: number | undefined): number => {
  const largest = Math.max(1, ...inputs.map((input) => input.partitions))
  const count = configured ?? largest
  let kept: ShuffleInput | undefined
  for (const input of inputs) {
    if (input.hashPartitions !== undefined && (kept === undefined || input.partitions > kept.partitions)) kept = input
  }
  if (kept !== undefined && (Math.log10(largest) - Math.log10(kept.partitions) < 1 || count <= kept.partitions)) {
    return kept.hashPartitions!
  }
  return count
}

/**
 * The partitions of a new shuffle of one dataset (of `partitions` partitions): `numPartitions` when given, else the
 * default count, its own hash partitioning kept when the shuffle partitions by hash too.
 */
export const shuffleCount = <A>(
  dataset: Dataset<A>,
  partitions: number,
  numPartitions: number | undefined,
  byHash: boolean
): number =>
  numPartitions ?? defaultPartitions(
    [{ partitions, hashPartitions: byHash && dataset.hashPartitioned ? partitions : undefined }],
    dataset.runtime.defaultPartitions()
  )

// At most `numPartitions` partitions, each a run of consecutive ones.
export const coalesced = (lineage: Lineage.Lineage, numPartitions: number): Lineage.Lineage => {
  const parents = lineage.plans.length
  if (parents <= numPartitions) return lineage
  return Lineage.withPlans(
    lineage,
    Array.from({ length: numPartitions }, (_, i) => ({
      _tag: "Concat" as const,
      children: lineage.plans.slice(
        Math.floor((i * parents) / numPartitions),
        Math.floor(((i + 1) * parents) / numPartitions)
      )
    }))
  )
}

// Each record with its index: the counts of all partitions but the last take a job.
export const indexed = <A>(dataset: Dataset<A>): Effect.Effect<Lineage.Lineage, DatasetError> =>
  Effect.gen(function*() {
    const lineage = yield* dataset.lineage
    const counts = lineage.plans.length <= 1
      ? []
      : yield* runJob(
        dataset.runtime,
        lineage,
        () => ({ _tag: "Count" }),
        "zipWithIndex",
        lineage.plans.slice(0, -1).map((_, i) => i)
      )
    let offset = 0
    return Lineage.withPlans(
      lineage,
      lineage.plans.map((child, i) => {
        const node: PlanNode = { _tag: "ZipWithIndex", offset, child }
        offset += (counts[i] as number | undefined) ?? 0
        return node
      })
    )
  })
