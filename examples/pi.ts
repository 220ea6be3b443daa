// Estimates π by throwing darts at the unit square: `kindling submit --master local[2] examples/pi.ts 10`
// spreads 100,000 throws over each of 10 partitions (Spark's SparkPi).
import { App, Kindling } from "@kindling/app"
import { Console, Effect } from "effect"

export default App.make((args) =>
  Effect.gen(function*() {
    const kc = yield* Kindling
    const slices = args[0] === undefined ? 2 : Number(args[0])
    const n = Math.min(100_000 * slices, Number.MAX_SAFE_INTEGER)
    const inside = yield* kc.range(1, n, 1, slices)
      .map((): number => {
        const x = Math.random() * 2 - 1
        const y = Math.random() * 2 - 1
        return x * x + y * y <= 1 ? 1 : 0
      })
      .reduce((a, b) => a + b)
    yield* Console.log(`Pi is roughly ${(4 * inside) / (n - 1)}`)
  })
)
