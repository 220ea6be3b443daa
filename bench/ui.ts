// The cost of the app UI. (1) Empty-task throughput — jobs of 10,000 one-element tasks through the built
// `kindling submit` — with the app UI and its event stream on (the default), next to the same runs with
// `kindling.ui.enabled=false`, alternating, best job of each; target ≥ 0.9×. (2) The time to render the first
// page of a stage of 100,000 tasks (its task table, quantiles and timeline), by index and sorted by duration,
// from an app UI fed the events of such a stage, next to a stage of 100 tasks; target < 1 s.
import type { AppEvents } from "@kindling/app"
import { AppUi } from "@kindling/monitoring"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import { emptyTasks } from "./emptyTasks.js"
import { stageEvents } from "./stageEvents.js"
import { format, row } from "./stats.js"

const tasks = 10_000
const rounds = 3

const throughput = async (master: string) => {
  const best = { on: Number.POSITIVE_INFINITY, off: Number.POSITIVE_INFINITY }
  for (let round = 0; round < rounds; round++) {
    for (const ui of ["off", "on"] as const) {
      const flags = ["--conf", `kindling.ui.enabled=${ui === "on"}`, "--conf", "kindling.ui.port=0"]
      const outcome = await emptyTasks({ master, runs: 3, tasks, flags })
      best[ui] = Math.min(best[ui], ...outcome.runMillis)
    }
  }
  return { on: tasks / (best.on / 1000), off: tasks / (best.off / 1000) }
}

const timed = async (url: string) => {
  const started = performance.now()
  const response = await fetch(url)
  const body = await response.text()
  if (!response.ok) throw new Error(`${url}: ${response.status} ${body}`)
  return performance.now() - started
}

// The first render of each page (nothing cached), then the best of five more.
const renderTimes = (n: number) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function*() {
        const events = stageEvents(n)
        const queue = yield* Queue.unbounded<AppEvents.AppEvent>()
        yield* Queue.offerAll(queue, events)
        const ui = yield* AppUi.start(
          {
            host: "127.0.0.1",
            port: 0,
            maxRetries: 0,
            retention: { jobs: 1000, stages: 1000, tasks: 100_000 },
            properties: [],
            killEnabled: false
          },
          { name: "bench", master: "local[8]", user: "bench", startTime: 0 },
          queue
        )
        while (ui.status.version < events.length) yield* Effect.sleep("10 millis")
        return yield* Effect.promise(async () => {
          const page = `${ui.url}/stages/stage/?id=0&attempt=0`
          const first = await timed(page)
          const sortedFirst = await timed(`${page}&task.sort=-duration`)
          const again: Array<number> = []
          for (let i = 0; i < 5; i++) again.push(await timed(page))
          return { first, sortedFirst, best: Math.min(...again) }
        })
      })
    )
  )

const main = async () => {
  console.log(
    `Empty-task throughput, ${format(tasks)} one-element tasks per job, best job of ${rounds} alternating runs each\n`
  )
  const widths = [26, 16, 16, 10]
  console.log(row(["", "UI off tasks/s", "UI on tasks/s", "on ÷ off"], widths))
  for (const master of ["local[2]", "local-cluster[2,1,1024]"]) {
    const { off, on } = await throughput(master)
    console.log(row([master, format(off), format(on), format(on / off, 2)], widths))
  }
  console.log(`\nStage page render (first page of 100 tasks, quantiles, timeline), ms\n`)
  const pageWidths = [20, 14, 22, 16, 16]
  console.log(
    row(["tasks in the stage", "first render", "first, by -duration", "best of 5 more", "first ÷ 1 s"], pageWidths)
  )
  for (const n of [100, 100_000]) {
    const times = await renderTimes(n)
    console.log(
      row([
        format(n),
        format(times.first, 1),
        format(times.sortedFirst, 1),
        format(times.best, 1),
        format(times.first / 1000, 3)
      ], pageWidths)
    )
  }
}

await main()
