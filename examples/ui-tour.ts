// A few jobs to look at in the app UI — a word count whose words are cached, a sort and a join (so, shuffles and a
// skipped stage) — after which the app keeps running for SECONDS (default 120) with its UI up:
// `kindling submit examples/ui-tour.ts 120`, then open http://localhost:4040.
import { App, Kindling } from "@kindling/app"
import { Console, Effect } from "effect"

const vocabulary = ["spark", "kindling", "effect", "stage", "shuffle", "task", "executor", "driver", "worker", "dag"]

export default App.make(([seconds = "120"]) =>
  Effect.gen(function*() {
    const kc = yield* Kindling
    const words = kc.range(0, 200_000, 1, 8)
      .map((i, env) => env.vocabulary[(i * 7 + Math.floor(i / 13)) % 10]!, { vocabulary })
      .cache()
    const counts = words.map((word): [string, number] => [word, 1]).reduceByKey((a, b) => a + b, undefined, 4)
    yield* Console.log(`${yield* counts.count()} distinct words`)
    const top = yield* counts.sortBy(([, n]) => -n).take(3)
    yield* Console.log(`most frequent: ${top.map(([word, n]) => `${word} ${n}`).join(", ")}`)
    const lengths = kc.parallelize(vocabulary, 2).map((word): [string, number] => [word, word.length])
    yield* Console.log(`${(yield* counts.join(lengths).collect()).length} words joined with their lengths`)
    yield* Console.log(`The app UI is up for ${seconds} s: ${kc.uiWebUrl ?? "(off)"}`)
    yield* Effect.sleep(`${Number(seconds)} seconds`)
  })
)
