// The actions of the random programs' jobs, each with what it must give for the dataset it runs on.
import type { Dataset } from "@kindling/app"
import * as Effect from "effect/Effect"
import { fn } from "./lineageFunctions.js"
import {
  byCanon,
  canon,
  type Expected,
  firstOf,
  firstRecords,
  grouped,
  isFails,
  records,
  sameBag,
  short,
  type Value,
  valuesOf
} from "./lineageOracle.js"
import type { Node, Session } from "./lineagePool.js"

interface Action {
  readonly label: string
  readonly run: (dataset: Dataset<any>, session: Session) => Effect.Effect<unknown, unknown>
  readonly expected: Expected
}

const value = (check: (actual: unknown) => string | undefined): Expected => ({ _tag: "Value", check })
const equal = (expected: unknown) =>
  value((actual) => canon(actual) === canon(expected) ? undefined : `expected ${short(expected)}, got ${short(actual)}`)

const asLine = (record: Value) =>
  typeof record === "string"
    ? record
    : record !== null && typeof record === "object"
    ? JSON.stringify(record)
    : String(record)

export const actionFor = (node: Node, random: () => number, outputDir: string): Action => {
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
