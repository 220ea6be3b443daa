// The simulated cluster over many seeds (`pnpm bench simulation [first-last]`, default 1-2000): a master, three
// workers, a submitting client, two apps holding executors and one app running a random program of jobs against
// its oracle, under the full fault mix — the cluster's (kills, pauses, partitions, broken and duplicated frames,
// leader changes) and the engine's (full disks, rotten and vanished map outputs, executors crashing at random and
// while they write, serve or fetch map output) — every run checked as in packages/simulation/test/Cluster.test.ts.
// The seeds go out in chunks to one process per core. It prints how much was checked (seeds, steps, faults by kind,
// jobs) and how fast simulated time runs next to the wall clock, and every failing seed, which replays with
// `Cluster.run({ seed })`.
import { Cluster } from "@kindling/simulation"
import * as ChildProcess from "node:child_process"
import * as Os from "node:os"
import { fileURLToPath } from "node:url"
import { format, row } from "./stats.js"

interface Tally {
  seeds: number
  steps: number
  jobs: number
  jobsFailed: number
  simulatedMillis: number
  faults: Record<string, number>
  work: Record<string, number>
  failures: Array<string>
}

const added = (a: Record<string, number>, b: Readonly<Record<string, number>>) =>
  Object.fromEntries(
    [...new Set([...Object.keys(a), ...Object.keys(b)])].map((key) => [key, (a[key] ?? 0) + (b[key] ?? 0)])
  )

const tally = (first: number, last: number): Tally => {
  const sum: Tally = {
    seeds: 0,
    steps: 0,
    jobs: 0,
    jobsFailed: 0,
    simulatedMillis: 0,
    faults: {},
    work: {},
    failures: []
  }
  for (let seed = first; seed <= last; seed++) {
    const outcome = Cluster.run({ seed })
    sum.seeds++
    sum.steps += outcome.steps
    sum.jobs += outcome.jobs
    sum.jobsFailed += outcome.jobsFailed
    sum.simulatedMillis += outcome.simulatedMillis
    for (const fault of outcome.faults) sum.faults[fault.kind] = (sum.faults[fault.kind] ?? 0) + 1
    sum.work = added(sum.work, outcome.work)
    if (outcome.problems.length > 0) sum.failures.push(`seed ${seed}: ${outcome.problems.join(" | ")}`)
  }
  return sum
}

const share = process.env["SIMULATION_SHARE"]
if (share !== undefined) {
  // A child: its share of the seeds, its tally to the parent.
  const [first, last] = share.split("-").map(Number) as [number, number]
  process.send!(tally(first, last))
  process.exit(0)
}

const [first, last] = (process.argv[3] ?? "1-2000").split("-").map(Number) as [number, number]
const processes = Math.max(1, Math.min(Os.availableParallelism(), last - first + 1))
// Seeds go out in chunks, one process a chunk, so that no process lives long: whatever a run leaves behind in
// memory (a fiber still waiting when its world was disposed) goes with its process.
const chunk = 250
const chunks: Array<readonly [number, number]> = []
for (let from = first; from <= last; from += chunk) chunks.push([from, Math.min(last, from + chunk - 1)])
const runChunk = ([from, to]: readonly [number, number]) =>
  new Promise<Tally>((resolve, reject) => {
    const child = ChildProcess.fork(fileURLToPath(import.meta.url), [], {
      env: { ...process.env, SIMULATION_SHARE: `${from}-${to}` },
      execArgv: process.execArgv
    })
    child.once("message", (message) => resolve(message as Tally))
    child.once("exit", (code) => code !== 0 && reject(new Error(`seeds ${from}-${to}: exit ${code}`)))
  })
const started = performance.now()
const results: Array<Tally> = []
let done = 0
let failing = 0
await Promise.all(Array.from({ length: processes }, async () => {
  for (let next = chunks.shift(); next !== undefined; next = chunks.shift()) {
    const result = await runChunk(next)
    results.push(result)
    done += next[1] - next[0] + 1
    failing += result.failures.length
    // Failures as they are found, so that a sweep stopped part way still says what it found.
    for (const failure of result.failures) process.stderr.write(`${failure}\n`)
    process.stderr.write(`${done} seeds (${next[0]}-${next[1]} just now), ${failing} failing so far…\n`)
  }
}))
const wallMillis = performance.now() - started
const total = results.reduce((sum, part) => ({
  seeds: sum.seeds + part.seeds,
  steps: sum.steps + part.steps,
  jobs: sum.jobs + part.jobs,
  jobsFailed: sum.jobsFailed + part.jobsFailed,
  simulatedMillis: sum.simulatedMillis + part.simulatedMillis,
  faults: added(sum.faults, part.faults),
  work: added(sum.work, part.work),
  failures: [...sum.failures, ...part.failures]
}))

const widths = [44, 16]
console.log(`simulated cluster, seeds ${first}-${last}, ${processes} processes at a time\n`)
console.log(row(["seeds checked", format(total.seeds)], widths))
console.log(row(["steps taken", format(total.steps)], widths))
console.log(row(["faults injected", format(Object.values(total.faults).reduce((a, b) => a + b, 0))], widths))
for (const [kind, count] of Object.entries(total.faults).sort()) console.log(row([`  ${kind}`, format(count)], widths))
console.log(row(["jobs run on real executors", format(total.jobs)], widths))
console.log(row(["  failed (typed, injected cause) or cancelled", format(total.jobsFailed)], widths))
for (const [what, amount] of Object.entries(total.work).sort()) console.log(row([`  ${what}`, format(amount)], widths))
console.log(row(["simulated time", `${format(total.simulatedMillis / 3_600_000, 1)} h`], widths))
console.log(row(["wall time", `${format(wallMillis / 1000, 1)} s`], widths))
console.log(row(["wall per seed (per process)", `${format((wallMillis * processes) / total.seeds, 1)} ms`], widths))
console.log(row(["simulated ÷ wall time", `${format(total.simulatedMillis / wallMillis, 0)}×`], widths))
console.log(row(["failing seeds", format(total.failures.length)], widths))
for (const failure of total.failures) console.log(failure)
if (total.failures.length > 0) process.exitCode = 1
