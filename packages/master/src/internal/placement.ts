// `schedule()`: drivers onto shuffled workers, then executors for the waiting apps (reference §5). It runs once,
// at the end of a step that asked for it.
import { Core } from "@kindling/kernel"
import { AppClientMessages as AppClient, Ids, WorkerMessages } from "@kindling/protocol"
import * as Option from "effect/Option"
import * as Scheduling from "../Scheduling.js"
import { launchDriver } from "./drivers.js"
import type { ExecutorEntry, State, Step, WorkerEntry } from "./state.js"
import { addExecutor, coresFree, log, masterUrl, memoryFree, toApp, toWorker } from "./state.js"

// A small, fast, seedable generator (mulberry32): the core's only source of randomness.
export const nextRandom = (state: State): number => {
  state.random = (state.random + 0x6D2B79F5) >>> 0
  let t = state.random
  t = Math.imul(t ^ (t >>> 15), t | 1)
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

export const shuffle = <A>(state: State, items: Array<A>): Array<A> => {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(nextRandom(state) * (i + 1))
    const item = items[i]!
    items[i] = items[j]!
    items[j] = item
  }
  return items
}

export const schedule = (step: Step) => {
  const { state } = step
  if (state.status !== "ALIVE") return
  // Spark shuffles the workers at every pass; with no driver waiting there is nothing to place, and skipping the
  // shuffle keeps a pass over a large cluster with many waiting apps from costing a pass over every worker.
  if (state.waitingDrivers.length > 0) placeDrivers(step)
  startExecutorsOnWorkers(step)
}

const placeDrivers = (step: Step) => {
  const { state } = step
  const alive = shuffle(state, [...state.workers.values()].filter((worker) => worker.state === "ALIVE"))
  // A relaunch waits out its fence (see `relaunchDriver`); the master wakes when the first one has passed.
  const fenced = state.waitingDrivers.filter((driver) => driver.notBefore !== undefined && driver.notBefore > step.now)
  if (fenced.length > 0) {
    const due = Math.min(...fenced.map((driver) => driver.notBefore!))
    Core.startTimer(step, "relaunchDue", { _tag: "RelaunchDue" }, due - step.now)
  }
  const waiting = state.waitingDrivers.filter((driver) => !fenced.includes(driver))
  const placement = Scheduling.placeDrivers(
    waiting.map((driver) => ({ cores: driver.desc.cores, memoryMb: driver.desc.mem })),
    alive.map((worker) => ({ coresFree: coresFree(worker), memoryFreeMb: memoryFree(worker) }))
  )
  waiting.forEach((driver, i) => {
    const at = placement[i]
    if (at === undefined) return
    state.waitingDrivers.splice(state.waitingDrivers.indexOf(driver), 1)
    launchDriver(step, alive[at]!, driver)
  })
}

export const startExecutorsOnWorkers = (step: Step) => {
  const { state } = step
  // Every app needs a core at least, so a worker without a free core is usable by none: the pass looks only at the
  // others (in the same order, so the choice is Spark's), and ends when none is left. With many apps waiting on a
  // full cluster, a pass is then a pass over the apps, not over apps × workers.
  let withFreeCores = [...state.workers.values()].filter((worker) => worker.state === "ALIVE" && coresFree(worker) > 0)
  for (const app of [...state.waitingApps]) {
    if (withFreeCores.length === 0) return
    const coresPerExecutor = Option.getOrUndefined(app.desc.coresPerExecutor)
    const minCores = coresPerExecutor ?? 1
    const coresLeft = Option.getOrElse(app.desc.maxCores, () => state.config.defaultCores) - app.coresGranted
    if (coresLeft < minCores) continue
    // Spark sorts ascending by free cores (stably), then reverses.
    const usable = withFreeCores
      .filter((worker) => memoryFree(worker) >= app.desc.memoryPerExecutorMB && coresFree(worker) >= minCores)
      .sort((a, b) => coresFree(a) - coresFree(b))
      .reverse()
    const assigned = Scheduling.scheduleExecutorsOnWorkers(
      {
        coresPerExecutor,
        memoryPerExecutorMb: app.desc.memoryPerExecutorMB,
        coresLeft,
        executorLimit: app.executorLimit,
        existingExecutors: app.executors.size
      },
      usable.map((worker) => ({ coresFree: coresFree(worker), memoryFreeMb: memoryFree(worker) })),
      state.config.spreadOut
    )
    usable.forEach((worker, i) => {
      const cores = assigned[i]!
      if (cores <= 0) return
      const { coresEach, executors } = Scheduling.allocate(cores, coresPerExecutor)
      for (let n = 0; n < executors; n++) launchExecutor(step, worker, addExecutor(app, worker, coresEach))
      app.state = "RUNNING"
    })
    if (assigned.some((cores) => cores > 0)) withFreeCores = withFreeCores.filter((worker) => coresFree(worker) > 0)
  }
}

export const launchExecutor = (step: Step, worker: WorkerEntry, executor: ExecutorEntry) => {
  log(step, "Info", `Launching executor ${Ids.fullExecutorId(executor.app.id, executor.id)} on worker ${worker.id}`)
  toWorker(
    step,
    worker,
    new WorkerMessages.LaunchExecutor({
      masterUrl: masterUrl(step.state),
      appId: executor.app.id,
      execId: executor.id,
      appDesc: executor.app.desc,
      cores: executor.cores,
      memory: executor.memory,
      resources: {}
    })
  )
  toApp(
    step,
    executor.app,
    new AppClient.ExecutorAdded({
      id: executor.id,
      workerId: worker.id,
      hostPort: `${worker.host}:${worker.port}`,
      cores: executor.cores,
      memory: executor.memory
    })
  )
}
