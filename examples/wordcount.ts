// Counts the words of a text file (or of every file of a directory), writing `word<TAB>count` lines to
// OUTPUT_DIR/part-NNNNN, most frequent first (ties by word), and printing the ten most frequent:
// `kindling submit --master local[2] examples/wordcount.ts README.md /tmp/counts`.
import { App, Kindling } from "@kindling/app"
import { Console, Effect } from "effect"

export default App.make(([input, output]) =>
  Effect.gen(function*() {
    const kc = yield* Kindling
    if (input === undefined || output === undefined) {
      return yield* Effect.fail(new Error("usage: wordcount.ts INPUT OUTPUT_DIR"))
    }
    // Two partitions per core at least, so that the work spreads evenly over the executors.
    const counts = kc.textFile(input, 2 * kc.defaultParallelism)
      .flatMap((line) => line.split(/\s+/).filter((word) => word.length > 0))
      .map((word): [string, number] => [word, 1])
      .reduceByKey((a, b) => a + b)
    // By count descending, then by word: the key [-count, word] sorts that way.
    const sorted = counts.sortBy(([word, count]) => [-count, word])
    yield* sorted.map(([word, count]) => `${word}\t${count}`).saveAsTextFile(output)
    // The sort's shuffle is done: this job reads its first partitions only.
    const top = yield* sorted.take(10)
    yield* Console.log("The ten most frequent words:")
    for (const [word, count] of top) yield* Console.log(`${String(count).padStart(10)}  ${word}`)
    yield* Console.log(`All ${yield* counts.count()} distinct words, by count: ${output}/part-*`)
  })
)
