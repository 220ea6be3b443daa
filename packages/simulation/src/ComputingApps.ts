/**
 * The simulated cluster's computing apps: real drivers (`Cluster.make` of `@kindling/driver`), each running a
 * random program of jobs (`Lineages`) on real executors that the workers start, with their shuffle files, spills,
 * persisted blocks, input and output on the simulated disks. Each app draws its settings: speculation on or off,
 * tasks queued on executors beyond their cores or not, a spill threshold of a few KiB (so that aggregations and sorts spill), results and fetched blocks small enough
 * to go through the data plane and into files.
 *
 * What they must show, checked when the run is over: every job ended exactly once, with the oracle's answer, or
 * cancelled by its timeout, or with a typed failure whose cause the run injected (never an internal error); the
 * app's event stream is whole (`EventChecks`); and the app finished.
 *
 * @since 0.1.0
 */
import type { AppEvents } from "@kindling/app"
import { Cluster as AppCluster, type ExecutorAllocation } from "@kindling/driver"
import type { Simulation } from "@kindling/kernel/testing"
import type { RpcAddress } from "@kindling/protocol"
import { RpcEnv } from "@kindling/rpc"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Stream from "effect/Stream"
import { EventChecks } from "./EventChecks.js"
import { sideDraws } from "./internal/sideDraws.js"
import * as Lineages from "./Lineages.js"
import type * as SimDisk from "./SimDisk.js"

/**
 * What the world gives the computing apps.
 *
 * @since 0.1.0
 * @category models
 */
export interface Context {
  readonly sim: Simulation.Simulation
  readonly disk: SimDisk.SimDisk
  readonly master: RpcAddress.RpcAddress
  readonly seed: number
  readonly random: () => number
}

/**
 * Causes of a typed failure that a faulty cluster may give a job: faults injected in its functions or on its
 * disks, outputs lost too often in a row, results lost with their executor, the app given up by its master or
 * giving up on one it could never reach.
 *
 * @since 0.1.0
 */
export const injectedCauses: ReadonlyArray<string> = [
  Lineages.injected,
  "ENOSPC",
  "has failed the maximum allowable number of times",
  "could not be read",
  "Master removed our application",
  "All masters are unresponsive",
  "No master reachable"
]

const driverPort = 6000

/**
 * @since 0.1.0
 * @category models
 */
export interface ComputingApps {
  readonly names: ReadonlyArray<string>
  /** When each app starts, in simulated milliseconds from the start of the run. */
  readonly starts: ReadonlyArray<number>
  /** Starts each app's driver at its time. */
  readonly start: () => void
  /** When each app finished its jobs. */
  readonly ended: ReadonlyMap<string, number>
  readonly jobs: number
  /** Jobs that failed (typed, for a cause of the run's) or were cancelled instead of answering. */
  readonly jobsFailed: () => number
  /** What the engine did for the jobs, as their events tell: bytes spilled and shuffled, blocks kept, … */
  readonly work: Readonly<Record<string, number>>
  readonly problems: () => ReadonlyArray<string>
}

// Dynamic allocation for some apps, drawn apart from `random` so that the rest of a seed's run stays as it was: a
// few executors at most, idle ones given back after 1–5 s (between the jobs of an app), shuffle tracking on or off
// (off, executors holding map outputs go too, and their outputs are computed again).
const allocationOf = (seed: number, app: number): ExecutorAllocation.Config | undefined => {
  const next = sideDraws(seed, app)
  if (next() >= 0.4) return undefined
  const minExecutors = Math.floor(next() * 2)
  return {
    minExecutors,
    maxExecutors: minExecutors + 1 + Math.floor(next() * 3),
    initialExecutors: Math.floor(next() * 3),
    tasksPerExecutor: 1,
    allocationRatio: 1,
    backlogTimeoutMillis: 1_000,
    sustainedBacklogTimeoutMillis: 1_000,
    idleTimeoutMillis: 1_000 + Math.floor(next() * 4_000),
    cachedIdleTimeoutMillis: next() < 0.5 ? Infinity : 10_000,
    shuffleTracking: next() < 0.7,
    shuffleTrackingTimeoutMillis: Infinity
  }
}

// Tasks queued on executors beyond their cores (`queuedTasksPerCore`) for most apps, drawn apart as above: most of
// those queue whatever their tasks take (the simulated tasks run 5–400 ms, mostly over the 50 ms below which a
// driver's default queues), the rest only stages of short tasks.
const queuingOf = (seed: number, app: number) => {
  const next = sideDraws(seed, 2000 + app)
  return {
    queuedTasksPerCore: next() < 0.3 ? 0 : 1 + Math.floor(next() * 4),
    queuedTaskMaxMillis: next() < 0.7 ? 60_000 : 50
  }
}

/**
 * `count` apps, their programs drawn with the world's random numbers.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (context: Context, count: number): ComputingApps => {
  const { disk, master, random, sim } = context
  const between = (min: number, max: number) => min + Math.floor(random() * (max - min + 1))
  const apps = Array.from({ length: count }, (_, i) => {
    const name = `jobs-${i + 1}`
    return {
      name,
      at: between(1_000, 30_000),
      program: Lineages.program(random, {
        dir: `/data/${name}`,
        jobs: between(2, 5),
        retries: true,
        cancelRate: 0.1,
        cancelWithinMillis: 5_000
      }),
      maxCores: between(2, 6),
      speculation: random() < 0.4,
      spillThreshold: between(512, 8_192),
      maxDirectResultSize: between(256, 65_536),
      maxInMemoryBlock: between(8, 128),
      allocation: allocationOf(context.seed, i),
      // Half of the apps have the workers' shuffle services serve their map outputs (drawn apart, as above).
      shuffleService: sideDraws(context.seed, 1000 + i)() < 0.5,
      queuing: queuingOf(context.seed, i)
    }
  })
  const ended = new Map<string, number>()
  const work: Record<string, number> = {}
  const tally = (what: string, amount = 1) => {
    work[what] = (work[what] ?? 0) + amount
  }
  const countWork = (event: AppEvents.AppEvent) => {
    switch (event._tag) {
      case "TaskStart":
        return tally("tasks launched")
      case "TaskEnd":
        if (!event.succeeded) tally("tasks failed or killed")
        tally("bytes spilled", event.metrics.spilledBytes ?? 0)
        tally("shuffle bytes written", event.metrics.shuffleBytesWritten ?? 0)
        return tally("shuffle bytes fetched from other executors", event.metrics.shuffleRemoteBytesRead ?? 0)
      case "StageCompleted":
        if (event.failureReason?.startsWith("fetch failed") === true) tally("stage attempts ended by a fetch failure")
        return
      case "BlockUpdated":
        return tally(event.diskSize > 0 ? "partitions persisted on disk" : "partitions persisted in memory")
    }
  }
  const outcomes = new Map<string, Array<Lineages.Verdict>>()
  const found: Array<string> = []

  const program = (app: (typeof apps)[number]) =>
    Effect.gen(function*() {
      yield* Effect.sleep(app.at)
      const kc = yield* AppCluster.make({
        appName: app.name,
        masters: [master],
        masterUrl: `kindling://${master.host}:${master.port}`,
        host: app.name,
        // Simulated executors run inline tasks and import nothing.
        appUrl: "sim:app",
        files: disk.disk,
        driver: {
          dag: { maxConsecutiveAttempts: 4, resubmitDelayMillis: 200 },
          scheduler: {
            maxFailures: 4,
            cpusPerTask: 1,
            mode: "FIFO",
            speculation: { enabled: app.speculation, multiplier: 1.5, quantile: 0.75, minTaskRuntimeMillis: 100 },
            seed: context.seed,
            ...app.queuing
          },
          reviveIntervalMillis: 1_000,
          executorTimeoutMillis: 30_000,
          speculationIntervalMillis: 100,
          maxResultSize: 0,
          starvationWarningMillis: 30_000,
          allocation: app.allocation,
          properties: [
            ["kindling.executor.heartbeatInterval", "3000"],
            ["kindling.network.timeout", "30000"],
            ["kindling.rpc.askTimeout", "10000"],
            ["kindling.task.maxDirectResultSize", String(app.maxDirectResultSize)],
            ["kindling.shuffle.spill.threshold", String(app.spillThreshold)],
            ["kindling.network.maxRemoteBlockSizeFetchToMem", String(app.maxInMemoryBlock)],
            ["kindling.shuffle.service.enabled", String(app.shuffleService)]
          ]
        },
        executorMemoryMB: 1024,
        executorCores: undefined,
        maxCores: app.maxCores,
        minRegisteredRatio: 0,
        maxRegisteredWaitMillis: 30_000,
        rpc: {},
        validateState: true
      })
      const checks = new EventChecks()
      yield* Effect.forkScoped(
        Stream.runForEach(yield* kc.subscribe, (event) =>
          Effect.sync(() => {
            checks.record(event)
            countWork(event)
          }))
      )
      disk.disk.makeDirectory(`/data/${app.name}`)
      for (const input of app.program.inputs) disk.disk.writeFile(input.path, new TextEncoder().encode(input.text))
      const exits = yield* Lineages.run(app.program, { kc, datasets: new Map() })
      exits.forEach((exit, index) => {
        const job = app.program.jobs[index]!
        const verdict = Lineages.judge(job, exit)
        const key = `${app.name} job ${index} (${job.label})`
        sim.note(`${key} ended: ${Exit.isSuccess(exit) ? "success" : Cause.pretty(exit.cause).split("\n")[0]}`)
        outcomes.set(key, [...outcomes.get(key) ?? [], verdict])
      })
      // Events published with a job's end may still be on their way to the listener: it gets a moment.
      yield* Effect.sleep(1_000)
      for (const problem of checks.problems()) found.push(`${app.name}: ${problem}`)
      ended.set(app.name, yield* Effect.clockWith((clock) => clock.currentTimeMillis))
    }).pipe(Effect.scoped, Effect.provide(RpcEnv.layer({ host: app.name, port: driverPort })))

  const verdicts = () => [...outcomes.values()].flat()
  return {
    names: apps.map((app) => app.name),
    starts: apps.map((app) => app.at),
    start: () => {
      for (const app of apps) sim.start(app.name, program(app))
    },
    ended,
    jobs: apps.reduce((sum, app) => sum + app.program.jobs.length, 0),
    jobsFailed: () => verdicts().filter((verdict) => verdict._tag === "Failed" || verdict._tag === "Cancelled").length,
    work,
    problems: () => {
      const problems = [...found]
      for (const app of apps) {
        if (!ended.has(app.name)) problems.push(`${app.name} never finished its jobs`)
        app.program.jobs.forEach((job, index) => {
          const key = `${app.name} job ${index} (${job.label})`
          const ends = outcomes.get(key) ?? []
          if (ends.length !== 1) problems.push(`${key} ended ${ends.length} times`)
          for (const verdict of ends) {
            if (verdict._tag === "Wrong") problems.push(`${key}: ${verdict.problem}`)
            if (verdict._tag === "Failed" && !injectedCauses.some((cause) => verdict.reason.includes(cause))) {
              problems.push(`${key} failed for no cause of the run's: ${verdict.reason.slice(0, 300)}`)
            }
          }
        })
      }
      return problems
    }
  }
}
