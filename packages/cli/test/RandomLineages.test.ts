// Random programs over the whole dataset API (the simulated cluster's `Lineages`: random lineages, their oracle on
// plain arrays, functions that throw on a record once or always), on real threads and real processes: in
// `local[2]`; on a cluster of a master and two workers (processes on 127.0.0.1) with two executors of one core, the
// driver in this process (its settings small enough that shuffles spill, results travel on the data plane and
// fetched blocks go to files); and submitted by `kindling submit` to `local-cluster[2,1,1024]`. Every job must end
// with the oracle's answer, or cancelled by its timeout, or failed (typed) with the injected fault; the app's event
// stream must be whole. `LINEAGE_SEEDS=1-500` runs more programs.
import { assert, describe, it } from "@effect/vitest"
import { Cluster, type DriverCore, LocalMode } from "@kindling/driver"
import { Installation } from "@kindling/installation"
import { MasterUrl } from "@kindling/protocol"
import { Deadlines } from "@kindling/protocol/testing"
import { Effect, Layer, Logger, LogLevel } from "effect"
import * as Esbuild from "esbuild"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { clientSettings, cluster, run, temporaryDirectory } from "./fixtures/cluster.js"
import { programs, seedRange } from "./fixtures/lineages.js"

const seeds = process.env["LINEAGE_SEEDS"] ?? "1-20"

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

const quiet = Logger.withMinimumLogLevel(LogLevel.Error)

describe(`random lineages against their oracle, seeds ${seeds}`, () => {
  it.scopedLive("in local[2] (a task's first failure is its last)", () =>
    Effect.gen(function*() {
      const dir = yield* temporaryDirectory
      const { jobs, problems } = yield* programs(dir, false, seedRange(seeds)).pipe(
        Effect.provide(
          LocalMode.layer({
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
        const { jobs, problems } = yield* programs(dir, true, seedRange(seeds)).pipe(
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
              ...clientSettings(),
              validateState: true
            }).pipe(Layer.orDie)
          )
        )
        assert.deepStrictEqual(problems, [])
        assert.isAbove(jobs, 0)
      }).pipe(quiet),
    Deadlines.scaled(300_000)
  )

  // The driver, master and workers of `kindling submit` in one process, as users run local-cluster; executors are
  // processes the workers start. The app is bundled here with the generator it imports.
  it.scopedLive("submitted to local-cluster[2,1,1024]", () =>
    Effect.gen(function*() {
      const dir = yield* temporaryDirectory
      const app = Path.join(dir, "lineages-app.mjs")
      yield* Effect.promise(() =>
        Esbuild.build({
          entryPoints: [fileURLToPath(new URL("fixtures/lineages-app.ts", import.meta.url))],
          outfile: app,
          bundle: true,
          format: "esm",
          platform: "node",
          target: "node20",
          conditions: ["@kindling/source"],
          external: [...Installation.provided, "effect/*", "@effect/*"],
          logLevel: "silent"
        })
      )
      const result = yield* run([
        "submit",
        "--master",
        "local-cluster[2,1,1024]",
        "--conf",
        "kindling.task.maxDirectResultSize=2048",
        "--conf",
        "kindling.debug.validateState=true",
        app,
        dir,
        seeds
      ])
      assert.strictEqual(result.code, 0, result.stderr)
      const line = /^lineages (.*)$/m.exec(result.stdout)
      assert.isNotNull(line, result.stdout)
      const { jobs, problems } = JSON.parse(line![1]!) as { jobs: number; problems: Array<string> }
      assert.deepStrictEqual(problems, [])
      assert.isAbove(jobs, 0)
    }), Deadlines.scaled(300_000))
})
