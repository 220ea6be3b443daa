/**
 * The JSON Spark's master and worker UIs answer at `/json` (its `JsonProtocol.writeMasterState` and
 * `writeWorkerState`), built from Kindling's state snapshots: the same keys, types and units, so scripts and
 * dashboards written for Spark's standalone cluster read a Kindling cluster unchanged. Memory is in MB and
 * times in epoch milliseconds, as Spark's.
 *
 * @since 0.1.0
 */
import * as Option from "effect/Option"
import type { ApplicationDescription, DriverDescription, Resources } from "./Descriptions.js"
import type {
  ApplicationInfo,
  DriverInfo,
  ExecutorRunnerInfo,
  MasterStateResponse,
  WorkerInfo,
  WorkerStateResponse
} from "./QueryMessages.js"

const days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
const months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
const two = (n: number) => String(n).padStart(2, "0")

/**
 * A moment as Java's `Date.toString` writes it (in UTC): `Fri Dec 04 08:20:17 UTC 2026`.
 *
 * @since 0.1.0
 * @category formatting
 */
export const javaDate = (epochMillis: number): string => {
  const d = new Date(epochMillis)
  return `${days[d.getUTCDay()]} ${months[d.getUTCMonth()]} ${two(d.getUTCDate())} ${two(d.getUTCHours())}:${
    two(d.getUTCMinutes())
  }:${two(d.getUTCSeconds())} UTC ${d.getUTCFullYear()}`
}

// Spark's `writeResourcesInfo`: {name: {name, addresses}}.
const resources = (held: Resources) =>
  Object.fromEntries(
    Object.entries(held).map(([name, info]) => [name, { name: info.name, addresses: [...info.addresses] }])
  )

const free = (total: Resources, used: Resources) =>
  Object.fromEntries(
    Object.entries(total).map(([name, info]) => {
      const taken = new Set(used[name]?.addresses ?? [])
      return [name, { name, addresses: info.addresses.filter((address) => !taken.has(address)) }]
    })
  )

// Spark's `writeResourceRequirement` list: [{name, amount}].
const requirements = (desc: ApplicationDescription | DriverDescription) =>
  ("resourceReqsPerExecutor" in desc ? desc.resourceReqsPerExecutor : desc.resourceReqs).map((req) => ({
    name: req.resourceName,
    amount: req.amount
  }))

/**
 * A worker as the master's `/json` lists it.
 *
 * @since 0.1.0
 * @category encoding
 */
export const workerInfo = (worker: WorkerInfo) => ({
  id: worker.id,
  host: worker.host,
  port: worker.port,
  webuiaddress: worker.webUiAddress,
  cores: worker.cores,
  coresused: worker.coresUsed,
  coresfree: worker.cores - worker.coresUsed,
  memory: worker.memory,
  memoryused: worker.memoryUsed,
  memoryfree: worker.memory - worker.memoryUsed,
  resources: resources(worker.resources),
  resourcesused: resources(worker.resourcesUsed),
  resourcesfree: free(worker.resources, worker.resourcesUsed),
  state: worker.state,
  lastheartbeat: worker.lastHeartbeat
})

/**
 * An app as the master's `/json` lists it; `now` gives a running app's duration.
 *
 * @since 0.1.0
 * @category encoding
 */
export const applicationInfo = (app: ApplicationInfo, now: number) => ({
  id: app.id,
  starttime: app.startTime,
  name: app.desc.name,
  cores: app.coresGranted,
  user: app.desc.user,
  memoryperexecutor: app.desc.memoryPerExecutorMB,
  memoryperslave: app.desc.memoryPerExecutorMB,
  resourcesperexecutor: requirements(app.desc),
  resourcesperslave: requirements(app.desc),
  submitdate: javaDate(app.submitDate),
  state: app.state,
  duration: Option.getOrElse(app.endTime, () => now) - app.startTime
})

/**
 * A driver as the master's `/json` lists it.
 *
 * @since 0.1.0
 * @category encoding
 */
export const driverInfo = (driver: DriverInfo) => ({
  id: driver.id,
  starttime: String(driver.startTime),
  state: driver.state,
  cores: driver.desc.cores,
  memory: driver.desc.mem,
  resources: resources(driver.resources),
  submitdate: javaDate(driver.submitDate),
  worker: Option.getOrElse(driver.workerId, () => "None"),
  mainclass: mainClass(driver.desc)
})

/**
 * What Spark shows as a driver's main class: for a Kindling driver, whose "main class" is its app, the name of
 * the app's file (the last part of its URL).
 *
 * @since 0.1.0
 */
export const mainClass = (desc: DriverDescription): string =>
  desc.appUrl.split(/[/\\]/).filter(Boolean).at(-1) ?? desc.appUrl

/**
 * The master's `/json`: `url` is the master's `kindling://` URL.
 *
 * @since 0.1.0
 * @category encoding
 */
export const masterState = (state: MasterStateResponse, now: number) => {
  const alive = state.workers.filter((worker) => worker.state === "ALIVE")
  const sum = (f: (worker: WorkerInfo) => number) => alive.reduce((total, worker) => total + f(worker), 0)
  return {
    url: `kindling://${state.host}:${state.port}`,
    workers: state.workers.map(workerInfo),
    aliveworkers: alive.length,
    cores: sum((w) => w.cores),
    coresused: sum((w) => w.coresUsed),
    memory: sum((w) => w.memory),
    memoryused: sum((w) => w.memoryUsed),
    resources: alive.map((w) => resources(w.resources)),
    resourcesused: alive.map((w) => resources(w.resourcesUsed)),
    activeapps: state.activeApps.map((app) => applicationInfo(app, now)),
    completedapps: state.completedApps.map((app) => applicationInfo(app, now)),
    activedrivers: state.activeDrivers.map(driverInfo),
    completeddrivers: state.completedDrivers.map(driverInfo),
    status: state.status
  }
}

const executorRunner = (executor: ExecutorRunnerInfo) => ({
  id: executor.execId,
  memory: executor.memory,
  resources: resources(executor.resources),
  appid: executor.appId,
  appdesc: {
    name: executor.appDesc.name,
    cores: Option.getOrElse(executor.appDesc.maxCores, () => 0),
    memoryperexecutor: executor.appDesc.memoryPerExecutorMB,
    resourcesperexecutor: requirements(executor.appDesc),
    memoryperslave: executor.appDesc.memoryPerExecutorMB,
    resourcesperslave: requirements(executor.appDesc),
    user: executor.appDesc.user,
    command: commandString(executor.appDesc)
  }
})

// Spark writes the executor command's `toString`; Kindling's is the module and its arguments.
const commandString = (desc: ApplicationDescription) =>
  `Command(${desc.command.mainModule}, ${JSON.stringify(desc.command.arguments)})`

/**
 * A worker's `/json`.
 *
 * @since 0.1.0
 * @category encoding
 */
export const workerState = (state: WorkerStateResponse) => ({
  id: state.workerId,
  masterurl: Option.getOrElse(state.masterUrl, () => ""),
  masterwebuiurl: Option.getOrElse(state.masterWebUiUrl, () => ""),
  cores: state.cores,
  coresused: state.coresUsed,
  memory: state.memory,
  memoryused: state.memoryUsed,
  resources: resources(state.resources),
  resourcesused: resources(state.resourcesUsed),
  executors: state.executors.map(executorRunner),
  finishedexecutors: state.finishedExecutors.map(executorRunner)
})
