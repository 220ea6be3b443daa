// Random programs over the whole dataset API (the simulated cluster's `Lineages`: random lineages, their oracle on
// plain arrays, functions that throw on a record once or always), on real threads and real processes: in
// `local[2]`, and on a cluster of a master and two workers (processes on 127.0.0.1) with two executors of one
// core — `local-cluster[2,1,1024]`'s shape — the driver in this process. Every job must end with the oracle's
// answer, or cancelled by its timeout, or failed (typed) with the injected fault; the app's event stream must be
// whole. `LINEAGE_SEEDS=1-500` runs more programs.
import { assert, describe, it } from "@effect/vitest"
import { Cluster, type DriverCore, Kindling, Local } from "@kindling/driver"
import { Simulation } from "@kindling/kernel/testing"
import { MasterUrl } from "@kindling/protocol"
import { EventChecks, Lineages } from "@kindling/simulation"
import { Effect, Layer, Logger, LogLevel, Stream } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import { cluster, temporaryDirectory } from "./fixtures/cluster.js"

const [first, last] = (process.env["LINEAGE_SEEDS"] ?? "1-20").split("-").map(Number) as [number, number]

const driverConfig = (maxFailures: number): DriverCore.Config => ({
  dag: { maxConsecutiveAttempts: 4, resubmitDelayMillis: 200 },
  scheduler: {
    maxFailures,
    cpusPerTask: 1,
    mode: "FIFO",
    speculation: { enabled: false, multiplier: 1.5, quantile: 0.75, minTaskRuntimeMillis: 100 },
    seed: 7
  },
  reviveIntervalMillis: 1000,
  executorTimeoutMillis: 120_000,
  speculationIntervalMillis: 100,
  maxResultSize: 0,
  starvationWarningMillis: 30_000,
  properties: [
    ["kindling.executor.heartbeatInterval", "10000"],
    ["kindling.shuffle.spill.threshold", "4096"],
    ["kindling.task.maxDirectResultSize", "2048"],
    ["kindling.network.maxRemoteBlockSizeFetchToMem", "1024"]
  ]
})

// Runs the seeds' programs in the app in context; what went wrong, by seed.
const programs = (dir: string, retries: boolean) =>
  Effect.gen(function*() {
    const kc = yield* Kindling
    const checks = new EventChecks.EventChecks()
    yield* Effect.forkScoped(Stream.runForEach(yield* kc.subscribe, (event) => Effect.sync(() => checks.record(event))))
    const problems: Array<string> = []
    let jobs = 0
    for (let seed = first; seed <= last; seed++) {
      const programDir = Path.join(dir, `program-${seed}`)
      Fs.mkdirSync(programDir)
      const program = Lineages.program(Simulation.generator(seed), {
        dir: programDir,
        jobs: 4,
        retries,
        faultRate: 0.15,
        cancelRate: 0.05,
        cancelWithinMillis: 500
      })
      for (const input of program.inputs) Fs.writeFileSync(input.path, input.text)
      const exits = yield* Lineages.run(program, { kc, datasets: new Map() })
      exits.forEach((exit, i) => {
        jobs++
        const job = program.jobs[i]!
        const verdict = Lineages.judge(job, exit)
        if (verdict._tag === "Wrong") problems.push(`seed ${seed} job ${i} (${job.label}): ${verdict.problem}`)
        if (verdict._tag === "Failed" && !verdict.reason.includes(Lineages.injected)) {
          problems.push(`seed ${seed} job ${i} (${job.label}) failed for no injected cause: ${verdict.reason}`)
        }
      })
    }
    // The events of the last jobs' ends are let through before the stream is judged.
    yield* Effect.sleep("200 millis")
    return { problems: [...problems, ...checks.problems()], jobs }
  })

const quiet = Logger.withMinimumLogLevel(LogLevel.Error)

describe(`random lineages against their oracle, seeds ${first}-${last}`, () => {
  it.scopedLive("in local[2] (a task's first failure is its last)", () =>
    Effect.gen(function*() {
      const dir = yield* temporaryDirectory
      const { jobs, problems } = yield* programs(dir, false).pipe(
        Effect.provide(
          Local.layer({
            appName: "lineages",
            threads: 2,
            driver: driverConfig(1),
            heartbeatIntervalMillis: 10_000,
            spillThreshold: 4096,
            maxDirectResultSize: 2048,
            validateState: true
          })
        )
      )
      assert.deepStrictEqual(problems, [])
      assert.isAbove(jobs, 0)
    }).pipe(quiet), 240_000)

  it.scopedLive(
    "on a cluster of two workers, two executors of one core (a failed task is retried)",
    () =>
      Effect.gen(function*() {
        const { dir, master } = yield* cluster(2)
        // Every function travels as source text: the app executors import is an empty module.
        const app = Path.join(dir, "app.mjs")
        Fs.writeFileSync(app, "export {}\n")
        const { jobs, problems } = yield* programs(dir, true).pipe(
          Effect.provide(
            Cluster.layer({
              appName: "lineages",
              masters: yield* MasterUrl.parse(master.url),
              masterUrl: master.url,
              host: "127.0.0.1",
              appUrl: pathToFileURL(app).href,
              driver: driverConfig(4),
              executorMemoryMB: 1024,
              executorCores: 1,
              maxCores: 2,
              minRegisteredRatio: 1,
              maxRegisteredWaitMillis: 30_000,
              rpc: {},
              validateState: true
            }).pipe(Layer.orDie)
          )
        )
        assert.deepStrictEqual(problems, [])
        assert.isAbove(jobs, 0)
      }).pipe(quiet),
    300_000
  )
})
