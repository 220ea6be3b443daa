// Dynamic allocation on real processes: a bursty app — two jobs of slow tasks with an idle gap between them — on
// two workers. The app starts with no executor, asks for more while its tasks wait, gives every one back in the
// gap, and asks again for the second job; both answers are right, and no executor's going counts as a loss.
import { assert, describe, it } from "@effect/vitest"
import { Deadlines } from "@kindling/protocol/testing"
import { Effect } from "effect"
import { app, clientSubmitArgs, cluster, run } from "./fixtures/cluster.js"

// Follows the app's executors through its events and prints, per job, its answer, the most executors alive at
// once during it, and how many were alive after the gap that followed it (which ends once none is).
const bursty = `import { App, Kindling } from "@kindling/app"
import { Console, Effect, Stream } from "effect"
export default App.make(() =>
  Effect.scoped(Effect.gen(function*() {
    const kc = yield* Kindling
    const alive = new Set()
    let most = 0
    const events = yield* kc.subscribe
    yield* Effect.forkScoped(Stream.runForEach(events, (event) => Effect.sync(() => {
      if (event._tag === "ExecutorAdded") alive.add(event.executorId)
      if (event._tag === "ExecutorRemoved") alive.delete(event.executorId)
      most = Math.max(most, alive.size)
    })))
    for (let round = 0; round < 2; round++) {
      most = alive.size
      const sum = yield* kc.range(0, 16, 1, 16)
        .map((x) => { const until = Date.now() + 600; while (Date.now() < until) {} return x })
        .reduce((a, b) => a + b)
      const during = most
      // The gap: until every executor is given back (a 2 s idle timeout), for a minute at most.
      for (let waited = 0; alive.size > 0 && waited < 60_000; waited += 100) yield* Effect.sleep("100 millis")
      yield* Console.log(\`job \${round}: sum \${sum}, at most \${during} executors, \${alive.size} after the gap\`)
    }
  })))
`

describe("dynamic allocation", () => {
  it.scopedLive(
    "a bursty app grows to its backlog, gives every executor back in its idle gap, and grows again",
    () =>
      Effect.gen(function*() {
        const { dir, master } = yield* cluster(2)
        const result = yield* run(clientSubmitArgs(
          master.url,
          "--conf",
          "kindling.dynamicAllocation.enabled=true",
          "--conf",
          "kindling.dynamicAllocation.schedulerBacklogTimeout=500ms",
          "--conf",
          "kindling.dynamicAllocation.executorIdleTimeout=2s",
          app(dir, "bursty.ts", bursty)
        ))
        assert.strictEqual(result.code, 0, result.stderr)
        // Two workers of two cores: four executors of one core at most; none left after the gap (2 s idle timeout).
        assert.strictEqual(
          result.stdout,
          "job 0: sum 120, at most 4 executors, 0 after the gap\njob 1: sum 120, at most 4 executors, 0 after the gap\n"
        )
        assert.match(result.stderr, /Requesting a total of 1 executors \(dynamic allocation\)/)
        assert.match(result.stderr, /removed by dynamic allocation/)
        // An executor given back is no loss: nothing lost, nothing failed (a warning of a slow machine is no failure).
        assert.notMatch(result.stderr, /Lost executor|Lost task|ERROR/)
        assert.notMatch(master.node.output(), /unknown executor/)
      }),
    Deadlines.scaled(90_000)
  )
})
