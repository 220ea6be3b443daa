/**
 * The jobs a computing app of the simulated cluster runs, each with the answer it must give: computed again here
 * on a plain array, or — for a job whose tasks always throw — the failure it must end with. Their functions
 * travel as source text, as an app's self-contained functions do.
 *
 * @since 0.1.0
 */
import type { DatasetError, EmptyDataset, KindlingContext } from "@kindling/driver"
import type * as Effect from "effect/Effect"

/**
 * @since 0.1.0
 * @category models
 */
export interface SimJob {
  readonly name: string
  readonly run: (kc: KindlingContext) => Effect.Effect<unknown, DatasetError | EmptyDataset>
  /** The value it must succeed with, or the text its failure must contain. */
  readonly expected: { readonly _tag: "Value"; readonly value: unknown } | {
    readonly _tag: "Fails"
    readonly with: string
  }
}

const value = (v: unknown) => ({ _tag: "Value", value: v } as const)

/**
 * A seeded selection of jobs over partitions of random counts.
 *
 * @since 0.1.0
 * @category constructors
 */
export const pick = (random: () => number, count: number): ReadonlyArray<SimJob> => {
  const between = (min: number, max: number) => min + Math.floor(random() * (max - min + 1))
  const n = between(50, 3_000)
  const parts = between(1, 16)
  const items = Array.from({ length: between(0, 400) }, () => between(-1_000, 1_000))
  const all: ReadonlyArray<SimJob> = [
    {
      name: "sum of triples",
      run: (kc) => kc.range(0, n, 1, parts).map((x) => x * 3).fold(0, (a, b) => a + b),
      expected: value((3 * n * (n - 1)) / 2)
    },
    {
      name: "even items",
      run: (kc) => kc.parallelize(items, parts).filter((x) => x % 2 === 0).collect(),
      expected: value(items.filter((x) => x % 2 === 0))
    },
    {
      name: "doubled count",
      run: (kc) => kc.range(0, n, 1, parts).flatMap((x) => [x, -x]).count(),
      expected: value(2 * n)
    },
    {
      name: "first ten squares",
      run: (kc) => kc.range(0, n, 1, parts).map((x) => x * x).take(10),
      expected: value(Array.from({ length: Math.min(10, n) }, (_, i) => i * i))
    },
    {
      name: "indexed maxima",
      run: (kc) =>
        kc.parallelize(items, parts).zipWithIndex().map(([x, i]) => x + i).aggregate(
          -Infinity,
          (a, b) => Math.max(a, b),
          (a, b) => Math.max(a, b)
        ),
      expected: value(items.reduce((max, x, i) => Math.max(max, x + i), -Infinity))
    },
    {
      name: "a record that always throws",
      run: (kc) =>
        kc.range(0, n, 1, parts).map((x) => {
          if (x === 7) throw new Error("record 7 is bad")
          return x
        }).count(),
      expected: { _tag: "Fails", with: "record 7 is bad" }
    }
  ]
  return Array.from({ length: count }, () => all[between(0, all.length - 1)]!)
}
