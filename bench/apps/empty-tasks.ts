// The app `pnpm bench tasks` submits: one one-task job (the first task), a pause at rest, then jobs of 10,000
// empty one-element tasks. It reports on stdout, one line per event, for the bench to read.
import { App, Kindling } from "@kindling/app"
import { Console, Effect } from "effect"

export default App.make(([runs = "3", tasks = "10000"]) =>
  Effect.gen(function*() {
    const kc = yield* Kindling
    yield* kc.parallelize([1], 1).count()
    yield* Console.log(`first ${Date.now()}`)
    yield* Effect.sleep("2 seconds")
    yield* Console.log("rest")
    const items = Array.from({ length: Number(tasks) }, (_, i) => i)
    for (let run = 0; run < Number(runs); run++) {
      const started = performance.now()
      const count = yield* kc.parallelize(items, items.length).count()
      yield* Console.log(`run ${performance.now() - started} ${count}`)
    }
  })
)
