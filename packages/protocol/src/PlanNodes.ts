/**
 * Walking a partition's plan (`TaskPlan.PlanNode`, as it travels). It loads nothing at run time, so a task thread
 * can load it alone: `@kindling/protocol/PlanNodes`.
 *
 * @since 0.1.0
 */
import type { PlanNodeEncoded } from "./TaskPlan.js"

/**
 * Every node of a plan, its root first; with `skip`, none beneath a persisted partition it names (one its executor
 * holds, which a task reads rather than computes).
 *
 * @since 0.1.0
 */
export function* nodes(
  plan: PlanNodeEncoded,
  skip?: (cached: { readonly rddId: number; readonly partition: number }) => boolean
): Generator<PlanNodeEncoded> {
  yield plan
  switch (plan._tag) {
    case "Slice":
    case "Range":
    case "TextSplit":
    case "LineRecordSplit":
    case "ParquetSplit":
    case "WholeTextFiles":
    case "RecordFile":
    case "ShuffleRead":
      return
    case "CoGroup":
      for (const input of plan.inputs) if (input._tag === "InPlace") yield* nodes(input.plan, skip)
      return
    case "Concat":
    case "ZipPartitions":
      for (const child of plan.children) yield* nodes(child, skip)
      return
    case "Cartesian":
      yield* nodes(plan.left, skip)
      yield* nodes(plan.right, skip)
      return
    case "Cached":
      if (skip?.(plan) === true) return
      yield* nodes(plan.child, skip)
      return
    default:
      yield* nodes(plan.child, skip)
  }
}
