/**
 * A `TaskPlan.Aggregator` made into functions: how a key's first value becomes its combiner, how a value is added
 * to one, how two combiners of a key merge.
 *
 * @since 0.1.0
 */
import type { TaskPlan } from "@kindling/protocol"
import type { Functions } from "./Evaluation.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Bound {
  readonly create: (value: unknown) => unknown
  readonly add: (combiner: unknown, value: unknown) => unknown
  readonly merge: (a: unknown, b: unknown) => unknown
}

/**
 * Binds an aggregator's functions; without `createCombiner`, a key's first value is added to a copy of `zero`.
 *
 * @since 0.1.0
 */
export const bind = (aggregator: typeof TaskPlan.Aggregator.Encoded, functions: Functions): Bound => {
  const add = functions.bind(aggregator.mergeValue, 2)
  const merge = functions.bind(aggregator.mergeCombiners, 2)
  if (aggregator.createCombiner !== undefined) return { create: functions.bind(aggregator.createCombiner), add, merge }
  const zero = aggregator.zero
  return { create: (value) => add(structuredClone(zero), value), add, merge }
}
