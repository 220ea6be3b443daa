// Partition counts and ranges: a count an app gives, checked; `coalesce`'s consecutive partitions merged; and
// `zipWithIndex`'s offsets, each partition's from the counts of those before it.
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
