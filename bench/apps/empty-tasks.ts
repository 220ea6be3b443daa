// The app `pnpm bench tasks` submits: one one-task job (the first task), a pause at rest, then jobs of 10,000
// empty one-element tasks. It reports on stdout, one line per event, for the bench to read: `ready` when its
// context is ready (the app's body starts), `first` when its first job has ended, on the same clock.
import { App, Kindling } from "@kindling/app"
import { Console, Effect } from "effect"

export default App.make(([runs = "3", tasks = "10000"]) =>
  Effect.gen(function*() {
    const kc = yield* Kindling
    const ready = performance.timeOrigin + performance.now()
    yield* kc.parallelize([1], 1).count()
    const first = performance.timeOrigin + performance.now()
    yield* Console.log(`ready ${ready}`)
    yield* Console.log(`first ${first}`)
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
