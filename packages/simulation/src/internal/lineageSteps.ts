// The transformations that grow a random program's pool: each takes a dataset of the pool and gives a new one, its
// model evaluated by the oracle on the parent's, or undefined when it does not apply to that dataset. Their order is
// part of what a seed means: a program is drawn by index from this list.
import type { StorageLevel } from "@kindling/app"
import type { Keys } from "@kindling/data"
import { fn } from "./lineageFunctions.js"
import {
  canon,
  elementwise,
  firstOf,
  grouped,
  hashed,
  isFails,
  type Kind,
  type Model,
  partitionCount,
  Throws,
  type Value,
  valuesOf
} from "./lineageOracle.js"
import { type Node, type Pool, short60 } from "./lineagePool.js"

type Step = (node: Node) => Node | undefined

const onNums = (step: Step): Step => (node) => node.kind === "num" ? step(node) : undefined
const onPairs = (step: Step): Step => (node) => node.kind === "pair" ? step(node) : undefined
const withKeys = (step: Step): Step => (node) => node.kind === "pair" || node.kind === "keyed" ? step(node) : undefined
const asKeys = (node: Node) => node.kind === "num" || node.kind === "pair"

/**
 * The pool's transformations. `faultRate` is the chance that a new dataset's function throws on a record; without
 * `retries` a fault once is as fatal as one always.
 */
export const steps = (
  pool: Pool,
  options: { readonly faultRate: number; readonly retries: boolean }
): ReadonlyArray<Step> => {
  const { add, between, chance, derived, get, maybe, nodes, oneOf, partitions, size } = pool
  const { faultRate } = options
  const otherOf = (node: Node, kind: Kind) => {
    const others = nodes.filter((other) => other.kind === kind && other !== node)
    return others.length === 0 ? undefined : oneOf(others)
  }
  return [
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
}
