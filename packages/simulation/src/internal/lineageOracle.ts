// The oracle of the random programs (`Lineages`): what it knows of a dataset's records (`Model`), the models of
// transformations evaluated on plain arrays, and the checks of what a job gave against them.
import { Keys } from "@kindling/data"

// What records are: numbers; [key, number] pairs; [key, anything] pairs; anything (arrays of the above).
export type Kind = "num" | "pair" | "keyed" | "any"
export type Value = unknown

/**
 * What the oracle knows of a dataset's records.
 *
 * @since 0.1.0
 * @category models
 */
export type Model =
  /** Every partition's records, in order. */
  | { readonly _tag: "Exact"; readonly partitions: ReadonlyArray<ReadonlyArray<Value>> }
  /** The records in order, not where partitions start. */
  | { readonly _tag: "Ordered"; readonly values: ReadonlyArray<Value>; readonly count: number }
  /** Every partition's records, not their order. */
  | { readonly _tag: "Partitioned"; readonly partitions: ReadonlyArray<ReadonlyArray<Value>> }
  /** The records, not their order nor their partitions. */
  | { readonly _tag: "Bag"; readonly values: ReadonlyArray<Value>; readonly count: number }
  /** The records, sorted by key (the record's first element, or the record), equal keys in no known order. */
  | {
    readonly _tag: "Sorted"
    readonly values: ReadonlyArray<Value>
    readonly ascending: boolean
    readonly pairs: boolean
    readonly count: number
  }
  /** Computing it throws: a function of its lineage throws on every attempt of a record there. */
  | { readonly _tag: "Fails"; readonly count: number }

/**
 * What a job must give.
 *
 * @since 0.1.0
 * @category models
 */
export type Expected =
  /** A value, as `check` judges it (undefined: right; else what is wrong). */
  | { readonly _tag: "Value"; readonly check: (actual: unknown) => string | undefined }
  /** `JobFailed` with an injected fault. */
  | { readonly _tag: "Fails" }
  /** `EmptyDataset` (`reduce` or `first` of nothing). */
  | { readonly _tag: "Empty" }

// One text per value, for comparing and sorting records of any shape (`undefined` in an array reads as null, as it
// does in JSON).
export const canon = (value: Value): string => JSON.stringify(value) ?? "undefined"

export const byCanon = (a: Value, b: Value) => {
  const x = canon(a)
  const y = canon(b)
  return x < y ? -1 : x > y ? 1 : 0
}

export const sameBag = (actual: ReadonlyArray<Value>, expected: ReadonlyArray<Value>): boolean => {
  if (actual.length !== expected.length) return false
  const a = actual.map(canon).sort()
  const b = expected.map(canon).sort()
  return a.every((x, i) => x === b[i])
}

export const short = (value: unknown) => {
  const text = canon(value)
  return text.length > 300 ? `${text.slice(0, 300)}…` : text
}

export const isFails = (model: Model): model is Extract<Model, { _tag: "Fails" }> => model._tag === "Fails"

export const valuesOf = (model: Model): ReadonlyArray<Value> => {
  switch (model._tag) {
    case "Exact":
    case "Partitioned":
      return model.partitions.flat()
    case "Fails":
      return []
    default:
      return model.values
  }
}

export const partitionCount = (model: Model): number =>
  model._tag === "Exact" || model._tag === "Partitioned" ? model.partitions.length : model.count

// Thrown by an oracle function where the job's function throws on every attempt.
export class Throws extends Error {}

// The model of an element-wise transformation (`f` gives a record's records); `keepsOrder` says whether a sorted
// dataset stays sorted. A record `f` throws on makes the dataset fail.
export const elementwise = (model: Model, f: (value: Value) => ReadonlyArray<Value>, keepsOrder: boolean): Model => {
  try {
    switch (model._tag) {
      case "Exact":
      case "Partitioned":
        return { _tag: model._tag, partitions: model.partitions.map((part) => part.flatMap(f)) }
      case "Ordered":
      case "Bag":
        return { ...model, values: model.values.flatMap(f) }
      case "Sorted":
        return keepsOrder
          ? { ...model, values: model.values.flatMap(f) }
          : { _tag: "Bag", values: model.values.flatMap(f), count: model.count }
      case "Fails":
        return model
    }
  } catch (error) {
    if (error instanceof Throws) return { _tag: "Fails", count: partitionCount(model) }
    throw error
  }
}

// Records hash-partitioned by key into `n` partitions.
export const hashed = (values: ReadonlyArray<Value>, n: number, key: (value: Value) => Keys.Key): Model => {
  const partitions: Array<Array<Value>> = Array.from({ length: n }, () => [])
  for (const value of values) partitions[Keys.partitionOf(key(value), n)]!.push(value)
  return { _tag: "Partitioned", partitions }
}

export const firstOf = (value: Value) => (value as readonly [Keys.Key, unknown])[0]

// The values of each key, keys in the order they first appear.
export const grouped = (
  pairs: ReadonlyArray<Value>
): Map<string, { readonly key: Value; readonly values: Array<Value> }> => {
  const groups = new Map<string, { readonly key: Value; readonly values: Array<Value> }>()
  for (const pair of pairs) {
    const [key, value] = pair as readonly [Value, Value]
    const id = canon(key)
    const group = groups.get(id) ?? { key, values: [] }
    group.values.push(value)
    groups.set(id, group)
  }
  return groups
}

// Spark's slicing of a collection: partition i of n holds [⌊i·len/n⌋, ⌊(i+1)·len/n⌋).
export const sliced = <A>(items: ReadonlyArray<A>, n: number): Array<Array<A>> =>
  Array.from(
    { length: n },
    (_, i) => items.slice(Math.floor((i * items.length) / n), Math.floor(((i + 1) * items.length) / n))
  )

// How many splits Hadoop's rules (Kindling's textFile) make of one file of `size` bytes.
export const textSplits = (size: number, minPartitions: number): number => {
  const splitSize = Math.max(1, Math.min(Math.floor(size / minPartitions), 32 * 1024 * 1024))
  let splits = 0
  let left = size
  while (left / splitSize > 1.1) {
    splits++
    left -= splitSize
  }
  return left > 0 || size === 0 ? splits + 1 : splits
}

// Records as the model knows them: in order, per partition, sorted, or just which.
export const records = (model: Model, actual: ReadonlyArray<Value>): string | undefined => {
  const wrong = `got ${short(actual)}, expected ${short(valuesOf(model))} (${model._tag})`
  switch (model._tag) {
    case "Exact":
    case "Ordered":
      return canon(actual) === canon(valuesOf(model)) ? undefined : wrong
    case "Partitioned": {
      // Partition by partition: the records of each, in partition order.
      let at = 0
      for (const [i, part] of model.partitions.entries()) {
        if (!sameBag(actual.slice(at, at + part.length), part)) return `partition ${i}: ${wrong}`
        at += part.length
      }
      return at === actual.length ? undefined : wrong
    }
    case "Bag":
      return sameBag(actual, model.values) ? undefined : wrong
    case "Sorted": {
      if (!sameBag(actual, model.values)) return wrong
      const key = (x: Value) => (model.pairs ? firstOf(x) : x) as number
      for (let i = 1; i < actual.length; i++) {
        const order = key(actual[i - 1]) - key(actual[i]!)
        if (model.ascending ? order > 0 : order < 0) return `out of order at ${i}: ${wrong}`
      }
      return undefined
    }
    case "Fails":
      return "the oracle expected a failure"
  }
}

// The first n records, as much as the model says which they are.
export const firstRecords = (model: Model, n: number, actual: ReadonlyArray<Value>): string | undefined => {
  const all = valuesOf(model)
  const expected = Math.min(n, all.length)
  if (actual.length !== expected) return `${actual.length} records, expected ${expected}`
  switch (model._tag) {
    case "Exact":
    case "Ordered":
      return canon(actual) === canon(all.slice(0, n))
        ? undefined
        : `got ${short(actual)}, expected ${short(all.slice(0, n))}`
    case "Sorted": {
      const key = (x: Value) => canon(model.pairs ? firstOf(x) : x)
      const keys = actual.map(key)
      return canon(keys) === canon(all.slice(0, n).map(key)) ? undefined : `keys ${short(keys)} are not the first`
    }
    default: {
      const left = new Map<string, number>()
      for (const x of all) left.set(canon(x), (left.get(canon(x)) ?? 0) + 1)
      for (const x of actual) {
        const count = left.get(canon(x)) ?? 0
        if (count === 0) return `${short(x)} is not a record of the dataset`
        left.set(canon(x), count - 1)
      }
      return undefined
    }
  }
}
