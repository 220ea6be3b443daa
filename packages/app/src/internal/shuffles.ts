// The lineages of shuffles: one dataset's records through a new shuffle, read back as its reduce partitions; and
// pair datasets cogrouped by key, each read in place when it is hash-partitioned as the cogroup is, else shuffled.
import type { TaskPlan } from "@kindling/protocol"
import * as Effect from "effect/Effect"
import * as Crypto from "node:crypto"
import type { Dataset, DatasetError } from "../Dataset.js"
import * as Lineage from "../Lineage.js"
import { checkPartitions, defaultPartitions, shuffleCount } from "./partitions.js"

type PlanNode = typeof TaskPlan.PlanNode.Encoded
type CoGroupInput = Extract<PlanNode, { _tag: "CoGroup" }>["inputs"][number]

// A shuffle's token: random, so that only the app's own executors, told it in their tasks, can name its blocks.
const newToken = () => Crypto.randomBytes(16).toString("hex")

export interface Options {
  readonly operation: string
  readonly numPartitions: number | undefined
  readonly partitioner: (lineage: Lineage.Lineage) => Effect.Effect<typeof TaskPlan.Partitioner.Encoded, DatasetError>
  readonly combine?: typeof TaskPlan.Aggregator.Encoded
  readonly read: typeof TaskPlan.ReadMode.Encoded
  /** Its dataset's pairs come out hash-partitioned by key. */
  readonly partitioned: boolean
}

// A new shuffle of the dataset's records into `numPartitions` reduce partitions (when undefined, the default count:
// see `Partitions.defaultPartitions`), read as `read` says.
export const shuffled = <A>(dataset: Dataset<A>, options: Options): Effect.Effect<Lineage.Lineage, DatasetError> => {
  if (options.numPartitions !== undefined) checkPartitions(options.numPartitions, options.operation)
  const shuffleId = dataset.runtime.newShuffleId()
  const token = newToken()
  return Effect.gen(function*() {
    const parent = yield* dataset.lineage
    const numReduces = shuffleCount(dataset, parent.plans.length, options.numPartitions, options.partitioned)
    const { lineage, shuffle } = Lineage.shuffled(parent, {
      shuffleId,
      token,
      numReduces,
      partitioner: yield* options.partitioner(parent),
      name: options.operation,
      ...(options.combine === undefined ? {} : { combine: options.combine })
    })
    return Lineage.withPlans(
      lineage,
      Array.from({ length: numReduces }, (_, reduceId) => ({
        _tag: "ShuffleRead" as const,
        shuffle,
        reduceId,
        read: options.read
      }))
    )
  })
}

export const cogrouped = <K>(
  datasets: ReadonlyArray<Dataset<readonly [K, unknown]>>,
  operation: string,
  numPartitions: number | undefined
): Effect.Effect<Lineage.Lineage, DatasetError> => {
  const runtime = datasets[0]!.runtime
  if (numPartitions !== undefined) checkPartitions(numPartitions, operation)
  // Shuffle ids are taken now, so that every job over this dataset reuses the same shuffles.
  const shuffleIds = datasets.map(() => runtime.newShuffleId())
  const tokens = datasets.map(newToken)
  return Effect.gen(function*() {
    const lineages = yield* Effect.forEach(datasets, (dataset) => dataset.lineage)
    const partitionings = yield* Effect.forEach(datasets, (dataset) => dataset.hashPartitions)
    const n = numPartitions ?? defaultPartitions(
      lineages.map((lineage, i) => ({ partitions: lineage.plans.length, hashPartitions: partitionings[i] })),
      runtime.defaultPartitions()
    )
    const parts: Array<Lineage.Lineage> = []
    const inputs = lineages.map((lineage, i) => {
      if (partitionings[i] === n) {
        parts.push(lineage)
        return (reduceId: number): CoGroupInput => ({ _tag: "InPlace", plan: lineage.plans[reduceId]! })
      }
      const { lineage: shuffledLineage, shuffle } = Lineage.shuffled(lineage, {
        shuffleId: shuffleIds[i]!,
        token: tokens[i]!,
        numReduces: n,
        partitioner: { _tag: "Hash" },
        name: operation
      })
      parts.push(shuffledLineage)
      return (): CoGroupInput => ({ _tag: "Shuffled", shuffle })
    })
    const plans = Array.from({ length: n }, (_, reduceId): PlanNode => ({
      _tag: "CoGroup",
      inputs: inputs.map((input) => input(reduceId)),
      reduceId
    }))
    return Lineage.combine(parts, plans)
  })
}
