// A dataset's lineage as its jobs see it: the dataset recorded in it (for its stage's drawing and the Storage
// tab) and, when it is persisted, each partition's plan read from (or stored on) the executor that computed it.
import type { Dataset, StorageLevel } from "../Dataset.js"
import * as Lineage from "../Lineage.js"

const callSiteOf = <A>(dataset: Dataset<A>) => {
  const { long, short } = dataset.creation()
  return short === undefined ? {} : { callSite: short, callSiteLong: long }
}

export const recorded = <A>(
  dataset: Dataset<A>,
  computed: Lineage.Lineage,
  level: StorageLevel | undefined
): Lineage.Lineage => {
  const lineage = Lineage.withDataset(computed, {
    id: dataset.id,
    name: dataset.name ?? dataset.origin.kind,
    operation: dataset.origin.operation,
    ...callSiteOf(dataset),
    parentIds: [...dataset.origin.narrow, ...dataset.origin.shuffled].map((parent) => parent.id),
    numPartitions: computed.plans.length,
    ...(level === undefined ? {} : { storageLevel: level })
  })
  if (level === undefined) return lineage
  return Lineage.withPlans(
    lineage,
    lineage.plans.map((child, partition) => ({
      _tag: "Cached" as const,
      rddId: dataset.id,
      partition,
      level,
      child
    }))
  )
}
