/**
 * Random programs over the whole dataset API, each job with what it must give. A program is a pool of datasets
 * grown from sources (`parallelize`, `range`, `textFile`) by random transformations — narrow ones, `union`,
 * `zipWithIndex`, `glom`, `mapPartitionsWithIndex`, `cartesian`, the key-based shuffles (`reduceByKey`,
 * `foldByKey`, `aggregateByKey`, `combineByKey`, `groupByKey`, `partitionBy`), `sortByKey` and `sortBy`, the
 * joins and `cogroup`, `distinct`, `intersection`, `subtract`, `repartition` and `coalesce` — with random
 * partition counts, some persisted at a random storage level, some reading a broadcast variable, and some whose
 * function throws on one record (on a task's first attempt only, or on every attempt); then jobs — every kind of
 * action, an accumulator counted by `foreach`, output saved and read back — a few of them run at once on the
 * same shuffled data, a few cancelled by a timeout.
 *
 * The oracle evaluates the same lineage on plain arrays, with the very functions the jobs ship, and knows as much
 * as Spark promises: a partition's records and their order after narrow transformations, each partition's
 * records (not their order) after a shuffle by key (hash partitioning is by `Keys.partitionOf`), the global
 * order after a sort (not the order of equal keys), and the records alone after `repartition`. Answers are
 * compared against that and no more. A dataset whose function throws on every attempt of a record it holds must
 * make every job that reads all of it fail with the function's error.
 *
 * @since 0.1.0
 */
import type { Dataset, KindlingContext, StorageLevel } from "@kindling/driver"
import { Keys } from "@kindling/executor"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"

// What records are: numbers; [key, number] pairs; [key, anything] pairs; anything (arrays of the above).
type Kind = "num" | "pair" | "keyed" | "any"
type Value = unknown

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
 * The text an injected fault's error carries: a job may fail with it, and with nothing unexpected.
 *
 * @since 0.1.0
 */
export const injected = "injected fault"

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

/**
 * What a job runs with: the app's context, and the datasets of the program built so far.
 *
 * @since 0.1.0
 * @category models
 */
export interface Session {
  readonly kc: KindlingContext
  readonly datasets: Map<number, Dataset<any>>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Job {
  /** The action and the lineage it runs on, for reports. */
  readonly label: string
  readonly run: (session: Session) => Effect.Effect<unknown, unknown>
  readonly expected: Expected
  /** Interrupted after this many milliseconds, if given (its result is then not known). */
  readonly cancelAfterMillis: number | undefined
  /** Whether it is run at once with the job before it. */
  readonly withPrevious: boolean
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Program {
  /** Text files the program reads, to be written before it runs. */
  readonly inputs: ReadonlyArray<{ readonly path: string; readonly text: string }>
  readonly jobs: ReadonlyArray<Job>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Where input files and saved output go (an absolute directory, made by the program's runner). */
  readonly dir: string
  readonly jobs: number
  /** The chance that a new dataset's function throws on a record: once (its task's first attempt) or always. */
  readonly faultRate?: number
  /** The chance that a job is cancelled, after up to this many milliseconds. */
  readonly cancelRate?: number
  readonly cancelWithinMillis?: number
  /** Whether a failed task is tried again (`kindling.task.maxFailures` above 1): if not, a fault once is fatal. */
  readonly retries: boolean
}

// ---- the oracle's values ----------------------------------------------------------------------------------------

// One text per value, for comparing and sorting records of any shape (`undefined` in an array reads as null, as it
// does in JSON).
const canon = (value: Value): string => JSON.stringify(value) ?? "undefined"

const byCanon = (a: Value, b: Value) => {
  const x = canon(a)
  const y = canon(b)
  return x < y ? -1 : x > y ? 1 : 0
}

const sameBag = (actual: ReadonlyArray<Value>, expected: ReadonlyArray<Value>): boolean => {
  if (actual.length !== expected.length) return false
  const a = actual.map(canon).sort()
  const b = expected.map(canon).sort()
  return a.every((x, i) => x === b[i])
}

const short = (value: unknown) => {
  const text = canon(value)
  return text.length > 300 ? `${text.slice(0, 300)}…` : text
}

const isFails = (model: Model): model is Extract<Model, { _tag: "Fails" }> => model._tag === "Fails"

const valuesOf = (model: Model): ReadonlyArray<Value> => {
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

const partitionCount = (model: Model): number =>
  model._tag === "Exact" || model._tag === "Partitioned" ? model.partitions.length : model.count

// Thrown by an oracle function where the job's function throws on every attempt.
class Throws extends Error {}

// The model of an element-wise transformation (`f` gives a record's records); `keepsOrder` says whether a sorted
// dataset stays sorted. A record `f` throws on makes the dataset fail.
const elementwise = (model: Model, f: (value: Value) => ReadonlyArray<Value>, keepsOrder: boolean): Model => {
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
const hashed = (values: ReadonlyArray<Value>, n: number, key: (value: Value) => Keys.Key): Model => {
  const partitions: Array<Array<Value>> = Array.from({ length: n }, () => [])
  for (const value of values) partitions[Keys.partitionOf(key(value), n)]!.push(value)
  return { _tag: "Partitioned", partitions }
}

const firstOf = (value: Value) => (value as readonly [Keys.Key, unknown])[0]

// The values of each key, keys in the order they first appear.
const grouped = (pairs: ReadonlyArray<Value>): Map<string, { readonly key: Value; readonly values: Array<Value> }> => {
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
const sliced = <A>(items: ReadonlyArray<A>, n: number): Array<Array<A>> =>
  Array.from(
    { length: n },
    (_, i) => items.slice(Math.floor((i * items.length) / n), Math.floor(((i + 1) * items.length) / n))
  )

// How many splits Hadoop's rules (Kindling's textFile) make of one file of `size` bytes.
const textSplits = (size: number, minPartitions: number): number => {
  const splitSize = Math.max(1, Math.min(Math.floor(size / minPartitions), 32 * 1024 * 1024))
  let splits = 0
  let left = size
  while (left / splitSize > 1.1) {
    splits++
    left -= splitSize
  }
  return left > 0 || size === 0 ? splits + 1 : splits
}

// ---- the functions jobs ship (self-contained: they travel as source text) ----------------------------------------

const fn = {
  affine: (x: number, env: { a: number; b: number }) => x * env.a + env.b,
  notResidue: (x: number, env: { m: number; r: number }) => ((x % env.m) + env.m) % env.m !== env.r,
  evensTwice: (x: number, env: { d: number }) => (x % 2 === 0 ? [x, x + env.d] : []),
  keyOf: (x: number, env: { k: number }) => ((x % env.k) + env.k) % env.k,
  toPair: (x: number, env: { k: number; a: number }) => [((x % env.k) + env.k) % env.k, x * env.a],
  plusIndex: (partition: number, records: Iterable<number>, env: { k: number }) =>
    Array.from(records, (x) => x + partition * env.k),
  lookedUp: (x: number, env: { table: { readonly value: ReadonlyArray<number> } }) =>
    x + env.table.value[((x % env.table.value.length) + env.table.value.length) % env.table.value.length]!,
  faulty: (x: unknown, env: { bad: string; always: boolean; task: { readonly attemptNumber: number } }) => {
    if (JSON.stringify(x) === env.bad && (env.always || env.task.attemptNumber === 0)) {
      throw new Error(`injected fault: record ${env.bad}`)
    }
    return x
  },
  canonical: (records: ReadonlyArray<unknown>) =>
    [...records].sort((a, b) => {
      const x = JSON.stringify(a)
      const y = JSON.stringify(b)
      return x < y ? -1 : x > y ? 1 : 0
    }),
  ascending: (values: Array<any>) => [...values].sort((a, b) => a - b),
  bothSorted: ([left, right]: [Array<any>, Array<any>]) => [
    [...left].sort((a, b) => a - b),
    [...right].sort((a, b) => a - b)
  ],
  digest: (value: unknown) => {
    const text = JSON.stringify(value) ?? "undefined"
    let hash = 0
    for (let i = 0; i < text.length; i++) hash = (hash * 31 + text.charCodeAt(i)) | 0
    return hash % 1000
  },
  shift: (v: number, env: { d: number }) => v + env.d,
  mirrored: (v: number) => [v, -v],
  plus: (a: number, b: number) => a + b,
  sumCount: ([s, c]: [number, number], v: number): [number, number] => [s + v, c + 1],
  mergeSumCount: ([s1, c1]: [number, number], [s2, c2]: [number, number]): [number, number] => [s1 + s2, c1 + c2],
  single: (v: number) => [v],
  appended: (list: Array<number>, v: number) => [...list, v],
  concatenated: (a: Array<number>, b: Array<number>) => [...a, ...b],
  pairSum: ([k, v]: [number, number]) => k * 1000 + v,
  identity: (x: number) => x
}

// ---- the program's datasets ---------------------------------------------------------------------------------------

interface Node {
  readonly id: number
  readonly label: string
  readonly kind: Kind
  readonly model: Model
  /** As Kindling marks a dataset whose pairs come out of a shuffle by key. */
  readonly hashPartitioned: boolean
  readonly build: (session: Session) => Dataset<any>
  /** Set once a node persists it (a dataset is persisted at one level). */
  persisted: boolean
}

const short60 = (text: string) => (text.length > 60 ? `${text.slice(0, 57)}…` : text)

/**
 * A program of `options.jobs` jobs, drawn with `random`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const program = (random: () => number, options: Options): Program => {
  const between = (min: number, max: number) => min + Math.floor(random() * (max - min + 1))
  const chance = (p: number) => random() < p
  const oneOf = <A>(items: ReadonlyArray<A>): A => items[Math.floor(random() * items.length)]!
  const maybe = (n: number) => (chance(0.5) ? n : undefined)
  const nodes: Array<Node> = []
  const inputs: Array<{ readonly path: string; readonly text: string }> = []
  const faultRate = options.faultRate ?? 0.1

  const add = (node: Omit<Node, "id" | "persisted">): Node => {
    const made = { ...node, id: nodes.length, persisted: false }
    nodes.push(made)
    return made
  }
  const get = (session: Session, node: Node): Dataset<any> => {
    const built = session.datasets.get(node.id)
    if (built !== undefined) return built
    const dataset = node.build(session)
    session.datasets.set(node.id, dataset)
    return dataset
  }
  const derived = (
    parent: Node,
    label: string,
    kind: Kind,
    model: Model,
    build: (dataset: Dataset<any>, session: Session) => Dataset<any>,
    hashPartitioned = false
  ) =>
    add({
      label: `${label}(${short60(parent.label)})`,
      kind,
      model,
      hashPartitioned,
      build: (session) => build(get(session, parent), session)
    })
  const size = (model: Model) => valuesOf(model).length

  // ---- sources
  const sources = {
    parallelize: () => {
      const items = Array.from({ length: between(0, 60) }, () => between(-40, 40))
      const n = between(1, 6)
      return add({
        label: `parallelize(${items.length} in ${n})`,
        kind: "num",
        model: { _tag: "Exact", partitions: sliced(items, n) },
        hashPartitioned: false,
        build: (session) => session.kc.parallelize(items, n)
      })
    },
    range: () => {
      const step = oneOf([1, 2, 3, -1, -2])
      const start = between(-30, 30)
      const end = start + step * between(0, 50)
      const n = between(1, 5)
      const items: Array<number> = []
      for (let x = start; step > 0 ? x < end : x > end; x += step) items.push(x)
      return add({
        label: `range(${start}, ${end}, ${step}, ${n})`,
        kind: "num",
        model: { _tag: "Exact", partitions: sliced(items, n) },
        hashPartitioned: false,
        build: (session) => session.kc.range(start, end, step, n)
      })
    },
    textFile: () => {
      const items = Array.from({ length: between(0, 80) }, () => between(-99, 99))
      const newline = chance(0.2) ? "\r\n" : "\n"
      const text = items.join(newline) + (items.length > 0 && chance(0.7) ? newline : "")
      const path = `${options.dir}/input-${inputs.length}.txt`
      inputs.push({ path, text })
      const minPartitions = between(1, 5)
      const count = textSplits(new TextEncoder().encode(text).length, minPartitions)
      return add({
        label: `textFile(${items.length} lines, ${minPartitions})`,
        kind: "num",
        model: { _tag: "Ordered", values: items, count },
        hashPartitioned: false,
        build: (session) => session.kc.textFile(path, minPartitions).map((line) => Number(line))
      })
    }
  }

  // ---- transformations: each gives a new node, or undefined when it does not apply to its input
  type Step = (node: Node) => Node | undefined
  const onNums = (step: Step): Step => (node) => node.kind === "num" ? step(node) : undefined
  const onPairs = (step: Step): Step => (node) => node.kind === "pair" ? step(node) : undefined
  const withKeys = (step: Step): Step => (node) =>
    node.kind === "pair" || node.kind === "keyed" ? step(node) : undefined
  const asKeys = (node: Node) => node.kind === "num" || node.kind === "pair"
  const otherOf = (node: Node, kind: Kind) => {
    const others = nodes.filter((other) => other.kind === kind && other !== node)
    return others.length === 0 ? undefined : oneOf(others)
  }
  const partitions = (model: Model) => Math.max(1, partitionCount(model))

  const steps: ReadonlyArray<Step> = [
    onNums((node) => {
      const env = { a: oneOf([1, 2, 3, -1]), b: between(-5, 5) }
      return derived(
        node,
        "map",
        "num",
        elementwise(node.model, (x) => [fn.affine(x as number, env)], false),
        (ds) => ds.map(fn.affine, env)
      )
    }),
    onNums((node) => {
      const env = { m: between(2, 5), r: between(0, 1) }
      return derived(
        node,
        "filter",
        "num",
        elementwise(node.model, (x) => (fn.notResidue(x as number, env) ? [x] : []), true),
        (ds) => ds.filter(fn.notResidue, env),
        node.hashPartitioned
      )
    }),
    onNums((node) => {
      const env = { d: between(1, 3) }
      return derived(
        node,
        "flatMap",
        "num",
        elementwise(node.model, (x) => fn.evensTwice(x as number, env), false),
        (ds) => ds.flatMap(fn.evensTwice, env)
      )
    }),
    onNums((node) => {
      const env = { k: between(2, 6) }
      return derived(
        node,
        "keyBy",
        "pair",
        elementwise(node.model, (x) => [[fn.keyOf(x as number, env), x]], false),
        (ds) => ds.keyBy(fn.keyOf, env)
      )
    }),
    onNums((node) => {
      const env = { k: between(2, 6), a: oneOf([1, 2, -1]) }
      return derived(
        node,
        "map",
        "pair",
        elementwise(node.model, (x) => [fn.toPair(x as number, env)], false),
        (ds) => ds.map(fn.toPair, env)
      )
    }),
    onNums((node) => {
      const table = Array.from({ length: between(1, 8) }, () => between(-10, 10))
      const model = elementwise(node.model, (x) => [fn.lookedUp(x as number, { table: { value: table } })], false)
      return derived(node, "map(broadcast)", "num", model, (ds, session) => {
        const broadcast = session.kc.broadcast(table)
        return ds.map(fn.lookedUp, { table: broadcast })
      })
    }),
    (node) => {
      // mapPartitionsWithIndex and glom need to know what each partition holds.
      if (node.kind !== "num" || (node.model._tag !== "Exact" && node.model._tag !== "Partitioned")) return undefined
      const env = { k: between(1, 100) }
      const model = {
        _tag: node.model._tag,
        partitions: node.model.partitions.map((part, i) => fn.plusIndex(i, part as Array<number>, env))
      }
      return derived(node, "mapPartitionsWithIndex", "num", model, (ds) => ds.mapPartitionsWithIndex(fn.plusIndex, env))
    },
    (node) => {
      if (node.model._tag !== "Exact" && node.model._tag !== "Partitioned") return undefined
      const model = { _tag: node.model._tag, partitions: node.model.partitions.map((part) => [fn.canonical(part)]) }
      return derived(node, "glom", "any", model, (ds) => ds.glom().map(fn.canonical))
    },
    (node) => {
      if (node.model._tag !== "Exact" && node.model._tag !== "Ordered") return undefined
      let index = 0
      const model = elementwise(node.model, (x) => [[x, index++]], false)
      return derived(node, "zipWithIndex", node.kind === "num" ? "pair" : "any", model, (ds) => ds.zipWithIndex())
    },
    (node) => {
      const other = nodes.filter((candidate) => candidate.kind === node.kind && candidate !== node)
      if (other.length === 0) return undefined
      const right = oneOf(other)
      const a = node.model
      const b = right.model
      let model: Model
      if (isFails(a) || isFails(b)) model = { _tag: "Fails", count: partitionCount(a) + partitionCount(b) }
      else if ((a._tag === "Exact" || a._tag === "Partitioned") && (b._tag === "Exact" || b._tag === "Partitioned")) {
        model = {
          _tag: a._tag === "Exact" && b._tag === "Exact" ? "Exact" : "Partitioned",
          partitions: [...a.partitions, ...b.partitions]
        }
      } else if ((a._tag === "Exact" || a._tag === "Ordered") && (b._tag === "Exact" || b._tag === "Ordered")) {
        model = {
          _tag: "Ordered",
          values: [...valuesOf(a), ...valuesOf(b)],
          count: partitionCount(a) + partitionCount(b)
        }
      } else {
        model = { _tag: "Bag", values: [...valuesOf(a), ...valuesOf(b)], count: partitionCount(a) + partitionCount(b) }
      }
      return add({
        label: `union(${short60(node.label)}, ${short60(right.label)})`,
        kind: node.kind,
        model,
        hashPartitioned: false,
        build: (session) => get(session, node).union(get(session, right))
      })
    },
    (node) => {
      const n = between(1, 6)
      const model: Model = isFails(node.model)
        ? { _tag: "Fails", count: n }
        : { _tag: "Bag", values: valuesOf(node.model), count: n }
      return chance(0.5)
        ? derived(node, `repartition(${n})`, node.kind, model, (ds) => ds.repartition(n))
        : derived(node, `coalesce(${n}, true)`, node.kind, model, (ds) => ds.coalesce(n, true))
    },
    (node) => {
      const n = between(1, 4)
      const parents = partitionCount(node.model)
      const merge = <A>(parts: ReadonlyArray<ReadonlyArray<A>>) =>
        Array.from(
          { length: n },
          (_, i) => parts.slice(Math.floor((i * parts.length) / n), Math.floor(((i + 1) * parts.length) / n)).flat()
        )
      const model: Model = parents <= n
        ? node.model
        : node.model._tag === "Exact" || node.model._tag === "Partitioned"
        ? { _tag: node.model._tag, partitions: merge(node.model.partitions) }
        : node.model._tag === "Sorted"
        ? { _tag: "Bag", values: node.model.values, count: n }
        : { ...node.model, count: n }
      return derived(node, `coalesce(${n})`, node.kind, model, (ds) => ds.coalesce(n))
    },
    (node) => {
      if (!asKeys(node)) return undefined
      const n = maybe(between(1, 5))
      const count = n ?? partitions(node.model)
      const model: Model = isFails(node.model)
        ? { _tag: "Fails", count }
        : hashed([...new Map(valuesOf(node.model).map((x) => [canon(x), x])).values()], count, (x) => x as Keys.Key)
      return derived(node, "distinct", node.kind, model, (ds) => ds.distinct(n))
    },
    onNums((node) => {
      const ascending = chance(0.7)
      const n = maybe(between(1, 4))
      const model: Model = isFails(node.model) ? { _tag: "Fails", count: n ?? partitions(node.model) } : {
        _tag: "Sorted",
        values: [...valuesOf(node.model)].sort((a, b) =>
          ascending ? (a as number) - (b as number) : (b as number) - (a as number)
        ),
        ascending,
        pairs: false,
        count: n ?? partitions(node.model)
      }
      return derived(
        node,
        `sortBy(${ascending ? "asc" : "desc"})`,
        "num",
        model,
        (ds) => ds.sortBy(fn.identity, ascending, n)
      )
    }),
    (node) => {
      // Both sides must be small: the pairs are all of them.
      if (node.kind !== "num" || size(node.model) > 20) return undefined
      const others = nodes.filter((other) => other.kind === "num" && size(other.model) <= 20)
      const right = oneOf(others)
      const a = node.model
      const b = right.model
      const product = (left: ReadonlyArray<Value>, others: ReadonlyArray<Value>) =>
        left.flatMap((x) => others.map((y) => [x, y]))
      let model: Model
      // A right side is computed only for left partitions that have records.
      if (isFails(a) || (isFails(b) && size(a) > 0)) {
        model = { _tag: "Fails", count: partitionCount(a) * partitionCount(b) }
      } else if (isFails(b)) {
        model = { _tag: "Exact", partitions: Array.from({ length: partitionCount(a) * partitionCount(b) }, () => []) }
      } else if ((a._tag === "Exact" || a._tag === "Partitioned") && (b._tag === "Exact" || b._tag === "Partitioned")) {
        model = {
          _tag: a._tag === "Exact" && b._tag === "Exact" ? "Exact" : "Partitioned",
          partitions: a.partitions.flatMap((left) => b.partitions.map((others) => product(left, others)))
        }
      } else {
        model = { _tag: "Bag", values: product(valuesOf(a), valuesOf(b)), count: partitionCount(a) * partitionCount(b) }
      }
      return add({
        label: `cartesian(${short60(node.label)}, ${short60(right.label)})`,
        kind: "pair",
        model,
        hashPartitioned: false,
        build: (session) => get(session, node).cartesian(get(session, right))
      })
    },
    (node) => {
      if (!asKeys(node)) return undefined
      const other = otherOf(node, node.kind)
      if (other === undefined) return undefined
      const n = maybe(between(1, 5))
      const count = n ?? Math.max(1, partitionCount(node.model), partitionCount(other.model))
      const intersect = chance(0.5)
      let model: Model
      if (isFails(node.model) || isFails(other.model)) model = { _tag: "Fails", count }
      else {
        const theirs = new Set(valuesOf(other.model).map(canon))
        const result = intersect
          ? [...new Map(valuesOf(node.model).filter((x) => theirs.has(canon(x))).map((x) => [canon(x), x])).values()]
          : valuesOf(node.model).filter((x) => !theirs.has(canon(x)))
        model = hashed(result, count, (x) => x as Keys.Key)
      }
      return add({
        label: `${intersect ? "intersection" : "subtract"}(${short60(node.label)}, ${short60(other.label)})`,
        kind: node.kind,
        model,
        hashPartitioned: false,
        build: (session) =>
          intersect
            ? get(session, node).intersection(get(session, other), n)
            : get(session, node).subtract(get(session, other), n)
      })
    },
    withKeys((node) => {
      const model = elementwise(node.model, (x) => [(x as readonly [number, unknown])[0]], false)
      return derived(node, "keys", "num", model, (ds) => ds.keys())
    }),
    onPairs((node) => {
      const model = elementwise(node.model, (x) => [(x as readonly [number, number])[1]], false)
      return derived(node, "values", "num", model, (ds) => ds.values())
    }),
    onPairs((node) => {
      const model = elementwise(node.model, (x) => [fn.pairSum(x as [number, number])], false)
      return derived(node, "map", "num", model, (ds) => ds.map(fn.pairSum))
    }),
    onPairs((node) => {
      const env = { d: between(-3, 3) }
      const model = elementwise(node.model, (x) => {
        const [k, v] = x as [number, number]
        return [[k, fn.shift(v, env)]]
      }, true)
      return derived(node, "mapValues", "pair", model, (ds) => ds.mapValues(fn.shift, env), node.hashPartitioned)
    }),
    onPairs((node) => {
      const model = elementwise(node.model, (x) => {
        const [k, v] = x as [number, number]
        return fn.mirrored(v).map((w) => [k, w])
      }, true)
      return derived(node, "flatMapValues", "pair", model, (ds) => ds.flatMapValues(fn.mirrored), node.hashPartitioned)
    }),
    (node) => {
      // Structured values back to numbers, keys kept.
      if (node.kind !== "keyed") return undefined
      const model = elementwise(node.model, (x) => {
        const [k, v] = x as [number, unknown]
        return [[k, fn.digest(v)]]
      }, true)
      return derived(node, "mapValues(digest)", "pair", model, (ds) => ds.mapValues(fn.digest), node.hashPartitioned)
    },
    onPairs((node) => {
      const n = maybe(between(1, 5))
      const count = n ?? partitions(node.model)
      const aggregation = oneOf(["reduceByKey", "foldByKey", "aggregateByKey", "combineByKey", "groupByKey"] as const)
      const reduce = (values: Array<Value>): Value => {
        const numbers = values as Array<number>
        switch (aggregation) {
          case "reduceByKey":
          case "foldByKey":
            return numbers.reduce(fn.plus, 0)
          case "aggregateByKey":
            return numbers.reduce(
              (acc, v) => fn.sumCount(acc as [number, number], v) as [number, number],
              [0, 0] as [number, number]
            )
          default:
            return fn.ascending(numbers)
        }
      }
      const model: Model = isFails(node.model) ? { _tag: "Fails", count } : hashed(
        [...grouped(valuesOf(node.model)).values()].map(({ key, values }) => [key, reduce(values)]),
        count,
        firstOf
      )
      const kind: Kind = aggregation === "reduceByKey" || aggregation === "foldByKey" ? "pair" : "keyed"
      return derived(node, aggregation, kind, model, (ds) => {
        switch (aggregation) {
          case "reduceByKey":
            return ds.reduceByKey(fn.plus, undefined, n)
          case "foldByKey":
            return ds.foldByKey(0, fn.plus, undefined, n)
          case "aggregateByKey":
            return ds.aggregateByKey([0, 0], fn.sumCount, fn.mergeSumCount, undefined, n)
          case "combineByKey":
            return ds.combineByKey(fn.single, fn.appended, fn.concatenated, undefined, n).mapValues(fn.ascending)
          case "groupByKey":
            return ds.groupByKey(n).mapValues(fn.ascending)
        }
      }, true)
    }),
    onPairs((node) => {
      const n = between(1, 5)
      const model: Model = isFails(node.model) ? { _tag: "Fails", count: n } : hashed(valuesOf(node.model), n, firstOf)
      return derived(node, `partitionBy(${n})`, "pair", model, (ds) => ds.partitionBy(n), true)
    }),
    onPairs((node) => {
      const ascending = chance(0.7)
      const n = maybe(between(1, 4))
      const sorted = [...valuesOf(node.model)].sort((a, b) => {
        const order = (firstOf(a) as number) - (firstOf(b) as number)
        return ascending ? order : -order
      })
      const model: Model = isFails(node.model)
        ? { _tag: "Fails", count: n ?? partitions(node.model) }
        : { _tag: "Sorted", values: sorted, ascending, pairs: true, count: n ?? partitions(node.model) }
      return derived(
        node,
        `sortByKey(${ascending ? "asc" : "desc"})`,
        "pair",
        model,
        (ds) => ds.sortByKey(ascending, n)
      )
    }),
    onPairs((node) => {
      const other = otherOf(node, "pair")
      if (other === undefined || size(node.model) * size(other.model) > 2_000) return undefined
      const n = maybe(between(1, 5))
      const count = n ??
        (node.hashPartitioned
          ? partitions(node.model)
          : other.hashPartitioned
          ? partitions(other.model)
          : Math.max(1, partitionCount(node.model), partitionCount(other.model)))
      const how = oneOf(["join", "leftOuterJoin", "rightOuterJoin", "fullOuterJoin", "cogroup"] as const)
      let model: Model
      if (isFails(node.model) || isFails(other.model)) model = { _tag: "Fails", count }
      else {
        const left = grouped(valuesOf(node.model))
        const right = grouped(valuesOf(other.model))
        const keys = new Map([...left, ...right].map(([id, group]) => [id, group.key]))
        const out: Array<Value> = []
        for (const [id, key] of keys) {
          const vs = left.get(id)?.values ?? []
          const ws = right.get(id)?.values ?? []
          if (how === "cogroup") {
            out.push([key, fn.bothSorted([vs as Array<number>, ws as Array<number>])])
            continue
          }
          const lefts = vs.length === 0 && (how === "rightOuterJoin" || how === "fullOuterJoin") ? [undefined] : vs
          const rights = ws.length === 0 && (how === "leftOuterJoin" || how === "fullOuterJoin") ? [undefined] : ws
          for (const v of lefts) for (const w of rights) out.push([key, [v, w]])
        }
        model = hashed(out, count, firstOf)
      }
      return add({
        label: `${how}(${short60(node.label)}, ${short60(other.label)})`,
        kind: "keyed",
        model,
        hashPartitioned: true,
        build: (session) => {
          const a = get(session, node)
          const b = get(session, other)
          switch (how) {
            case "join":
              return a.join(b, n)
            case "leftOuterJoin":
              return a.leftOuterJoin(b, n)
            case "rightOuterJoin":
              return a.rightOuterJoin(b, n)
            case "fullOuterJoin":
              return a.fullOuterJoin(b, n)
            case "cogroup":
              return a.cogroup(b, n).mapValues(fn.bothSorted)
          }
        }
      })
    }),
    (node) => {
      if (node.persisted) return undefined
      node.persisted = true
      const level = oneOf<StorageLevel>(["MEMORY_ONLY", "MEMORY_AND_DISK", "DISK_ONLY"])
      const persisted = derived(
        node,
        `persist(${level})`,
        node.kind,
        node.model,
        (ds) => ds.persist(level),
        node.hashPartitioned
      )
      // It is the same dataset, persisted once.
      persisted.persisted = true
      return persisted
    },
    (node) => {
      // A function that throws on one of the records: on its task's first attempt only, or on every attempt.
      const values = valuesOf(node.model)
      if (values.length === 0 || !chance(faultRate * 5)) return undefined
      const bad = canon(oneOf(values))
      const always = chance(0.4)
      // Without retries a task's first attempt is its last: a fault once is as fatal as one always.
      const model = always || !options.retries ?
        elementwise(node.model, (x) => {
          if (canon(x) === bad) throw new Throws()
          return [x]
        }, true) :
        node.model
      return derived(
        node,
        `map(throws ${always ? "always" : "once"} on ${bad})`,
        node.kind,
        model,
        (ds, session) => ds.map(fn.faulty, { bad, always, task: session.kc.taskContext }),
        false
      )
    }
  ]

  // ---- the pool: a few sources, then transformations of what is there
  const sourceCount = between(1, 3)
  for (let i = 0; i < sourceCount; i++) oneOf([sources.parallelize, sources.range, sources.textFile])()
  const transformations = between(3, 10)
  for (let made = 0, tries = 0; made < transformations && tries < 200; tries++) {
    const step = oneOf(steps)
    const node = step(oneOf(nodes))
    if (node === undefined) continue
    if (size(node.model) > 600) {
      nodes.pop()
      continue
    }
    made++
  }

  // ---- the jobs
  const jobs: Array<Job> = []
  for (let i = 0; i < options.jobs; i++) {
    // Later datasets are more likely: they have the longer lineages.
    const node = nodes[Math.min(nodes.length - 1, Math.floor(Math.sqrt(random()) * nodes.length))]!
    const shuffled =
      /ByKey|partitionBy|join|cogroup|distinct|intersection|subtract|repartition|coalesce\(\d+, true|sort/
    const previous = jobs.at(-1)
    const withPrevious = previous !== undefined && !previous.withPrevious && chance(0.25) &&
      shuffled.test(node.label)
    const cancelled = chance(options.cancelRate ?? 0.05)
    const action = actionFor(node, random, `${options.dir}/output-${i}`)
    jobs.push({
      ...action,
      label: `${action.label} of ${node.label}`,
      run: (session) => action.run(get(session, node), session),
      cancelAfterMillis: cancelled ? between(1, options.cancelWithinMillis ?? 3_000) : undefined,
      withPrevious
    })
  }
  return { inputs, jobs }
}

// ---- actions --------------------------------------------------------------------------------------------------

interface Action {
  readonly label: string
  readonly run: (dataset: Dataset<any>, session: Session) => Effect.Effect<unknown, unknown>
  readonly expected: Expected
}

const value = (check: (actual: unknown) => string | undefined): Expected => ({ _tag: "Value", check })
const equal = (expected: unknown) =>
  value((actual) => canon(actual) === canon(expected) ? undefined : `expected ${short(expected)}, got ${short(actual)}`)

// Records as the model knows them: in order, per partition, sorted, or just which.
const records = (model: Model, actual: ReadonlyArray<Value>): string | undefined => {
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
const firstRecords = (model: Model, n: number, actual: ReadonlyArray<Value>): string | undefined => {
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

const asLine = (record: Value) =>
  typeof record === "string"
    ? record
    : record !== null && typeof record === "object"
    ? JSON.stringify(record)
    : String(record)

const actionFor = (node: Node, random: () => number, outputDir: string): Action => {
  const model = node.model
  const all = valuesOf(model)
  const fails = isFails(model)
  const n = 1 + Math.floor(random() * 8)
  const failing: Expected = { _tag: "Fails" }
  // Actions that read every partition: a failing dataset fails them.
  const complete: Array<Action> = [
    {
      label: "collect",
      run: (ds) => ds.collect(),
      expected: fails ? failing : value((actual) => records(model, actual as Array<Value>))
    },
    { label: "count", run: (ds) => ds.count(), expected: fails ? failing : equal(all.length) },
    {
      label: "foreach(accumulator)",
      run: (ds, { kc }) =>
        Effect.suspend(() => {
          const seen = kc.longAccumulator("records seen")
          return Effect.as(
            ds.foreach((_: unknown, env: { seen: { add: (n: number) => void } }) => env.seen.add(1), { seen }),
            seen
          )
        }).pipe(Effect.map((seen) => seen.value)),
      expected: fails ? failing : equal(all.length)
    },
    {
      label: "saveAsTextFile, textFile",
      run: (ds, { kc }) => Effect.zipRight(ds.saveAsTextFile(outputDir), kc.textFile(outputDir, 2).collect()),
      expected: fails ? failing : value((actual) => {
        const lines = all.map(asLine)
        const ordered = model._tag === "Exact" || model._tag === "Ordered"
        const got = actual as Array<string>
        return (ordered ? canon(got) === canon(lines) : sameBag(got, lines))
          ? undefined
          : `read back ${short(got)}, expected ${short(lines)}`
      })
    }
  ]
  const numeric: Array<Action> = node.kind !== "num" ? [] : [
    {
      label: "reduce(+)",
      run: (ds) => ds.reduce(fn.plus),
      expected: fails
        ? failing
        : all.length === 0
        ? { _tag: "Empty" }
        : equal((all as Array<number>).reduce(fn.plus, 0))
    },
    {
      label: "fold(0, +)",
      run: (ds) => ds.fold(0, fn.plus),
      expected: fails ? failing : equal((all as Array<number>).reduce(fn.plus, 0))
    },
    {
      label: "aggregate",
      run: (ds) => ds.aggregate([0, 0], fn.sumCount, fn.mergeSumCount),
      expected: fails ? failing : equal([(all as Array<number>).reduce(fn.plus, 0), all.length])
    },
    {
      label: `top(${n})`,
      run: (ds) => ds.top(n),
      expected: fails ? failing : equal([...(all as Array<number>)].sort((a, b) => b - a).slice(0, n))
    },
    {
      label: `takeOrdered(${n})`,
      run: (ds) => ds.takeOrdered(n),
      expected: fails ? failing : equal([...(all as Array<number>)].sort((a, b) => a - b).slice(0, n))
    }
  ]
  const keyed: Array<Action> = node.kind !== "pair" && node.kind !== "keyed" ? [] : [
    {
      label: "countByKey",
      run: (ds) => Effect.map(ds.countByKey(), (counts) => [...counts].sort(byCanon)),
      expected: fails ? failing : equal(
        [...grouped(all).values()].map(({ key, values }) => [key, values.length]).sort(byCanon)
      )
    }
  ]
  const byValue: Array<Action> = node.kind !== "num" && node.kind !== "pair" ? [] : [
    {
      label: "countByValue",
      run: (ds) => Effect.map(ds.countByValue(), (counts) => [...counts].sort(byCanon)),
      expected: fails ? failing : equal(
        [...grouped(all.map((x) => [x, null])).values()].map(({ key, values }) => [key, values.length]).sort(byCanon)
      )
    }
  ]
  // Actions that may read only some partitions: not for a failing dataset, which they may never reach.
  const partial: Array<Action> = fails ? [] : [
    {
      label: `take(${n})`,
      run: (ds) => ds.take(n),
      expected: value((actual) => firstRecords(model, n, actual as Array<Value>))
    },
    {
      label: "first",
      run: (ds) => Effect.map(ds.first(), (record) => [record]),
      expected: all.length === 0 ? { _tag: "Empty" } : value((actual) => firstRecords(model, 1, actual as Array<Value>))
    },
    ...(node.kind !== "pair" && node.kind !== "keyed" ? [] : (() => {
      const key = all.length === 0 ? 0 : firstOf(all[Math.floor(random() * all.length)])
      return [{
        label: `lookup(${canon(key)})`,
        run: (ds: Dataset<any>) => ds.lookup(key),
        expected: value((actual) => {
          const expected = all.filter((x) => canon(firstOf(x)) === canon(key)).map((x) => (x as [unknown, unknown])[1])
          return sameBag(actual as Array<Value>, expected)
            ? undefined
            : `got ${short(actual)}, expected ${short(expected)}`
        })
      }]
    })())
  ]
  const actions = [...complete, ...numeric, ...keyed, ...byValue, ...partial]
  return actions[Math.floor(random() * actions.length)]!
}

// ---- running and judging ------------------------------------------------------------------------------------------

/**
 * How a job ended, as `judge` tells it.
 *
 * @since 0.1.0
 * @category models
 */
export type Verdict =
  | { readonly _tag: "Right" }
  | { readonly _tag: "Cancelled" }
  /** A typed failure with a cause the program injected (or a cluster fault that may cause one). */
  | { readonly _tag: "Failed"; readonly reason: string }
  | { readonly _tag: "Wrong"; readonly problem: string }

/**
 * Runs a program's jobs in order (a job marked `withPrevious` at once with the one before), each to its end: their
 * exits, in job order. A job cancelled by its timeout fails with `TimeoutException`.
 *
 * @since 0.1.0
 * @category running
 */
export const run = (program: Program, session: Session): Effect.Effect<Array<Exit.Exit<unknown, unknown>>> =>
  Effect.gen(function*() {
    const exits: Array<Exit.Exit<unknown, unknown>> = []
    const one = (job: Job) => {
      const running = Effect.suspend(() => job.run(session))
      return Effect.exit(job.cancelAfterMillis === undefined ? running : Effect.timeout(running, job.cancelAfterMillis))
    }
    for (let i = 0; i < program.jobs.length; i++) {
      const next = program.jobs[i + 1]
      if (next?.withPrevious === true) {
        exits.push(...(yield* Effect.all([one(program.jobs[i]!), one(next)], { concurrency: 2 })))
        i++
      } else {
        exits.push(yield* one(program.jobs[i]!))
      }
    }
    return exits
  })

/**
 * How a job ended against what it must give: right (its value, or the failure it must fail with), cancelled by
 * its timeout, failed (typed) for a reason the caller must judge — a cluster fault may fail a job — or wrong.
 *
 * @since 0.1.0
 * @category running
 */
export const judge = (job: Job, exit: Exit.Exit<unknown, unknown>): Verdict => {
  const { expected } = job
  if (exit._tag === "Success") {
    if (expected._tag === "Value") {
      const problem = expected.check(exit.value)
      return problem === undefined ? { _tag: "Right" } : { _tag: "Wrong", problem }
    }
    return { _tag: "Wrong", problem: `it succeeded with ${short(exit.value)}, but must fail (${expected._tag})` }
  }
  const failure = Cause.failureOption(exit.cause)
  if (failure._tag === "None") {
    return { _tag: "Wrong", problem: `it ended with ${Cause.pretty(exit.cause).split("\n")[0]}` }
  }
  const error = failure.value as { readonly _tag?: string; readonly reason?: string; readonly internal?: boolean }
  switch (error._tag) {
    case "TimeoutException":
      return job.cancelAfterMillis === undefined
        ? { _tag: "Wrong", problem: "it timed out uncancelled" }
        : { _tag: "Cancelled" }
    case "EmptyDataset":
      return expected._tag === "Empty" ? { _tag: "Right" } : { _tag: "Wrong", problem: "it failed with EmptyDataset" }
    case "JobFailed": {
      const reason = error.reason ?? ""
      if (error.internal === true) return { _tag: "Wrong", problem: `an internal error: ${reason}` }
      if (expected._tag === "Fails" && reason.includes(injected)) return { _tag: "Right" }
      return { _tag: "Failed", reason }
    }
    default:
      return { _tag: "Wrong", problem: `it failed with ${String(error._tag)}: ${String((error as Error).message)}` }
  }
}
