// `examples/wordcount.ts` as `pnpm bench wordcount` runs it: the same app, with what its tasks report summed
// from the app's events and printed at the end (`shuffle <written> <read> <remote> <spilled>`).
import { App, Kindling } from "@kindling/app"
import { Console, Effect, Stream } from "effect"
import wordcount from "../../examples/wordcount.js"

export default App.make((args) =>
  Effect.scoped(Effect.gen(function*() {
    const kc = yield* Kindling
    const totals = { shuffleBytesWritten: 0, shuffleBytesRead: 0, shuffleRemoteBytesRead: 0, spilledBytes: 0 }
    const events = yield* kc.subscribe
    yield* Effect.forkScoped(Stream.runForEach(events, (event) =>
      Effect.sync(() => {
        if (event._tag !== "TaskEnd") return
        for (const key of Object.keys(totals) as Array<keyof typeof totals>) totals[key] += event.metrics[key] ?? 0
      })))
    yield* wordcount.main(args)
    yield* Effect.sleep("100 millis") // the last events are on their way
    yield* Console.log(
      `shuffle ${totals.shuffleBytesWritten} ${totals.shuffleBytesRead} ${totals.shuffleRemoteBytesRead} ` +
        `${totals.spilledBytes}`
    )
  }))
)
