// The shuffle the scale curves and `pnpm bench spark` run: `records` pairs `[key, payload]` made on the executors
// (never on the driver), a key drawn skewed from `keys` keys (key k is drawn about 1/√k as often as key 0 is not:
// the share of keys below k is √(k/keys)) and a payload of `payloadBytes` ASCII characters, shuffled by
// `groupByKey`, `sortByKey` or `reduceByKey` into `partitions` partitions and checked: every record arrives once.
// Prints `result <millis> <written> <read> <spilled>` (the job's wall time and what its tasks reported) on stdout.
//
// kindling submit … bench/apps/shuffle.ts OPERATION RECORDS PAYLOAD_BYTES PARTITIONS [KEYS]
import { App, type Dataset, Kindling } from "@kindling/app"
import { Console, Effect, Stream } from "effect"

const operations = ["groupByKey", "sortByKey", "reduceByKey"] as const
type Operation = (typeof operations)[number]

export default App.make(([operation = "", records = "", payloadBytes = "", partitions = "", keys = "1000000"]) =>
  Effect.scoped(Effect.gen(function*() {
    const kc = yield* Kindling
    if (!(operations as ReadonlyArray<string>).includes(operation) || !(Number(records) > 0)) {
      return yield* Effect.fail(
        new Error(`usage: shuffle.ts ${operations.join("|")} RECORDS PAYLOAD_BYTES PARTITIONS [KEYS]`)
      )
    }
    const totals = { shuffleBytesWritten: 0, shuffleBytesRead: 0, spilledBytes: 0 }
    const events = yield* kc.subscribe
    yield* Effect.forkScoped(Stream.runForEach(events, (event) =>
      Effect.sync(() => {
        if (event._tag !== "TaskEnd") return
        for (const key of Object.keys(totals) as Array<keyof typeof totals>) totals[key] += event.metrics[key] ?? 0
      })))
    const n = Number(partitions)
    const pairs = kc.range(0, Number(records), 1, n).map(
      (i, env): [number, string] => {
        // A multiplicative hash of i, as a fraction in [0, 1): squared, it skews the keys toward 0.
        const u = (Math.imul(i, 2654435761) >>> 0) / 4294967296
        const key = Math.floor(u * u * env.keys)
        // The payload varies with the record so that nothing compresses or deduplicates it away.
        const stamp = i.toString(36)
        return [key, stamp + env.filler.slice(stamp.length)]
      },
      { keys: Number(keys), filler: "x".repeat(Number(payloadBytes)) }
    )
    const started = performance.now()
    const arrived = yield* count(operation as Operation, pairs, n)
    const millis = performance.now() - started
    if (arrived !== Number(records)) {
      return yield* Effect.fail(new Error(`${operation}: ${arrived} records arrived of ${records}`))
    }
    yield* Effect.sleep("100 millis") // the last events are on their way
    yield* Console.log(
      `result ${Math.round(millis)} ${totals.shuffleBytesWritten} ${totals.shuffleBytesRead} ${totals.spilledBytes}`
    )
  }))
)

// How many records went through the shuffle, counted after it on the executors. `reduceByKey` keeps, per key, how
// many records it had and the greatest payload, so that what it shuffles still grows with the payloads.
const count = (operation: Operation, pairs: Dataset<[number, string]>, n: number) => {
  switch (operation) {
    case "groupByKey":
      return pairs.groupByKey(n).map(([, values]) => values.length).reduce((a, b) => a + b)
    case "sortByKey":
      return pairs.sortByKey(true, n).count()
    case "reduceByKey":
      return pairs.mapValues((payload): [number, string] => [1, payload])
        .reduceByKey(([a, p], [b, q]): [number, string] => [a + b, p > q ? p : q], n)
        .map(([, [records]]) => records)
        .reduce((a, b) => a + b)
  }
}
