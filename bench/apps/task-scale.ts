// The app of the task-count curve (`pnpm bench curves`): for each count N given, one job of N one-element tasks,
// with the driver's heap sampled while it runs. Prints `result <N> <millis> <heap bytes before> <peak heap bytes>`
// per job. The heap before is measured after a full collection when the process was started with --expose-gc.
import { App, Kindling } from "@kindling/app"
import { Console, Effect } from "effect"

const collect = () => (globalThis as { gc?: () => void }).gc?.()

export default App.make((counts) =>
  Effect.gen(function*() {
    const kc = yield* Kindling
    yield* kc.parallelize([1], 1).count() // the executors are up and warm
    for (const n of counts.map(Number)) {
      const items = Array.from({ length: n }, (_, i) => i)
      collect()
      const before = process.memoryUsage().heapUsed
      let peak = before
      const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().heapUsed)), 10)
      const started = performance.now()
      const count = yield* kc.parallelize(items, n).count()
      const millis = performance.now() - started
      clearInterval(sampler)
      peak = Math.max(peak, process.memoryUsage().heapUsed)
      if (count !== n) return yield* Effect.fail(new Error(`counted ${count} of ${n}`))
      yield* Console.log(`result ${n} ${Math.round(millis)} ${before} ${peak}`)
    }
  })
)
