// The actions' jobs: a lineage's tasks run as one job, a result for each partition asked for, and what some actions
// do beyond folding those results — `take`'s rounds of partitions, `lookup`'s read of one key's partition, and
// the merge of `takeOrdered`'s and `top`'s partial results.
import { Keys } from "@kindling/data"
import type { TaskPlan } from "@kindling/protocol"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import { InvalidArgument, type JobFailed } from "../AppErrors.js"
import * as Builtins from "../Builtins.js"
import * as CallSites from "../CallSites.js"
import type { Dataset, DatasetError, Runtime } from "../Dataset.js"
import * as JobGroups from "../JobGroups.js"
import * as Lineage from "../Lineage.js"

type PlanNode = typeof TaskPlan.PlanNode.Encoded
type ResultOp = typeof TaskPlan.ResultOp.Encoded

// One job over the lineage: a task for each partition asked for (all of them by default), ending in `result`.
export const runJob = (
  runtime: Runtime,
  lineage: Lineage.Lineage,
  result: (partition: number) => ResultOp,
  action: string,
  partitions?: ReadonlyArray<number>
): Effect.Effect<Array<unknown>, JobFailed> => {
  const which = partitions ?? lineage.plans.map((_, i) => i)
  return Effect.flatMap(Effect.all([FiberRef.get(CallSites.currentAction), FiberRef.get(JobGroups.current)]), ([
    site,
    { description, group }
  ]) => {
    const called = site?.()
    const tasks = which.map((i) => Lineage.encodeTask(lineage.plans[i]!, result(i)))
    return runtime.runJob({
      group,
      description,
      tasks,
      preferredBlocks: tasks.map(Lineage.preferredBlock),
      parents: lineage.parents,
      shuffles: lineage.shuffles,
      name: called?.short ?? action,
      details: called?.long ?? "",
      datasets: lineage.datasets
    })
  })
}

// One job over the dataset's lineage.
export const run = <A>(
  dataset: Dataset<A>,
  result: (partition: number) => ResultOp,
  action: string,
  partitions?: ReadonlyArray<number>
) => Effect.flatMap(dataset.lineage, (lineage) => runJob(dataset.runtime, lineage, result, action, partitions))

export const take = <A>(dataset: Dataset<A>, n: number): Effect.Effect<Array<A>, DatasetError> =>
  Effect.gen(function*() {
    const taken: Array<A> = []
    if (n <= 0) return taken
    const total = yield* dataset.numPartitions
    let scanned = 0
    while (taken.length < n && scanned < total) {
      let tries = 1
      if (scanned > 0) {
        tries = taken.length === 0
          ? scanned * 4
          : Math.min(Math.max(Math.ceil((1.5 * n * scanned) / taken.length) - scanned, 1), scanned * 4)
      }
      const partitions = Array.from({ length: Math.min(tries, total - scanned) }, (_, i) => scanned + i)
      const left = n - taken.length
      const parts = yield* run(dataset, () => ({ _tag: "Take", n: left }), "take", partitions)
      for (const part of parts as Array<Array<A>>) taken.push(...part.slice(0, n - taken.length))
      scanned += partitions.length
    }
    return taken
  })

export const lookup = <K, V>(dataset: Dataset<readonly [K, V]>, key: K): Effect.Effect<Array<V>, DatasetError> =>
  Effect.gen(function*() {
    const lineage = yield* dataset.lineage
    const partitions = yield* dataset.hashPartitions
    const only = partitions === undefined ? undefined : [Keys.partitionOf(Keys.check(key, "lookup"), partitions)]
    const matching = Lineage.withPlans(
      lineage,
      lineage.plans.map((child): PlanNode => ({
        _tag: "Map",
        fn: Builtins.value,
        child: { _tag: "Filter", fn: Builtins.hasKey(key), child }
      }))
    )
    const parts = yield* runJob(dataset.runtime, matching, () => ({ _tag: "Collect" }), "lookup", only)
    return (parts as Array<Array<V>>).flat()
  })

// `keyed`: the dataset's records paired with their keys (`keyBy`), ordered by the keys alone, given without them.
export const ordered = <A>(
  dataset: Dataset<A>,
  n: number,
  ascending: boolean,
  action: string,
  keyed?: Dataset<readonly [unknown, A]>
): Effect.Effect<Array<A>, DatasetError> => {
  if (!Number.isInteger(n) || n < 0) {
    throw new InvalidArgument({ reason: `${action}: n must be a non-negative integer, got ${n}` })
  }
  const order = ascending ? Keys.compare : (a: Keys.Key, b: Keys.Key) => Keys.compare(b, a)
  if (keyed !== undefined) {
    return Effect.map(run(keyed, () => ({ _tag: "TakeOrdered", n, ascending, byKey: true }), action), (parts) => {
      const all = (parts as Array<Array<readonly [Keys.Key, A]>>).flat()
      all.sort((a, b) => order(a[0], b[0]))
      return all.slice(0, n).map(([, record]) => record)
    })
  }
  return Effect.map(run(dataset, () => ({ _tag: "TakeOrdered", n, ascending }), action), (parts) => {
    const all = (parts as Array<Array<Keys.Key>>).flat()
    all.sort(order)
    return all.slice(0, n) as Array<A>
  })
}
