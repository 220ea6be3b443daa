// Mean latency per service over generated log lines: functions that call the module's helpers and an imported
// parser, a local value and a local helper, and a class whose instances travel through a shuffle.
import { App, Kindling } from "@kindling/app"
import { Console, Effect } from "effect"
import { type Entry, parseLine } from "./logs/parse.js"

class Latency {
  constructor(readonly count = 0, readonly total = 0) {}
  add(millis: number) {
    return new Latency(this.count + 1, this.total + millis)
  }
  merge(other: Latency) {
    return new Latency(this.count + other.count, this.total + other.total)
  }
  mean() {
    return this.count === 0 ? 0 : this.total / this.count
  }
}
// Instances of a registered class arrive as instances, methods and all.
App.registerClass(Latency)

const services = ["auth", "db", "queue", "web"]
const logLine = (i: number) => `${["INFO", "WARN", "ERROR"][i % 3]} ${services[(i * 7) % 4]} ${(i * 31) % 250}`
const isSlow = (entry: Entry) => entry.millis > 200

export default App.make(([lines = "100000", least = "20"]) =>
  Effect.gen(function*() {
    const kc = yield* Kindling
    const minimum = Number(least)
    const tag = (service: string) => service.toUpperCase()
    const entries = kc.range(0, Number(lines), 1, 4).map((i) => parseLine(logLine(i)))
    const slow = yield* entries.filter(isSlow).count()
    const latencies = yield* entries
      .filter((entry) => entry.millis >= minimum)
      .map((entry) => [tag(entry.service), new Latency().add(entry.millis)] as const)
      .reduceByKey((a, b) => a.merge(b))
      .collect()
    for (const [service, latency] of latencies.sort(([a], [b]) => a.localeCompare(b))) {
      yield* Console.log(`${service.padEnd(5)} ${latency.mean().toFixed(1)} ms over ${latency.count} requests`)
    }
    yield* Console.log(`${slow} requests over 200 ms`)
  })
)
