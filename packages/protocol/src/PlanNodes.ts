/**
 * Walking a partition's plan (`TaskPlan.PlanNode`, as it travels), and what a task over it needs
 * (`TaskPlan.TaskNeeds`). It loads nothing at run time, so that an app's code can load it alone:
 * `@kindling/protocol/PlanNodes`.
 *
 * @since 0.1.0
 */
import type { PlanNodeEncoded, ResultOp, TaskNeeds } from "./TaskPlan.js"

type PersistedPartition = TaskNeeds["persisted"][number]

/**
 * The nodes a node's records are computed from. (A co-group's shuffled inputs are read, not computed: they are
 * not among them.)
 *
 * @since 0.1.0
 */
export const children = (plan: PlanNodeEncoded): ReadonlyArray<PlanNodeEncoded> => {
  switch (plan._tag) {
    case "Slice":
    case "Range":
    case "TextSplit":
    case "LineRecordSplit":
    case "ParquetSplit":
    case "WholeTextFiles":
    case "RecordFile":
    case "ShuffleRead":
      return []
    case "CoGroup":
      return plan.inputs.flatMap((input) => input._tag === "InPlace" ? [input.plan] : [])
    case "Concat":
    case "ZipPartitions":
      return plan.children
    case "Cartesian":
      return [plan.left, plan.right]
    default:
      return [plan.child]
  }
}

/**
 * Every node of a plan, its root first.
 *
 * @since 0.1.0
 */
export function* nodes(plan: PlanNodeEncoded): Generator<PlanNodeEncoded> {
  yield plan
  for (const child of children(plan)) yield* nodes(child)
}

/**
 * What a task over `plan` making `result` needs gathered before it runs and served after, with the broadcasts its
 * functions refer to.
 *
 * @since 0.1.0
 */
export const needsOf = (
  plan: PlanNodeEncoded,
  result: typeof ResultOp.Encoded,
  broadcasts: TaskNeeds["broadcasts"]
): TaskNeeds => {
  const persisted: Array<PersistedPartition> = []
  const shuffleReads: Array<TaskNeeds["shuffleReads"][number]> = []
  const walk = (node: PlanNodeEncoded, beneath: ReadonlyArray<PersistedPartition>) => {
    if (node._tag === "ShuffleRead") shuffleReads.push({ shuffle: node.shuffle, reduceId: node.reduceId, beneath })
    if (node._tag === "CoGroup") {
      for (const input of node.inputs) {
        if (input._tag === "Shuffled") shuffleReads.push({ shuffle: input.shuffle, reduceId: node.reduceId, beneath })
      }
    }
    let below = beneath
    if (node._tag === "Cached") {
      const partition = { rddId: node.rddId, partition: node.partition }
      persisted.push(partition)
      below = [...beneath, partition]
    }
    for (const child of children(node)) walk(child, below)
  }
  walk(plan, [])
  return {
    ...(result._tag === "ShuffleWrite" ? { writes: result.shuffle } : {}),
    persisted,
    shuffleReads,
    broadcasts
  }
}
