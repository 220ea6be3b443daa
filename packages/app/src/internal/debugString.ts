// `toDebugString`'s lines: Spark's RDD.toDebugString, line for line — a stage's datasets under each other behind
// its bar, a shuffle's map side one level in after `+-`.
import * as Effect from "effect/Effect"
import type { Dataset, DatasetError } from "../Dataset.js"

// `name Kind[id] at map at logs.ts:40 [storage]`, as Spark prints an RDD: its name when it has one, and where it was
// made (the operation alone when no app code made it).
const describe = (dataset: Dataset<unknown>) =>
  `${dataset.name === undefined ? "" : `${dataset.name} `}${dataset.origin.kind}[${dataset.id}] at ` +
  `${dataset.creation().short ?? dataset.origin.operation} [${dataset.storageLevel ?? ""}]`

export const firstLines = (dataset: Dataset<unknown>): Effect.Effect<Array<string>, DatasetError> =>
  Effect.gen(function*() {
    const partitions = `(${yield* dataset.numPartitions})`
    const offset = Math.floor((partitions.length - 1) / 2)
    const nextPrefix = `${" ".repeat(offset)}|${" ".repeat(partitions.length - offset)}`
    return [`${partitions} ${describe(dataset)}`, ...(yield* childLines(dataset, nextPrefix))]
  })

const shuffleLines = (
  dataset: Dataset<unknown>,
  prefix: string,
  last: boolean
): Effect.Effect<Array<string>, DatasetError> =>
  Effect.gen(function*() {
    const partitions = `(${yield* dataset.numPartitions})`
    const offset = Math.floor((partitions.length - 1) / 2)
    const thisPrefix = prefix.replace(/\|\s+$/, "")
    const nextPrefix = `${thisPrefix}${last ? "  " : "| "}${" ".repeat(offset)}|${
      " ".repeat(partitions.length - offset)
    }`
    return [`${thisPrefix}+-${partitions} ${describe(dataset)}`, ...(yield* childLines(dataset, nextPrefix))]
  })

const childLines = (dataset: Dataset<unknown>, prefix: string): Effect.Effect<Array<string>, DatasetError> => {
  const parents = [
    ...dataset.origin.narrow.map((parent) => [parent, false] as const),
    ...dataset.origin.shuffled.map((parent) => [parent, true] as const)
  ]
  return Effect.map(
    Effect.forEach(parents, ([parent, shuffle], i) =>
      shuffle
        ? shuffleLines(parent, prefix, i === parents.length - 1)
        : Effect.map(childLines(parent, prefix), (lines) => [`${prefix}${describe(parent)}`, ...lines])),
    (lines) => lines.flat()
  )
}
