// The cost of event logs. (1) Empty-task throughput — jobs of 10,000 one-element tasks through the built
// `kindling submit` — with `kindling.eventLog.enabled=true`, next to the same runs with it off, alternating, best
// job of each; target ≥ 0.9×. (2) Replay: how fast the history server reads a log of a 100,000-task stage (parse,
// decode against Spark's schemas, fold into the app status), plain and gzip'd, next to folding the same events
// straight into an app status in the same process — the floor any replay has to pay.
import type { AppEvents } from "@kindling/app"
import { AppStatus, EventLogReader, EventLogWriter } from "@kindling/monitoring"
import * as Effect from "effect/Effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { emptyTasks } from "./emptyTasks.js"
import { stageEvents } from "./stageEvents.js"
import { format, row } from "./stats.js"

const tasks = 10_000
const rounds = 3

const throughput = async (master: string) => {
  const logs = Fs.mkdtempSync(Path.join(Os.tmpdir(), "kindling-bench-events-"))
  const best = { on: Number.POSITIVE_INFINITY, off: Number.POSITIVE_INFINITY }
  for (let round = 0; round < rounds; round++) {
    for (const log of ["off", "on"] as const) {
      const flags = [
        "--conf",
        "kindling.ui.enabled=false",
        "--conf",
        `kindling.eventLog.enabled=${log === "on"}`,
        "--conf",
        `kindling.eventLog.dir=${logs}`
      ]
      const outcome = await emptyTasks({ master, runs: 3, tasks, flags })
      best[log] = Math.min(best[log], ...outcome.runMillis)
    }
  }
  Fs.rmSync(logs, { recursive: true, force: true })
  return { on: tasks / (best.on / 1000), off: tasks / (best.off / 1000) }
}

const writeLog = (events: ReadonlyArray<AppEvents.AppEvent>, dir: string, compress: boolean) =>
  Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const log = yield* EventLogWriter.start(
      { dir, compress, properties: [] },
      { name: "bench", user: "bench", startTime: 0, version: "bench" }
    )
    log.setAppId("bench-app")
    log.add(events)
  })))

const best = (runs: number, f: () => void) => {
  let fastest = Number.POSITIVE_INFINITY
  for (let i = 0; i < runs; i++) {
    const started = performance.now()
    f()
    fastest = Math.min(fastest, performance.now() - started)
  }
  return fastest
}

const main = async () => {
  console.log(
    `Empty-task throughput, ${format(tasks)} one-element tasks per job, best job of ${rounds} alternating runs each\n`
  )
  const widths = [26, 16, 16, 10]
  console.log(row(["", "log off tasks/s", "log on tasks/s", "on ÷ off"], widths))
  for (const master of ["local[2]", "local-cluster[2,1,1024]"]) {
    const { off, on } = await throughput(master)
    console.log(row([master, format(off), format(on), format(on / off, 2)], widths))
  }

  const n = 100_000
  const events = stageEvents(n)
  const fold = best(3, () => {
    const status = AppStatus.make()
    for (const event of events) AppStatus.apply(status, event)
  })
  console.log(`\nReplaying a log of one ${format(n)}-task stage (${format(events.length)} events), best of 3, ms\n`)
  const replayWidths = [22, 12, 12, 14, 16]
  console.log(row(["", "log size", "replay", "fold alone", "replay ÷ fold"], replayWidths))
  for (const compress of [false, true]) {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "kindling-bench-replay-"))
    await writeLog(events, dir, compress)
    const [name] = Fs.readdirSync(dir)
    const path = Path.join(dir, name!)
    let read: EventLogReader.AppLog | undefined
    const replay = best(3, () => {
      read = EventLogReader.read(path)
    })
    if (read?.status.stages.get("0.0")?.numCompleteTasks !== n) throw new Error("the replayed stage is not complete")
    console.log(
      row([
        compress ? "gzip" : "plain",
        `${format(Fs.statSync(path).size / 2 ** 20, 1)} MiB`,
        format(replay, 0),
        format(fold, 0),
        format(replay / fold, 1)
      ], replayWidths)
    )
    Fs.rmSync(dir, { recursive: true, force: true })
  }
}

await main()
