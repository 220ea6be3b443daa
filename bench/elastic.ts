// The elastic cluster's costs and savings, on the built `kindling` (a master and three workers of two cores, each
// running the shuffle service): a shuffle job (12 map tasks of 0.5 s over 3 M records, 200,000 keys, 6 reduce
// partitions) run three times by an app — the first runs its map stage, the others only fetch its outputs — then
// once more after one of its executors is killed. Once with the app's map outputs served by
// their executors, once by the workers' shuffle services. Then the same job with a worker decommissioned while its
// map stage runs. Reported: the job's time each way (what fetching through the worker costs), the job after the
// kill (what a lost executor costs without the service), the map tasks run again, and for the decommission the
// job's time against an undisturbed run, the outputs migrated and how long the worker took to drain and exit.
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { clientSubmitArgs, cluster, execute, kindling, start } from "../packages/cli/test/fixtures/cluster.js"
import { format, row } from "./stats.js"

// The job, three times, a task that kills its own executor (the first to run it), and the job once more; prints the
// job times and the map tasks that ran, per job.
const app = (marker: string) =>
  `import { App, Kindling } from "@kindling/app"
import { Console, Effect, Stream } from "effect"
export default App.make(() =>
  Effect.scoped(Effect.gen(function*() {
    const kc = yield* Kindling
    let mapTasks = 0
    const events = yield* kc.subscribe
    yield* Effect.forkScoped(Stream.runForEach(events, (event) => Effect.sync(() => {
      if (event._tag === "TaskEnd" && event.succeeded && event.metrics.shuffleBytesWritten > 0) mapTasks++
    })))
    const sums = kc.range(0, 3_000_000, 1, 12)
      .mapPartitions((rows) => { const until = Date.now() + 500; while (Date.now() < until) {} return rows })
      .map((x) => [x % 200_000, x]).reduceByKey((a, b) => a + b, undefined, 6)
    const jobs = []
    const timed = Effect.gen(function*() {
      const before = mapTasks
      const started = Date.now()
      yield* sums.count()
      jobs.push({ millis: Date.now() - started, mapTasks: mapTasks - before })
    })
    for (let i = 0; i < 3; i++) yield* timed
    yield* kc.range(0, 6, 1, 6).foreach(() => {
      const fs = process.getBuiltinModule("node:fs")
      if (!fs.existsSync(${JSON.stringify(marker)})) {
        fs.writeFileSync(${JSON.stringify(marker)}, "")
        process.kill(process.pid, "SIGKILL")
      }
    })
    yield* timed
    yield* Console.log(JSON.stringify(jobs))
  })))
`

// One job whose map tasks take 1 s each (two waves on 6 executors); says when the first wave is in.
const drained = `import { App, Kindling } from "@kindling/app"
import { Console, Effect, Stream } from "effect"
export default App.make(() =>
  Effect.scoped(Effect.gen(function*() {
    const kc = yield* Kindling
    let done = 0
    const events = yield* kc.subscribe
    yield* Effect.forkScoped(Stream.runForEach(events, (event) => Effect.sync(() => {
      if (event._tag === "TaskEnd" && event.succeeded && ++done === 6) console.error("FIRST WAVE DONE")
    })))
    const started = Date.now()
    yield* kc.range(0, 1_200_000, 1, 12)
      .mapPartitions((rows) => { const until = Date.now() + 1000; while (Date.now() < until) {} return rows })
      .map((x) => [x % 10_000, x]).reduceByKey((a, b) => a + b, undefined, 6).count()
    yield* Console.log(JSON.stringify({ millis: Date.now() - started }))
  })))
`

interface Job {
  readonly millis: number
  readonly mapTasks: number
}

const service = ["--conf", "kindling.shuffle.service.enabled=true"]

const main = Effect.gen(function*() {
  const { dir, master, workers } = yield* cluster(3, [], service)
  const submit = (name: string, flags: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      const file = Path.join(dir, `${name}.ts`)
      Fs.writeFileSync(file, app(Path.join(dir, `${name}.killed`)))
      const result = yield* execute(kindling[0], [
        ...kindling.slice(1),
        ...clientSubmitArgs(master.url, ...flags, file)
      ], 300_000)
      if (result.code !== 0) return yield* Effect.die(new Error(`the app failed:\n${result.stderr}`))
      return JSON.parse(result.stdout.trim().split("\n").at(-1)!) as ReadonlyArray<Job>
    })
  const own = yield* submit("own", [])
  const served = yield* submit("served", service)

  const widths = [34, 12, 12, 12, 22]
  const seconds = (ms: number) => `${format(ms / 1000, 2)} s`
  console.log("\na shuffle job (12 map tasks of 0.5 s, 3 M records, 200,000 keys, 6 reduces) on 3 workers of 2 cores\n")
  console.log(row(["map outputs served by", "job 1", "job 2", "job 3", "after a kill (map tasks)"], widths))
  for (const [name, jobs] of [["their executors", own], ["the workers' shuffle service", served]] as const) {
    const last = jobs[3]!
    console.log(
      row(
        [name, ...jobs.slice(0, 3).map((j) => seconds(j.millis)), `${seconds(last.millis)} (${last.mapTasks})`],
        widths
      )
    )
  }
  const steady = (jobs: ReadonlyArray<Job>) => Math.min(jobs[1]!.millis, jobs[2]!.millis)
  console.log(row([
    "service ÷ executors",
    "",
    "",
    `${format(steady(served) / steady(own), 2)}×`,
    `${format(served[3]!.millis / own[3]!.millis, 2)}×`
  ], widths))

  // The same kind of job, undisturbed, then with a worker decommissioned once its first wave is in.
  const file = Path.join(dir, "drained.ts")
  Fs.writeFileSync(file, drained)
  const undisturbed = yield* execute(
    kindling[0],
    [...kindling.slice(1), ...clientSubmitArgs(master.url, file)],
    300_000
  )
  const calm = JSON.parse(undisturbed.stdout.trim().split("\n").at(-1)!) as { millis: number }
  const submitted = yield* start(clientSubmitArgs(master.url, file))
  yield* submitted.waitFor(/FIRST WAVE DONE/, 60_000)
  const signalled = Date.now()
  yield* workers[0]!.node.kill("SIGPWR")
  yield* workers[0]!.node.exited
  const exitedAfter = Date.now() - signalled
  yield* submitted.exited
  const output = submitted.output()
  const disturbed = JSON.parse(output.trim().split("\n").filter((line) => line.startsWith("{")).at(-1)!) as {
    millis: number
  }
  const migrated = [...output.matchAll(/Migrating (\d+) map output\(s\)/g)].reduce((sum, m) => sum + Number(m[1]), 0)
  console.log(`\nthe job (12 map tasks of 1 s) with a worker decommissioned after its first wave:`)
  console.log(
    `  undisturbed ${seconds(calm.millis)}, through the decommission ${seconds(disturbed.millis)} ` +
      `(${format(disturbed.millis / calm.millis, 2)}×); ${migrated} map outputs migrated; ` +
      `the worker exited ${seconds(exitedAfter)} after its signal`
  )
}).pipe(Effect.scoped)

await Effect.runPromise(main)
