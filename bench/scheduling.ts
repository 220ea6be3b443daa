// Scheduling.scheduleExecutorsOnWorkers on a large cluster (10,000 workers × 64 cores, memory to spare, an app
// with no cores cap and no executor limit) next to the literal port of Spark 3.3's loop, which hands out one
// unit of cores per iteration, on the same inputs in the same run; both must give the same answer.
import { Scheduling } from "@kindling/master"
import * as Spark from "../packages/master/test/fixtures/sparkScheduling.js"
import { format, row } from "./stats.js"

const workers: ReadonlyArray<Scheduling.FreeResources> = Array.from(
  { length: 10_000 },
  () => ({ coresFree: 64, memoryFreeMb: 1 << 20 })
)

// Milliseconds per call: the fastest of the calls made in about `millis` (at least `least` of them), since on a
// shared machine everything slower than the fastest run is interference.
const millisPerCall = (body: () => void, millis: number, least: number) => {
  let best = Infinity
  const started = performance.now()
  for (let calls = 0; calls < least || performance.now() - started < millis; calls++) {
    const before = performance.now()
    body()
    best = Math.min(best, performance.now() - before)
  }
  return best
}

const ms = (millis: number) => `${format(millis, millis < 10 ? 3 : 0)} ms`

console.log(`scheduleExecutorsOnWorkers, ${format(workers.length)} workers × 64 cores, per call\n`)
const widths = [30, 12, 14, 10]
console.log(row(["", "Kindling", "Spark's loop", "speed-up"], widths))
const unlimited = { memoryPerExecutorMb: 1024, coresLeft: Infinity, executorLimit: Infinity, existingExecutors: 0 }
const cases: ReadonlyArray<readonly [string, Scheduling.ExecutorDemand, boolean]> = [
  ["spread out, cpe unset", { ...unlimited, coresPerExecutor: undefined }, true],
  ["spread out, cpe 4", { ...unlimited, coresPerExecutor: 4 }, true],
  ["packed, cpe unset", { ...unlimited, coresPerExecutor: undefined }, false],
  ["packed, cpe 4", { ...unlimited, coresPerExecutor: 4 }, false],
  // The unlimited app takes every core, which never needs the round robin's partial passes; a cap does.
  ["spread out, cpe 4, cap 99,998", { ...unlimited, coresPerExecutor: 4, coresLeft: 99_998 }, true]
]
for (const [name, app, spreadOut] of cases) {
  const ours = Scheduling.scheduleExecutorsOnWorkers(app, workers, spreadOut)
  const theirs = Spark.scheduleExecutorsOnWorkers(app, workers, spreadOut)
  if (ours.length !== theirs.length || ours.some((cores, i) => cores !== theirs[i])) {
    throw new Error(`the two disagree: ${name}`)
  }
  const oursMillis = millisPerCall(() => Scheduling.scheduleExecutorsOnWorkers(app, workers, spreadOut), 1000, 20)
  const theirsMillis = millisPerCall(() => Spark.scheduleExecutorsOnWorkers(app, workers, spreadOut), 0, 2)
  console.log(row([name, ms(oursMillis), ms(theirsMillis), `${format(theirsMillis / oursMillis, 0)}×`], widths))
}
console.log("\ntarget: ≥ 10× faster than Spark's loop")
