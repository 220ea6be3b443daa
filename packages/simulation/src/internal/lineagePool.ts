// The pool a random program's datasets are drawn from: each dataset a node — its lineage's label, the kind of its
// records, the oracle's model of them, and how a session builds it — and the sources the pool starts from. Every
// draw is from the program's one `random`, in a fixed order, so that a seed always makes the same program.
import type { Dataset, KindlingContext } from "@kindling/app"
import { type Kind, type Model, partitionCount, sliced, textSplits, valuesOf } from "./lineageOracle.js"

/**
 * What a job runs with: the app's context, and the datasets of the program built so far.
 */
export interface Session {
  readonly kc: KindlingContext
  readonly datasets: Map<number, Dataset<any>>
}

export interface Node {
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

export const short60 = (text: string) => (text.length > 60 ? `${text.slice(0, 57)}…` : text)

export class Pool {
  readonly nodes: Array<Node> = []
  /** Text files the program reads, to be written before it runs. */
  readonly inputs: Array<{ readonly path: string; readonly text: string }> = []

  constructor(readonly random: () => number) {}

  readonly between = (min: number, max: number) => min + Math.floor(this.random() * (max - min + 1))
  readonly chance = (p: number) => this.random() < p
  readonly oneOf = <A>(items: ReadonlyArray<A>): A => items[Math.floor(this.random() * items.length)]!
  readonly maybe = (n: number) => (this.chance(0.5) ? n : undefined)

  readonly add = (node: Omit<Node, "id" | "persisted">): Node => {
    const made = { ...node, id: this.nodes.length, persisted: false }
    this.nodes.push(made)
    return made
  }

  /** The node's dataset in the session, built once. */
  readonly get = (session: Session, node: Node): Dataset<any> => {
    const built = session.datasets.get(node.id)
    if (built !== undefined) return built
    const dataset = node.build(session)
    session.datasets.set(node.id, dataset)
    return dataset
  }

  /** A node made from one parent by `build`. */
  readonly derived = (
    parent: Node,
    label: string,
    kind: Kind,
    model: Model,
    build: (dataset: Dataset<any>, session: Session) => Dataset<any>,
    hashPartitioned = false
  ) =>
    this.add({
      label: `${label}(${short60(parent.label)})`,
      kind,
      model,
      hashPartitioned,
      build: (session) => build(this.get(session, parent), session)
    })

  readonly size = (model: Model) => valuesOf(model).length
  readonly partitions = (model: Model) => Math.max(1, partitionCount(model))
}

/** The sources a pool starts from; `dir` is where text inputs go. */
export const sources = (pool: Pool, dir: string) => {
  const { add, between, chance, inputs, oneOf } = pool
  return {
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
      const path = `${dir}/input-${inputs.length}.txt`
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
}
