/**
 * What a dataset computes, as jobs need it: the plan of each of its partitions (leaves are sources or shuffle
 * reads) and the shuffles those plans depend on — the ones they read directly (`parents`) and every one further
 * up, each with its map tasks. The DAG scheduler cuts jobs into stages along the shuffles.
 *
 * @since 0.1.0
 */
import type { TaskPlan } from "@kindling/protocol"
import * as PlanNodes from "@kindling/protocol/PlanNodes"
import * as Records from "@kindling/protocol/records"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import type * as AppEvents from "./AppEvents.js"
import type * as JobGraph from "./JobGraph.js"

type PlanNode = typeof TaskPlan.PlanNode.Encoded

/**
 * @since 0.1.0
 * @category models
 */
export interface Lineage {
  readonly plans: ReadonlyArray<PlanNode>
  /** Every shuffle the plans depend on, at any depth, each once. */
  readonly shuffles: ReadonlyArray<JobGraph.ShuffleSpec>
  /** The shuffles the plans read directly. */
  readonly parents: ReadonlyArray<number>
  /** The datasets the plans compute since the shuffles they read (what their stage draws). */
  readonly datasets: ReadonlyArray<AppEvents.DatasetInfo>
}

/**
 * The lineage of plans that read no shuffle.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromPlans = (plans: ReadonlyArray<PlanNode>): Lineage => ({
  plans,
  shuffles: [],
  parents: [],
  datasets: []
})

/**
 * The lineage with the dataset that computes it (once, however many ways it is reached).
 *
 * @since 0.1.0
 */
export const withDataset = (lineage: Lineage, dataset: AppEvents.DatasetInfo): Lineage =>
  lineage.datasets.some((known) => known.id === dataset.id)
    ? lineage
    : { ...lineage, datasets: [...lineage.datasets, dataset] }

/**
 * The same shuffles under other plans (a narrow transformation).
 *
 * @since 0.1.0
 */
export const withPlans = (lineage: Lineage, plans: ReadonlyArray<PlanNode>): Lineage => ({ ...lineage, plans })

/**
 * The shuffles of several lineages together, under the plans given.
 *
 * @since 0.1.0
 */
export const combine = (lineages: ReadonlyArray<Lineage>, plans: ReadonlyArray<PlanNode>): Lineage => {
  const shuffles = new Map<number, JobGraph.ShuffleSpec>()
  const parents = new Set<number>()
  const datasets = new Map<number, AppEvents.DatasetInfo>()
  for (const lineage of lineages) {
    for (const shuffle of lineage.shuffles) shuffles.set(shuffle.shuffleId, shuffle)
    for (const parent of lineage.parents) parents.add(parent)
    for (const dataset of lineage.datasets) datasets.set(dataset.id, dataset)
  }
  return { plans, shuffles: [...shuffles.values()], parents: [...parents], datasets: [...datasets.values()] }
}

/**
 * A task as it travels: its partition's plan and what to make of the records, encoded, and what it needs — the
 * broadcasts its functions read among them, met while encoding.
 *
 * @since 0.1.0
 */
export const encodeTask = (plan: PlanNode, result: typeof TaskPlan.ResultOp.Encoded): TaskPlan.EncodedTask => {
  const { broadcasts, bytes } = Records.encodeCollecting({ plan, result })
  return { bytes, needs: PlanNodes.needsOf(plan, result, broadcasts.map(({ id, token }) => ({ id, token }))) }
}

/**
 * The persisted partition a task reads first, if any (its needs list them as its plan meets them): the task would
 * rather run where that block is.
 *
 * @since 0.1.0
 */
export const preferredBlock = (task: TaskPlan.EncodedTask): string | undefined => {
  const first = task.needs.persisted[0]
  return first === undefined ? undefined : `rdd_${first.rddId}_${first.partition}`
}

/**
 * @since 0.1.0
 * @category models
 */
export interface ShuffleOptions {
  readonly shuffleId: number
  readonly token: string
  readonly numReduces: number
  readonly partitioner: typeof TaskPlan.Partitioner.Encoded
  readonly combine?: typeof TaskPlan.Aggregator.Encoded
  /** The operation that shuffles, for the stage's name. */
  readonly name: string
}

/**
 * The lineage's records shuffled: its plans become the map tasks of a new shuffle, which the result depends on.
 *
 * @since 0.1.0
 */
export const shuffled = (
  lineage: Lineage,
  options: ShuffleOptions
): { readonly shuffle: typeof TaskPlan.ShuffleHandle.Type; readonly lineage: Lineage } => {
  const shuffle = { shuffleId: options.shuffleId, token: options.token }
  const shuffledDataset = lineage.datasets.at(-1)
  const mapTasks = lineage.plans.map((plan, mapIndex) =>
    encodeTask(plan, {
      _tag: "ShuffleWrite",
      shuffle,
      mapIndex,
      numReduces: options.numReduces,
      partitioner: options.partitioner,
      operation: options.name,
      ...(options.combine === undefined ? {} : { combine: options.combine })
    })
  )
  const spec: JobGraph.ShuffleSpec = {
    shuffleId: options.shuffleId,
    numReduces: options.numReduces,
    mapTasks,
    preferredBlocks: mapTasks.map(preferredBlock),
    parents: lineage.parents,
    // Named, as Spark names a map stage, after the dataset shuffled: the last its map tasks compute.
    name: shuffledDataset?.callSite ?? options.name,
    details: shuffledDataset?.callSiteLong ?? "",
    datasets: lineage.datasets
  }
  return {
    shuffle,
    lineage: {
      plans: [],
      shuffles: [...lineage.shuffles.filter((s) => s.shuffleId !== spec.shuffleId), spec],
      parents: [spec.shuffleId],
      datasets: []
    }
  }
}

/**
 * `effect` (what a lineage needs computed once: the counts behind `zipWithIndex`, a sort's bounds, a directory's
 * files), run by the first to ask and kept for all; those asking meanwhile wait for it. A run cut short because
 * whoever ran it was interrupted (its action was cancelled) is no answer and is not kept: the next to ask — or
 * one of those waiting — runs it again.
 *
 * @since 0.1.0
 * @category constructors
 */
export const once = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E> => {
  let kept: Exit.Exit<A, E> | undefined
  let running: Deferred.Deferred<Exit.Exit<A, E> | undefined> | undefined
  const get: Effect.Effect<A, E> = Effect.suspend(() => {
    if (kept !== undefined) return kept
    if (running !== undefined) return Effect.flatMap(Deferred.await(running), (exit) => exit ?? get)
    const mine = Deferred.unsafeMake<Exit.Exit<A, E> | undefined>(FiberId.none)
    running = mine
    const settle = (exit: Exit.Exit<A, E> | undefined) =>
      Effect.sync(() => {
        if (exit !== undefined) kept = exit
        running = undefined
        Deferred.unsafeDone(mine, Exit.succeed(exit))
      })
    return Effect.exit(effect).pipe(
      Effect.tap((exit) => settle(Exit.isInterrupted(exit) ? undefined : exit)),
      Effect.onInterrupt(() => settle(undefined)),
      Effect.flatten
    )
  })
  return get
}
