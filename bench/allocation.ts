// Dynamic allocation against a static allocation of the same bursty app, on the built `kindling` (a master and
// two workers of two cores): three jobs of 320 tasks that each wait 250 ms without using the CPU (so that four
// executors of one core run in parallel on this 2-core machine), 30 s apart. Static: four executors held from the
// start to the end. Dynamic: kindling.dynamicAllocation with minExecutors 0, backlog timeouts of 200 ms and an idle
// timeout of 5 s. Reported: the executor-seconds each used (from the app's events, up to its last job's end),
// each job's time, and the ratios. Target (issue 28): every job within 10 % of its static time, far fewer
// executor-seconds.
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { cluster, execute, kindling } from "../packages/cli/test/fixtures/cluster.js"
import { format, row } from "./stats.js"

const app = `import { App, Kindling } from "@kindling/app"
import { Console, Effect, Stream } from "effect"
export default App.make(() =>
  Effect.scoped(Effect.gen(function*() {
    const kc = yield* Kindling
    const since = new Map()
    let executorMillis = 0
    const events = yield* kc.subscribe
    yield* Effect.forkScoped(Stream.runForEach(events, (event) => Effect.sync(() => {
      if (event._tag === "ExecutorAdded") since.set(event.executorId, Date.now())
      if (event._tag === "ExecutorRemoved" && since.has(event.executorId)) {
        executorMillis += Date.now() - since.get(event.executorId)
        since.delete(event.executorId)
      }
    })))
    const jobs = []
    for (let round = 0; round < 3; round++) {
      if (round > 0) yield* Effect.sleep("30 seconds")
      const started = Date.now()
      yield* kc.range(0, 320, 1, 320).map((x) => {
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 250)
        return x
      }).count()
      jobs.push(Date.now() - started)
    }
    const end = Date.now()
    for (const from of since.values()) executorMillis += end - from
    yield* Console.log(JSON.stringify({ jobs, executorSeconds: executorMillis / 1000 }))
  })))
`

interface Outcome {
  readonly jobs: ReadonlyArray<number>
  readonly executorSeconds: number
}

const submit = (master: string, file: string, flags: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const result = yield* execute(
      kindling[0],
      [...kindling.slice(1), "submit", "--master", master, "--conf", "kindling.executor.cores=1", ...flags, file],
      300_000
    )
    if (result.code !== 0) return yield* Effect.die(new Error(`the app failed:\n${result.stderr}`))
    return JSON.parse(result.stdout.trim().split("\n").at(-1)!) as Outcome
  })

const main = Effect.gen(function*() {
  const { dir, master } = yield* cluster(2)
  const file = Path.join(dir, "bursty.ts")
  Fs.writeFileSync(file, app)
  const driverHost = ["--conf", "kindling.driver.host=127.0.0.1"]
  const fixed = yield* submit(master.url, file, driverHost)
  const dynamic = yield* submit(master.url, file, [
    ...driverHost,
    "--conf",
    "kindling.dynamicAllocation.enabled=true",
    "--conf",
    "kindling.dynamicAllocation.schedulerBacklogTimeout=200ms",
    "--conf",
    "kindling.dynamicAllocation.executorIdleTimeout=5s"
  ])
  const widths = [24, 14, 14, 14, 18]
  console.log("\nthe same bursty app (3 jobs of 320 × 250 ms tasks, 30 s apart) on 2 workers of 2 cores\n")
  console.log(row(["", "job 1", "job 2", "job 3", "executor-seconds"], widths))
  const seconds = (ms: number) => `${format(ms / 1000, 2)} s`
  for (const [name, outcome] of [["static (4 executors)", fixed], ["dynamic allocation", dynamic]] as const) {
    console.log(row([name, ...outcome.jobs.map(seconds), format(outcome.executorSeconds, 1)], widths))
  }
  const ratios = dynamic.jobs.map((ms, i) => ms / fixed.jobs[i]!)
  console.log(row([
    "dynamic ÷ static",
    ...ratios.map((ratio) => `${format(ratio, 2)}×`),
    `${format(dynamic.executorSeconds / fixed.executorSeconds, 2)}×`
  ], widths))
  console.log(`\ntarget: every job ≤ 1.10× static (worst ${format(Math.max(...ratios), 2)}×)`)
}).pipe(Effect.scoped)

await Effect.runPromise(main)
