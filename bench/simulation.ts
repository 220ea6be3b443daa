// The simulated cluster over many seeds (`pnpm bench simulation [first-last]`, default 1-2000): a master, three
// workers, a submitting client, two apps holding executors and one app running jobs under seeded faults, every
// run checked as in packages/simulation/test/Cluster.test.ts. It prints how much was checked (seeds, steps,
// faults, jobs) and how fast simulated time runs next to the wall clock, and every failing seed, which replays
// with `Cluster.run({ seed })`.
import { Cluster } from "@kindling/simulation"
import { format, row } from "./stats.js"

const [first, last] = (process.argv[3] ?? "1-2000").split("-").map(Number) as [number, number]
let steps = 0
let jobs = 0
let jobsFailed = 0
let simulatedMillis = 0
const faults = new Map<string, number>()
const failures: Array<string> = []
const started = performance.now()
for (let seed = first; seed <= last; seed++) {
  const outcome = Cluster.run({ seed })
  steps += outcome.steps
  jobs += outcome.jobs
  jobsFailed += outcome.jobsFailed
  simulatedMillis += outcome.simulatedMillis
  for (const fault of outcome.faults) faults.set(fault.kind, (faults.get(fault.kind) ?? 0) + 1)
  if (outcome.problems.length > 0) failures.push(`seed ${seed}: ${outcome.problems.join(" | ")}`)
  if ((seed - first + 1) % 250 === 0) process.stderr.write(`${seed - first + 1} seeds…\n`)
}
const wallMillis = performance.now() - started
const seeds = last - first + 1

const widths = [34, 16]
console.log(`simulated cluster, seeds ${first}-${last}\n`)
console.log(row(["seeds checked", format(seeds)], widths))
console.log(row(["steps taken", format(steps)], widths))
console.log(row(["faults injected", format([...faults.values()].reduce((a, b) => a + b, 0))], widths))
for (const [kind, count] of [...faults].sort()) console.log(row([`  ${kind}`, format(count)], widths))
console.log(row(["jobs run on real executors", format(jobs)], widths))
console.log(row(["  failed (typed) instead of answering", format(jobsFailed)], widths))
console.log(row(["simulated time", `${format(simulatedMillis / 3_600_000, 1)} h`], widths))
console.log(row(["wall time", `${format(wallMillis / 1000, 1)} s`], widths))
console.log(row(["wall per seed", `${format(wallMillis / seeds, 1)} ms`], widths))
console.log(row(["simulated ÷ wall time", `${format(simulatedMillis / wallMillis, 0)}×`], widths))
console.log(row(["failing seeds", format(failures.length)], widths))
for (const failure of failures) console.log(failure)
if (failures.length > 0) process.exitCode = 1
