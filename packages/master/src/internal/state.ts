// The master's records, and what every part of a step uses: its commands and recommendations, and the
// accounting of cores and memory as drivers and executors come and go.
import { Core } from "@kindling/kernel"
import type { Codec, Descriptions, Endpoints, RpcAddress, States } from "@kindling/protocol"
import { Errors, Ids } from "@kindling/protocol"
import type { RpcEnv } from "@kindling/rpc"
import * as Exit from "effect/Exit"
import type { Config, Local, MasterCommand } from "../MasterCore.js"

export interface ExecutorEntry {
  readonly app: AppEntry
  readonly worker: WorkerEntry
  readonly id: number
  readonly cores: number
  readonly memory: number
  state: States.ExecutorState
}

export interface WorkerEntry {
  readonly id: Ids.WorkerId
  readonly host: string
  readonly port: number
  readonly endpoint: RpcAddress.RefOf<"Worker">
  readonly webUiAddress: string
  readonly cores: number
  readonly memory: number
  readonly resources: Descriptions.Resources
  state: States.WorkerState
  lastHeartbeat: number
  /**
   * How long after sending its last acknowledged heartbeat the worker's supervised drivers are surely stopped, when it
   * fences them (see `HeartbeatAcknowledged`): its drivers are relaunched no earlier than that after `lastHeartbeat`.
   */
  readonly driverFenceMillis: number | undefined
  /**
   * The connection the worker registered (or answered recovery) on: only its loss removes the worker, whatever
   * another connection claims to be. Undefined for a stored worker that has not answered yet.
   */
  connection: RpcEnv.ConnectionId | undefined
  coresUsed: number
  memoryUsed: number
  readonly executors: Map<string, ExecutorEntry>
  readonly drivers: Map<Ids.DriverId, DriverEntry>
}

export interface AppEntry {
  readonly id: Ids.AppId
  readonly desc: Descriptions.ApplicationDescription
  readonly driver: RpcAddress.RefOf<"AppClient">
  readonly startTime: number
  readonly submitDate: number
  state: States.ApplicationState
  /** The connection its driver registered (or acknowledged recovery) on; its loss finishes the app. */
  connection: RpcEnv.ConnectionId | undefined
  coresGranted: number
  /**
   * The most cores it has held at once: what a completed app's cores are shown as, since its executors usually end
   * (their cores given back) before its driver unregisters it.
   */
  peakCoresGranted: number
  readonly executors: Map<number, ExecutorEntry>
  /** Executors killed because the app asked (dynamic allocation), whose end their workers have yet to report. */
  readonly killedExecutors: Set<number>
  /** Executors of decommissioned workers, which the app no longer counts: their ends are expected, and not told. */
  readonly decommissionedExecutors: Set<number>
  nextExecutorId: number
  retryCount: number
  executorLimit: number
  endTime: number | undefined
}

export interface DriverEntry {
  readonly id: Ids.DriverId
  readonly desc: Descriptions.DriverDescription
  readonly startTime: number
  readonly submitDate: number
  state: States.DriverState
  worker: WorkerEntry | undefined
  exception: Descriptions.RemoteException | undefined
  /**
   * How long a copy of this driver may run on, cut off, past its worker's last heartbeat (persisted): for a relaunch
   * still waiting, its predecessor's worker's fence (see `notBefore`); once launched, its own worker's. Kept on the
   * driver because the worker's own record may be gone first (a decommissioned worker's is) while the copy runs.
   */
  fenceMillis: number | undefined
  /** When a fenced relaunch may be launched at the earliest, by this master's clock. */
  notBefore: number | undefined
  /** The worker a fenced relaunch's predecessor may still run on. */
  readonly fencedOn: Ids.WorkerId | undefined
}

// The master's state (public as `MasterCore.State`, to be read through its accessors).
export interface State {
  readonly config: Config
  status: States.RecoveryState
  /** Every worker, DEAD ones included until they are forgotten, in registration order. */
  readonly workers: Map<Ids.WorkerId, WorkerEntry>
  /** Registered (not DEAD) workers by id and by RPC address. */
  readonly idToWorker: Map<Ids.WorkerId, WorkerEntry>
  readonly addressToWorker: Map<string, WorkerEntry>
  readonly apps: Map<Ids.AppId, AppEntry>
  readonly addressToApp: Map<string, AppEntry>
  /** Every active app, in registration order (Spark's `waitingApps`: apps that may want more executors). */
  readonly waitingApps: Array<AppEntry>
  completedApps: Array<AppEntry>
  readonly drivers: Map<Ids.DriverId, DriverEntry>
  readonly waitingDrivers: Array<DriverEntry>
  completedDrivers: Array<DriverEntry>
  nextAppNumber: number
  nextDriverNumber: number
  random: number
  /** When this master was last elected: no worker's lease granted by an earlier leader runs past that plus its fence. */
  leadingSince: number | undefined
}

/**
 * One step in progress: its commands, and what its transitions recommend. Transitions do not call the scheduler
 * or recovery themselves; they say they want them, and `step` runs each at most once at the end, when the state
 * has settled (as Dask's `handle_stimulus` drains recommendations). `step` is not re-entrant, so one buffer
 * serves.
 */
export interface Step extends Core.Out<Local, MasterCommand> {
  readonly state: State
  readonly wants: { schedule: boolean; recoveryCheck: boolean }
  /** The connection the message being handled came on, if the input is a message. */
  readonly connection: RpcEnv.ConnectionId | undefined
  /** The listening address of the node that sent the message being handled, when it has one. */
  readonly sender: RpcAddress.RpcAddress | undefined
}

export const wantSchedule = (step: Step) => {
  step.wants.schedule = true
}

export const wantRecoveryCheck = (step: Step) => {
  step.wants.recoveryCheck = true
}

export const log = (step: Step, level: "Info" | "Warning", message: string) => Core.log(step, level, message)

// A registered worker or app is talked to on the connection it registered on, the one its liveness follows: what
// is sent there is either received or its loss removes the peer, never lost without a trace on another connection.
export const toWorker = (step: Step, worker: WorkerEntry, message: Endpoints.Inbound["Worker"]) =>
  Core.send(step, worker.endpoint, message, worker.connection)

export const toApp = (step: Step, app: AppEntry, message: Endpoints.Inbound["AppClient"]) =>
  Core.send(step, app.driver, message, app.connection)

// An answer goes back on the connection the message came on.
export const answer = <M extends Codec.Message>(step: Step, to: RpcAddress.Ref<M>, message: M) =>
  Core.send(step, to, message, step.connection)

export const masterUrl = (state: State) => state.config.self.address.url

// The refusal of a master that is not ALIVE, worded for what was asked (Spark says "submissions" for everything).
export const notAlive = (
  state: State,
  action:
    | "accept driver submissions"
    | "accept artifacts"
    | "kill drivers"
    | "report driver status"
    | "clear completed drivers and apps"
): Exit.Exit<never, Errors.MasterNotAlive> => Exit.fail(new Errors.MasterNotAlive({ state: state.status, action }))

export const attachDriver = (driver: DriverEntry, worker: WorkerEntry) => {
  driver.worker = worker
  worker.drivers.set(driver.id, driver)
  worker.coresUsed += driver.desc.cores
  worker.memoryUsed += driver.desc.mem
}

export const detachDriver = (driver: DriverEntry) => {
  const worker = driver.worker
  if (worker === undefined || !worker.drivers.delete(driver.id)) return
  worker.coresUsed -= driver.desc.cores
  worker.memoryUsed -= driver.desc.mem
}

export const addExecutor = (app: AppEntry, worker: WorkerEntry, cores: number, id?: number): ExecutorEntry => {
  const execId = id ?? app.nextExecutorId
  app.nextExecutorId = Math.max(app.nextExecutorId, execId + 1)
  const executor: ExecutorEntry = {
    app,
    worker,
    id: execId,
    cores,
    memory: app.desc.memoryPerExecutorMB,
    state: "LAUNCHING"
  }
  app.executors.set(execId, executor)
  app.coresGranted += cores
  app.peakCoresGranted = Math.max(app.peakCoresGranted, app.coresGranted)
  worker.executors.set(Ids.fullExecutorId(app.id, execId), executor)
  worker.coresUsed += cores
  worker.memoryUsed += executor.memory
  return executor
}

export const removeExecutorFromApp = (executor: ExecutorEntry) => {
  if (executor.app.executors.get(executor.id) !== executor) return
  executor.app.executors.delete(executor.id)
  executor.app.coresGranted -= executor.cores
}

export const releaseExecutor = (executor: ExecutorEntry) => {
  const { worker } = executor
  if (!worker.executors.delete(Ids.fullExecutorId(executor.app.id, executor.id))) return
  worker.coresUsed -= executor.cores
  worker.memoryUsed -= executor.memory
}

export const coresFree = (worker: WorkerEntry) => worker.cores - worker.coresUsed

export const memoryFree = (worker: WorkerEntry) => worker.memory - worker.memoryUsed

// A new app record: nothing granted yet.
export const newApp = (
  fields: Pick<
    AppEntry,
    "id" | "desc" | "driver" | "startTime" | "submitDate" | "state" | "executorLimit" | "connection"
  >
): AppEntry => ({
  // Every field named, not spread: on Node 20, V8 gave each object cloned by this spread a map of its own after the
  // eighth, and the scheduling pass reads these records by the thousand (15× slower with a map each).
  id: fields.id,
  desc: fields.desc,
  driver: fields.driver,
  startTime: fields.startTime,
  submitDate: fields.submitDate,
  state: fields.state,
  executorLimit: fields.executorLimit,
  connection: fields.connection,
  coresGranted: 0,
  peakCoresGranted: 0,
  executors: new Map(),
  killedExecutors: new Set(),
  decommissionedExecutors: new Set(),
  nextExecutorId: 0,
  retryCount: 0,
  endTime: undefined
})

// A new worker record: nothing running on it yet.
export const newWorker = (
  fields: Pick<
    WorkerEntry,
    | "id"
    | "host"
    | "port"
    | "endpoint"
    | "webUiAddress"
    | "cores"
    | "memory"
    | "resources"
    | "state"
    | "lastHeartbeat"
    | "driverFenceMillis"
    | "connection"
  >
): WorkerEntry => ({
  // Named, not spread, as in `newApp`.
  id: fields.id,
  host: fields.host,
  port: fields.port,
  endpoint: fields.endpoint,
  webUiAddress: fields.webUiAddress,
  cores: fields.cores,
  memory: fields.memory,
  resources: fields.resources,
  state: fields.state,
  lastHeartbeat: fields.lastHeartbeat,
  driverFenceMillis: fields.driverFenceMillis,
  connection: fields.connection,
  coresUsed: 0,
  memoryUsed: 0,
  executors: new Map(),
  drivers: new Map()
})
