// PageRank, as Spark's SparkPageRank: `kindling submit --master local[2] examples/pagerank.ts
// examples/data/links.txt 10` reads "page linked-page" lines, caches each page's links (grouped by page, so
// hash-partitioned: every iteration's join with the ranks reads them in place, without a shuffle), and prints
// each page's rank after the iterations, highest first.
import { App, Kindling } from "@kindling/app"
import { Console, Effect } from "effect"

export default App.make(([input, iterations = "10"]) =>
  Effect.gen(function*() {
    const kc = yield* Kindling
    if (input === undefined) return yield* Effect.fail(new Error("usage: pagerank.ts LINKS_FILE [ITERATIONS]"))
    const links = kc.textFile(input)
      .map((line) => line.trim().split(/\s+/))
      .filter((parts) => parts.length === 2)
      .map(([page, target]): [string, string] => [page!, target!])
      .distinct()
      .groupByKey()
      .cache()
    let ranks = links.mapValues((): number => 1)
    for (let i = 0; i < Number(iterations); i++) {
      const contributions = links.join(ranks).values().flatMap(([targets, rank]) =>
        targets.map((target): [string, number] => [target, rank / targets.length])
      )
      ranks = contributions.reduceByKey((a, b) => a + b).mapValues((sum) => 0.15 + 0.85 * sum)
    }
    const sorted = yield* ranks.sortBy(([page, rank]) => [-rank, page]).collect()
    for (const [page, rank] of sorted) yield* Console.log(`${page} has rank ${rank.toFixed(4)}`)
  })
)
