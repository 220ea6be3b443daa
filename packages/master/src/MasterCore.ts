/**
 * The master's logic as a deterministic state machine: `step(state, input)` applies one input (a decoded
 * message, a disconnect, a timer tick, a leadership change) and returns the commands that carry out its
 * effects (messages to send, records to persist, a timer to arm) and, for an ask, the reply. It does no I/O,
 * reads no clock (inputs carry `now`) and draws randomness only from the seeded generator in its state, so a
 * whole cluster can be replayed and checked in a test. Semantics are Spark 3.3's `Master` (see
 * reference/spark-standalone-protocol.md §2–§5).
 *
 * The state is owned by the core: `step` updates it in place (Spark's master keeps tens of thousands of
 * workers and apps, and copying them per heartbeat would be the master's main cost) and nothing else may
 * change it; `snapshot` gives an immutable view.
 *
 * @since 0.1.0
 */
import {
  AppClientMessages as AppClient,
  type Codec,
  type Descriptions,
  EndpointNames,
  Errors,
  Ids,
  QueryMessages,
  RpcAddress,
  States,
  SubmissionMessages,
  WorkerMessages
} from "@kindling/protocol"
import * as Exit from "effect/Exit"
import { absurd } from "effect/Function"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Scheduling from "./Scheduling.js"

/**
 * Everything the master endpoint accepts.
 *
 * @since 0.1.0
 * @category models
 */
export const Inbound = Schema.Union(
  WorkerMessages.WorkerToMaster,
  SubmissionMessages.SubmissionRequest,
  AppClient.AppClientToMaster,
  QueryMessages.MasterQuery
)
/**
 * @since 0.1.0
 * @category models
 */
export type Inbound = typeof Inbound.Type

/**
 * @since 0.1.0
 * @category models
 */
export interface Config {
  /** Where this master's endpoint is: the `self` of every message it sends. */
  readonly self: RpcAddress.RpcEndpointRef
  readonly webUiUrl: string
  readonly webUiPort: number
  readonly restPort: number | undefined
  readonly workerTimeoutMillis: number
  readonly deadWorkerPersistence: number
  readonly recoveryTimeoutMillis: number
  readonly retainedApplications: number
  readonly retainedDrivers: number
  readonly spreadOut: boolean
  readonly defaultCores: number
  readonly maxExecutorRetries: number
  /** Seeds the generator that shuffles workers for driver placement. */
  readonly seed: number
}

/**
 * What persistence holds, and what a newly elected master recovers from.
 *
 * @since 0.1.0
 * @category models
 */
export interface Stored {
  readonly apps: ReadonlyArray<QueryMessages.ApplicationInfo>
  readonly drivers: ReadonlyArray<QueryMessages.DriverInfo>
  readonly workers: ReadonlyArray<QueryMessages.WorkerInfo>
}

/**
 * @since 0.1.0
 * @category models
 */
export type Input =
  | {
    readonly _tag: "Receive"
    readonly message: Inbound
    /** The listening address of the sending node, when it has one. */
    readonly sender: RpcAddress.RpcAddress | undefined
    readonly now: number
  }
  | { readonly _tag: "Disconnected"; readonly peer: RpcAddress.RpcAddress; readonly now: number }
  | { readonly _tag: "ElectedLeader"; readonly stored: Stored; readonly now: number }
  | { readonly _tag: "RevokedLeadership"; readonly now: number }
  | { readonly _tag: "CheckForWorkerTimeOut"; readonly now: number }
  | { readonly _tag: "CompleteRecovery"; readonly now: number }

/**
 * A record the persistence engine keeps, by kind and id (Spark's `app_<id>`, `driver_<id>`, `worker_<id>`).
 *
 * @since 0.1.0
 * @category models
 */
export type Record =
  | { readonly kind: "app"; readonly value: QueryMessages.ApplicationInfo }
  | { readonly kind: "driver"; readonly value: QueryMessages.DriverInfo }
  | { readonly kind: "worker"; readonly value: QueryMessages.WorkerInfo }

/**
 * @since 0.1.0
 * @category models
 */
export type Command =
  | { readonly _tag: "Send"; readonly to: RpcAddress.RpcEndpointRef; readonly message: Codec.Message }
  | { readonly _tag: "Persist"; readonly record: Record }
  | { readonly _tag: "Unpersist"; readonly kind: Record["kind"]; readonly id: string }
  | { readonly _tag: "ScheduleCompleteRecovery"; readonly afterMillis: number }
  | { readonly _tag: "Exit"; readonly code: number }
  | { readonly _tag: "Log"; readonly level: "Info" | "Warning"; readonly message: string }

/**
 * @since 0.1.0
 * @category models
 */
export interface Output {
  readonly commands: ReadonlyArray<Command>
  /** The answer to an ask; undefined for every other input. */
  readonly reply: Exit.Exit<unknown, unknown> | undefined
}

// ---- the master's records -------------------------------------------------------------------------------

interface ExecutorEntry {
  readonly app: AppEntry
  readonly worker: WorkerEntry
  readonly id: number
  readonly cores: number
  readonly memory: number
  state: States.ExecutorState
}

interface WorkerEntry {
  readonly id: Ids.WorkerId
  readonly host: string
  readonly port: number
  readonly endpoint: RpcAddress.RpcEndpointRef
  readonly webUiAddress: string
  readonly cores: number
  readonly memory: number
  readonly resources: Descriptions.Resources
  state: States.WorkerState
  lastHeartbeat: number
  coresUsed: number
  memoryUsed: number
  readonly executors: Map<string, ExecutorEntry>
  readonly drivers: Map<Ids.DriverId, DriverEntry>
}

interface AppEntry {
  readonly id: Ids.AppId
  readonly desc: Descriptions.ApplicationDescription
  readonly driver: RpcAddress.RpcEndpointRef
  readonly startTime: number
  readonly submitDate: number
  state: States.ApplicationState
  coresGranted: number
  readonly executors: Map<number, ExecutorEntry>
  nextExecutorId: number
  retryCount: number
  executorLimit: number
  endTime: number | undefined
}

interface DriverEntry {
  readonly id: Ids.DriverId
  readonly desc: Descriptions.DriverDescription
  readonly startTime: number
  readonly submitDate: number
  state: States.DriverState
  worker: WorkerEntry | undefined
  exception: Descriptions.RemoteException | undefined
}

/**
 * The master's state. Opaque: read it through `snapshot` and the accessors below.
 *
 * @since 0.1.0
 * @category models
 */
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
}

/**
 * A master that has not been elected: STANDBY, as Spark's master starts.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (config: Config): State => ({
  config,
  status: "STANDBY",
  workers: new Map(),
  idToWorker: new Map(),
  addressToWorker: new Map(),
  apps: new Map(),
  addressToApp: new Map(),
  waitingApps: [],
  completedApps: [],
  drivers: new Map(),
  waitingDrivers: [],
  completedDrivers: [],
  nextAppNumber: 0,
  nextDriverNumber: 0,
  random: config.seed >>> 0
})

// ---- one step -----------------------------------------------------------------------------------------

// The commands of the step being taken; `step` is not re-entrant, so one buffer serves.
interface Step {
  readonly state: State
  readonly now: number
  readonly commands: Array<Command>
}

const send = (step: Step, to: RpcAddress.RpcEndpointRef, message: Codec.Message) =>
  step.commands.push({ _tag: "Send", to, message })

const log = (step: Step, level: "Info" | "Warning", message: string) =>
  step.commands.push({ _tag: "Log", level, message })

const masterUrl = (state: State) => state.config.self.address.url

const notAlive = (state: State) => Exit.fail(new Errors.MasterNotAlive({ state: state.status }))

/**
 * Applies one input.
 *
 * @since 0.1.0
 * @category transitions
 */
export const step = (state: State, input: Input): Output => {
  const current: Step = { state, now: input.now, commands: [] }
  let reply: Exit.Exit<unknown, unknown> | undefined
  switch (input._tag) {
    case "Receive":
      reply = receive(current, input.message)
      break
    case "Disconnected":
      disconnected(current, input.peer)
      break
    case "ElectedLeader":
      electedLeader(current, input.stored)
      break
    case "RevokedLeadership":
      log(current, "Warning", "Leadership has been revoked; the master exits")
      current.commands.push({ _tag: "Exit", code: 0 })
      break
    case "CheckForWorkerTimeOut":
      timeOutDeadWorkers(current)
      break
    case "CompleteRecovery":
      completeRecovery(current)
      break
  }
  return { commands: current.commands, reply }
}

const receive = (step: Step, message: Inbound): Exit.Exit<unknown, unknown> | undefined => {
  const { state } = step
  switch (message._tag) {
    case "RegisterWorker":
      return registerWorkerRequest(step, message)
    case "Heartbeat": {
      const worker = state.idToWorker.get(message.workerId)
      if (worker !== undefined) worker.lastHeartbeat = step.now
      else if (state.workers.has(message.workerId)) {
        log(step, "Warning", `Got heartbeat from unregistered worker ${message.workerId}; asking it to re-register`)
        send(step, message.worker, new WorkerMessages.ReconnectWorker({ masterUrl: masterUrl(state) }))
      } else {
        log(step, "Warning", `Got heartbeat from unknown worker ${message.workerId}; ignored`)
      }
      return undefined
    }
    case "ExecutorStateChanged":
      executorStateChanged(step, message)
      return Exit.succeed(true)
    case "DriverStateChanged":
      if (
        message.state === "ERROR" || message.state === "FINISHED" || message.state === "KILLED" ||
        message.state === "FAILED"
      ) {
        removeDriver(step, message.driverId, message.state, Option.getOrUndefined(message.exception))
      } else {
        log(step, "Warning", `Unexpected state ${message.state} for driver ${message.driverId}; ignored`)
      }
      return undefined
    case "WorkerSchedulerStateResponse":
      workerSchedulerStateResponse(step, message)
      return undefined
    case "WorkerLatestState":
      workerLatestState(step, message)
      return undefined
    case "WorkerDecommissioning":
      if (state.status === "STANDBY") send(step, message.workerRef, new WorkerMessages.MasterInStandby())
      else {
        const worker = state.idToWorker.get(message.id)
        if (worker !== undefined) decommissionWorker(step, worker)
      }
      return undefined
    case "RequestSubmitDriver":
      return submitDriver(step, message.driverDescription)
    case "RequestKillDriver":
      return killDriverRequest(step, message.driverId)
    case "RequestDriverStatus":
      return driverStatus(step, message.driverId)
    case "RequestKillAllDrivers": {
      if (state.status !== "ALIVE") return notAlive(state)
      for (const driver of [...state.drivers.values()]) killDriver(step, driver)
      return Exit.succeed(
        new SubmissionMessages.KillAllDriversResponse({
          master: state.config.self,
          success: true,
          message: "Kill request for all drivers submitted"
        })
      )
    }
    case "RequestClearCompletedDriversAndApps":
      if (state.status !== "ALIVE") return notAlive(state)
      state.completedApps = []
      state.completedDrivers = []
      return Exit.succeed(true)
    case "RequestReadyz":
      return Exit.succeed(state.status !== "STANDBY")
    case "RegisterApplication":
      registerApplicationRequest(step, message)
      return undefined
    case "UnregisterApplication": {
      const app = state.apps.get(message.appId)
      if (app !== undefined) removeApplication(step, app, "FINISHED")
      return undefined
    }
    case "MasterChangeAcknowledged": {
      const app = state.apps.get(message.appId)
      if (app !== undefined) app.state = "WAITING"
      else log(step, "Warning", `Attempted to acknowledge the master change for unknown app ${message.appId}`)
      if (canCompleteRecovery(state)) completeRecovery(step)
      return undefined
    }
    case "RequestExecutors": {
      const app = state.apps.get(message.appId)
      if (app === undefined) return Exit.fail(new Errors.AppNotFound({ appId: message.appId }))
      log(step, "Info", `Application ${app.id} requested to set total executors to ${message.requestedTotal}`)
      app.executorLimit = message.requestedTotal
      schedule(step)
      return Exit.succeed(true)
    }
    case "KillExecutors":
      return killExecutorsRequest(step, message)
    case "RequestMasterState":
      return Exit.succeed(masterState(state))
    case "DecommissionWorkersOnHosts": {
      if (state.status === "STANDBY") return Exit.succeed(0)
      const hosts = new Set(message.hostnames.map((host) => host.toLowerCase()))
      const matched = [...state.addressToWorker.values()].filter((worker) => hosts.has(worker.host.toLowerCase()))
      for (const worker of matched) decommissionWorker(step, worker)
      return Exit.succeed(matched.length)
    }
    case "BoundPortsRequest":
      return Exit.succeed(
        new QueryMessages.BoundPortsResponse({
          rpcEndpointPort: state.config.self.address.port,
          webUIPort: state.config.webUiPort,
          restPort: Option.fromNullable(state.config.restPort)
        })
      )
    default:
      // A message the cases above do not handle is a compile error here.
      return absurd(message)
  }
}

// ---- workers ------------------------------------------------------------------------------------------

const workerKey = (worker: { readonly endpoint: RpcAddress.RpcEndpointRef }) => RpcAddress.key(worker.endpoint.address)

const registerWorkerRequest = (step: Step, message: WorkerMessages.RegisterWorker): undefined => {
  const { state } = step
  if (state.status === "STANDBY") {
    send(step, message.worker, new WorkerMessages.MasterInStandby())
    return
  }
  const registered = (duplicate: boolean) =>
    new WorkerMessages.RegisteredWorker({
      master: state.config.self,
      masterWebUiUrl: state.config.webUiUrl,
      masterAddress: message.masterAddress,
      duplicate
    })
  if (state.idToWorker.has(message.id)) {
    log(step, "Warning", `Worker ${message.id} registered again with the same id`)
    send(step, message.worker, registered(true))
    return
  }
  const worker: WorkerEntry = {
    id: message.id,
    host: message.host,
    port: message.port,
    endpoint: message.worker,
    webUiAddress: message.workerWebUiUrl,
    cores: message.cores,
    memory: message.memory,
    resources: message.resources,
    state: "ALIVE",
    lastHeartbeat: step.now,
    coresUsed: 0,
    memoryUsed: 0,
    executors: new Map(),
    drivers: new Map()
  }
  if (!registerWorker(step, worker)) {
    send(
      step,
      message.worker,
      new WorkerMessages.RegisterWorkerFailed({
        message: `Attempted to re-register worker at same address: ${message.worker.address.hostPort}`
      })
    )
    return
  }
  log(step, "Info", `Registering worker ${worker.host}:${worker.port} with ${worker.cores} cores, ${worker.memory} MB`)
  persistWorker(step, worker)
  send(step, message.worker, registered(false))
  schedule(step)
}

const registerWorker = (step: Step, worker: WorkerEntry): boolean => {
  const { state } = step
  // A worker may come back on the address it had before it was marked DEAD; forget the dead entries there.
  for (const old of [...state.workers.values()]) {
    if (old.host === worker.host && old.port === worker.port && old.state === "DEAD") state.workers.delete(old.id)
  }
  const key = workerKey(worker)
  const old = state.addressToWorker.get(key)
  if (old !== undefined) {
    if (old.state !== "UNKNOWN") return false
    // The old entry is from before a restart and never answered; the new registration replaces it.
    removeWorker(step, old, "Worker replaced by a new worker with same address")
  }
  state.workers.set(worker.id, worker)
  state.idToWorker.set(worker.id, worker)
  state.addressToWorker.set(key, worker)
  return true
}

const removeWorker = (step: Step, worker: WorkerEntry, reason: string) => {
  const { state } = step
  log(step, "Info", `Removing worker ${worker.id} on ${worker.host}:${worker.port}: ${reason}`)
  worker.state = "DEAD"
  state.idToWorker.delete(worker.id)
  if (state.addressToWorker.get(workerKey(worker)) === worker) state.addressToWorker.delete(workerKey(worker))
  for (const executor of [...worker.executors.values()]) {
    workerGone(step, executor, "LOST", "worker lost")
    removeExecutorFromApp(executor)
    releaseExecutor(executor)
  }
  for (const driver of [...worker.drivers.values()]) {
    if (driver.desc.supervise) {
      log(step, "Info", `Re-launching ${driver.id}`)
      relaunchDriver(step, driver)
    } else {
      log(step, "Info", `Not re-launching ${driver.id} because it was not supervised`)
      removeDriver(step, driver.id, "ERROR", undefined)
    }
  }
  for (const app of state.apps.values()) {
    send(step, app.driver, new AppClient.WorkerRemoved({ id: worker.id, host: worker.host, message: reason }))
  }
  step.commands.push({ _tag: "Unpersist", kind: "worker", id: worker.id })
  schedule(step)
}

// Tells an executor's app that its worker is lost or decommissioned (with the host, so the driver can drop the
// host's shuffle outputs), and marks the executor so.
const workerGone = (step: Step, executor: ExecutorEntry, state: "LOST" | "DECOMMISSIONED", message: string) => {
  send(
    step,
    executor.app.driver,
    new AppClient.ExecutorUpdated({
      id: executor.id,
      state,
      message: Option.some(message),
      exitStatus: Option.none(),
      workerHost: Option.some(executor.worker.host)
    })
  )
  executor.state = state
}

const decommissionWorker = (step: Step, worker: WorkerEntry) => {
  if (worker.state === "DECOMMISSIONED") return
  log(step, "Info", `Decommissioning worker ${worker.id} on ${worker.host}:${worker.port}`)
  worker.state = "DECOMMISSIONED"
  for (const executor of [...worker.executors.values()]) {
    workerGone(step, executor, "DECOMMISSIONED", "worker decommissioned")
  }
  step.commands.push({ _tag: "Unpersist", kind: "worker", id: worker.id })
}

const timeOutDeadWorkers = (step: Step) => {
  const { state } = step
  const timeout = state.config.workerTimeoutMillis
  const silent = [...state.workers.values()].filter((worker) => worker.lastHeartbeat < step.now - timeout)
  const expired = silent.filter((worker) => worker.state !== "DEAD")
  // All of them are dead before any is removed: removing one reschedules its drivers, which must not land
  // on another worker that is about to be removed in this same pass.
  for (const worker of expired) worker.state = "DEAD"
  for (const worker of expired) {
    removeWorker(step, worker, `Not receiving heartbeat for ${Math.floor(timeout / 1000)} seconds`)
  }
  for (const worker of silent) {
    if (
      !expired.includes(worker) && worker.lastHeartbeat < step.now - (state.config.deadWorkerPersistence + 1) * timeout
    ) {
      state.workers.delete(worker.id)
    }
  }
}

const workerSchedulerStateResponse = (step: Step, message: WorkerMessages.WorkerSchedulerStateResponse) => {
  const { state } = step
  const worker = state.idToWorker.get(message.id)
  if (worker === undefined) {
    log(step, "Warning", `Scheduler state from unknown worker: ${message.id}`)
    return
  }
  log(step, "Info", `Worker has been re-registered: ${message.id}`)
  worker.state = "ALIVE"
  for (const { desc } of message.execResponses) {
    const app = state.apps.get(desc.appId)
    if (app === undefined) continue
    const executor = addExecutor(app, worker, desc.cores, desc.execId)
    executor.state = desc.state
  }
  for (const { driverId } of message.driverResponses) {
    const driver = state.drivers.get(driverId)
    if (driver === undefined) continue
    driver.state = "RUNNING"
    attachDriver(driver, worker)
  }
  if (canCompleteRecovery(state)) completeRecovery(step)
}

const workerLatestState = (step: Step, message: WorkerMessages.WorkerLatestState) => {
  const { state } = step
  const worker = state.idToWorker.get(message.id)
  if (worker === undefined) {
    log(step, "Warning", `Worker state from unknown worker: ${message.id}`)
    return
  }
  // A worker that has not answered MasterChanged yet re-registered before the answer arrived; until it does
  // answer, the master does not know what it runs, and must not kill it.
  if (worker.state === "UNKNOWN") return
  for (const executor of message.executors) {
    if (!worker.executors.has(Ids.fullExecutorId(executor.appId, executor.execId))) {
      send(
        step,
        worker.endpoint,
        new WorkerMessages.KillExecutor({ masterUrl: masterUrl(state), appId: executor.appId, execId: executor.execId })
      )
    }
  }
  for (const driverId of message.driverIds) {
    if (!worker.drivers.has(driverId)) send(step, worker.endpoint, new WorkerMessages.KillDriver({ driverId }))
  }
}

// ---- drivers ------------------------------------------------------------------------------------------

const createDriver = (step: Step, desc: Descriptions.DriverDescription): DriverEntry => {
  const { state } = step
  const id = Ids.makeDriverId(new Date(step.now), state.nextDriverNumber++)
  return {
    id,
    desc,
    startTime: step.now,
    submitDate: step.now,
    state: "SUBMITTED",
    worker: undefined,
    exception: undefined
  }
}

const submitDriver = (step: Step, desc: Descriptions.DriverDescription): Exit.Exit<unknown, unknown> => {
  const { state } = step
  if (state.status !== "ALIVE") return notAlive(state)
  const driver = createDriver(step, desc)
  log(step, "Info", `Driver submitted ${driver.id}`)
  persistDriver(step, driver)
  state.drivers.set(driver.id, driver)
  state.waitingDrivers.push(driver)
  schedule(step)
  return Exit.succeed(
    new SubmissionMessages.SubmitDriverResponse({
      master: state.config.self,
      success: true,
      driverId: Option.some(driver.id),
      message: `Driver successfully submitted as ${driver.id}`
    })
  )
}

const killDriver = (step: Step, driver: DriverEntry) => {
  const { state } = step
  const waiting = state.waitingDrivers.indexOf(driver)
  if (waiting >= 0) {
    state.waitingDrivers.splice(waiting, 1)
    removeDriver(step, driver.id, "KILLED", undefined)
  } else if (driver.worker !== undefined) {
    send(step, driver.worker.endpoint, new WorkerMessages.KillDriver({ driverId: driver.id }))
  }
}

const killDriverRequest = (step: Step, driverId: Ids.DriverId): Exit.Exit<unknown, unknown> => {
  const { state } = step
  if (state.status !== "ALIVE") return notAlive(state)
  log(step, "Info", `Asked to kill driver ${driverId}`)
  const driver = state.drivers.get(driverId)
  if (driver === undefined) {
    return Exit.fail(new Errors.DriverNotFound({ driverId, detail: "has already finished or does not exist" }))
  }
  killDriver(step, driver)
  return Exit.succeed(
    new SubmissionMessages.KillDriverResponse({
      master: state.config.self,
      driverId,
      success: true,
      message: `Kill request for ${driverId} submitted`
    })
  )
}

const driverStatus = (step: Step, driverId: Ids.DriverId): Exit.Exit<unknown, unknown> => {
  const { state } = step
  if (state.status !== "ALIVE") return notAlive(state)
  const driver = state.drivers.get(driverId) ?? state.completedDrivers.find((d) => d.id === driverId)
  if (driver === undefined) return Exit.fail(new Errors.DriverNotFound({ driverId }))
  return Exit.succeed(
    new SubmissionMessages.DriverStatusResponse({
      found: true,
      state: Option.some(driver.state),
      workerId: Option.fromNullable(driver.worker?.id),
      workerHostPort: Option.fromNullable(driver.worker && `${driver.worker.host}:${driver.worker.port}`),
      exception: Option.fromNullable(driver.exception)
    })
  )
}

const attachDriver = (driver: DriverEntry, worker: WorkerEntry) => {
  driver.worker = worker
  worker.drivers.set(driver.id, driver)
  worker.coresUsed += driver.desc.cores
  worker.memoryUsed += driver.desc.mem
}

const detachDriver = (driver: DriverEntry) => {
  const worker = driver.worker
  if (worker === undefined || !worker.drivers.delete(driver.id)) return
  worker.coresUsed -= driver.desc.cores
  worker.memoryUsed -= driver.desc.mem
}

const launchDriver = (step: Step, worker: WorkerEntry, driver: DriverEntry) => {
  log(step, "Info", `Launching driver ${driver.id} on worker ${worker.id}`)
  attachDriver(driver, worker)
  driver.state = "RUNNING"
  send(
    step,
    worker.endpoint,
    new WorkerMessages.LaunchDriver({ driverId: driver.id, driverDesc: driver.desc, resources: {} })
  )
  // Persisted again with its worker, so a recovering master knows it was launched (Spark persists drivers only
  // on submission, and a restarted master then fails drivers that were still waiting).
  persistDriver(step, driver)
}

const removeDriver = (
  step: Step,
  driverId: Ids.DriverId,
  finalState: States.DriverState,
  exception: Descriptions.RemoteException | undefined
) => {
  const { state } = step
  const driver = state.drivers.get(driverId)
  if (driver === undefined) {
    log(step, "Warning", `Asked to remove unknown driver: ${driverId}`)
    return
  }
  log(step, "Info", `Removing driver: ${driverId}`)
  state.drivers.delete(driverId)
  const waiting = state.waitingDrivers.indexOf(driver)
  if (waiting >= 0) state.waitingDrivers.splice(waiting, 1)
  retain(state.completedDrivers, state.config.retainedDrivers)
  state.completedDrivers.push(driver)
  step.commands.push({ _tag: "Unpersist", kind: "driver", id: driverId })
  driver.state = finalState
  driver.exception = exception
  detachDriver(driver)
  schedule(step)
}

const relaunchDriver = (step: Step, driver: DriverEntry) => {
  // The relaunched driver gets a new id: the old one may still be running behind a network partition, and
  // its reports must not be taken for the new one's.
  removeDriver(step, driver.id, "RELAUNCHING", undefined)
  const relaunched = createDriver(step, driver.desc)
  persistDriver(step, relaunched)
  step.state.drivers.set(relaunched.id, relaunched)
  step.state.waitingDrivers.push(relaunched)
  schedule(step)
}

// ---- applications and executors -------------------------------------------------------------------------

const registerApplicationRequest = (step: Step, message: AppClient.RegisterApplication) => {
  const { state } = step
  if (state.status === "STANDBY") return // a standby master drops registrations; the client tries the others
  const app: AppEntry = {
    id: Ids.makeAppId(new Date(step.now), state.nextAppNumber++),
    desc: message.appDescription,
    driver: message.driver,
    startTime: step.now,
    submitDate: step.now,
    state: "WAITING",
    coresGranted: 0,
    executors: new Map(),
    nextExecutorId: 0,
    retryCount: 0,
    executorLimit: Option.getOrElse(message.appDescription.initialExecutorLimit, () => Infinity),
    endTime: undefined
  }
  if (!registerApplication(step, app)) return
  log(step, "Info", `Registered app ${app.desc.name} with ID ${app.id}`)
  persistApp(step, app)
  send(step, message.driver, new AppClient.RegisteredApplication({ appId: app.id, master: state.config.self }))
  schedule(step)
}

const registerApplication = (step: Step, app: AppEntry): boolean => {
  const { state } = step
  const key = RpcAddress.key(app.driver.address)
  if (state.addressToApp.has(key)) {
    log(step, "Info", `Attempted to re-register application at same address: ${app.driver.address.hostPort}`)
    return false
  }
  state.apps.set(app.id, app)
  state.addressToApp.set(key, app)
  state.waitingApps.push(app)
  return true
}

const removeApplication = (step: Step, app: AppEntry, finalState: States.ApplicationState) => {
  const { state } = step
  if (!state.apps.has(app.id)) return
  log(step, "Info", `Removing app ${app.id}`)
  state.apps.delete(app.id)
  state.addressToApp.delete(RpcAddress.key(app.driver.address))
  retain(state.completedApps, state.config.retainedApplications)
  state.completedApps.push(app)
  const waiting = state.waitingApps.indexOf(app)
  if (waiting >= 0) state.waitingApps.splice(waiting, 1)
  for (const executor of [...app.executors.values()]) {
    removeExecutorFromApp(executor)
    killExecutor(step, executor)
  }
  app.state = finalState
  app.endTime = step.now
  if (finalState !== "FINISHED") send(step, app.driver, new AppClient.ApplicationRemoved({ message: finalState }))
  step.commands.push({ _tag: "Unpersist", kind: "app", id: app.id })
  schedule(step)
  // Workers clean up the app's local dirs once none of its executors is left.
  for (const worker of state.workers.values()) {
    if (worker.state !== "DEAD") send(step, worker.endpoint, new WorkerMessages.ApplicationFinished({ id: app.id }))
  }
}

const addExecutor = (app: AppEntry, worker: WorkerEntry, cores: number, id?: number): ExecutorEntry => {
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
  worker.executors.set(Ids.fullExecutorId(app.id, execId), executor)
  worker.coresUsed += cores
  worker.memoryUsed += executor.memory
  return executor
}

const removeExecutorFromApp = (executor: ExecutorEntry) => {
  if (executor.app.executors.get(executor.id) !== executor) return
  executor.app.executors.delete(executor.id)
  executor.app.coresGranted -= executor.cores
}

const releaseExecutor = (executor: ExecutorEntry) => {
  const { worker } = executor
  if (!worker.executors.delete(Ids.fullExecutorId(executor.app.id, executor.id))) return
  worker.coresUsed -= executor.cores
  worker.memoryUsed -= executor.memory
}

const killExecutor = (step: Step, executor: ExecutorEntry) => {
  log(
    step,
    "Info",
    `Killing executor ${Ids.fullExecutorId(executor.app.id, executor.id)} on worker ${executor.worker.id}`
  )
  releaseExecutor(executor)
  send(
    step,
    executor.worker.endpoint,
    new WorkerMessages.KillExecutor({ masterUrl: masterUrl(step.state), appId: executor.app.id, execId: executor.id })
  )
  executor.state = "KILLED"
}

const executorStateChanged = (step: Step, message: WorkerMessages.ExecutorStateChanged) => {
  const { state } = step
  const app = state.apps.get(message.appId)
  const executor = app?.executors.get(message.execId)
  if (app === undefined || executor === undefined) {
    log(step, "Warning", `Got status update for unknown executor ${message.appId}/${message.execId}`)
    return
  }
  const oldState = executor.state
  if (!States.canMove(States.executorMoves, oldState, message.state)) {
    log(
      step,
      "Warning",
      `Executor ${message.appId}/${message.execId} reported ${message.state} while ${oldState}; ignored`
    )
    return
  }
  executor.state = message.state
  if (message.state === "RUNNING") app.retryCount = 0
  send(
    step,
    app.driver,
    new AppClient.ExecutorUpdated({
      id: message.execId,
      state: message.state,
      message: message.message,
      exitStatus: message.exitStatus,
      workerHost: Option.none()
    })
  )
  if (States.isExecutorFinished(message.state)) {
    log(step, "Info", `Removing executor ${message.appId}/${message.execId} because it is ${message.state}`)
    removeExecutorFromApp(executor)
    releaseExecutor(executor)
    const normalExit = Option.getOrUndefined(message.exitStatus) === 0
    const retries = state.config.maxExecutorRetries
    if (!normalExit && oldState !== "DECOMMISSIONED") {
      app.retryCount += 1
      if (retries >= 0 && app.retryCount >= retries) {
        const running = [...app.executors.values()].some((e) => e.state === "RUNNING")
        if (!running) {
          log(
            step,
            "Warning",
            `Application ${app.desc.name} with ID ${app.id} failed ${app.retryCount} times; removing it`
          )
          removeApplication(step, app, "FAILED")
        }
      }
    }
  }
  schedule(step)
}

const killExecutorsRequest = (step: Step, message: AppClient.KillExecutors): Exit.Exit<unknown, unknown> => {
  const { state } = step
  const app = state.apps.get(message.appId)
  if (app === undefined) return Exit.fail(new Errors.AppNotFound({ appId: message.appId }))
  log(step, "Info", `Application ${app.id} requests to kill executors: ${message.executorIds.join(", ")}`)
  // Spark drops ids that are not integers.
  const ids = message.executorIds.filter((id) => /^\d+$/.test(id)).map(Number)
  for (const id of ids) {
    const executor = app.executors.get(id)
    if (executor === undefined) {
      log(step, "Warning", `Application ${app.id} attempted to kill non-existent executor ${id}`)
      continue
    }
    removeExecutorFromApp(executor)
    killExecutor(step, executor)
  }
  schedule(step)
  return Exit.succeed(true)
}

// ---- scheduling -----------------------------------------------------------------------------------------

// A small, fast, seedable generator (mulberry32): the core's only source of randomness.
const nextRandom = (state: State): number => {
  state.random = (state.random + 0x6D2B79F5) >>> 0
  let t = state.random
  t = Math.imul(t ^ (t >>> 15), t | 1)
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const shuffle = <A>(state: State, items: Array<A>): Array<A> => {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(nextRandom(state) * (i + 1))
    const item = items[i]!
    items[i] = items[j]!
    items[j] = item
  }
  return items
}

const coresFree = (worker: WorkerEntry) => worker.cores - worker.coresUsed
const memoryFree = (worker: WorkerEntry) => worker.memory - worker.memoryUsed

const schedule = (step: Step) => {
  const { state } = step
  if (state.status !== "ALIVE") return
  const alive = shuffle(state, [...state.workers.values()].filter((worker) => worker.state === "ALIVE"))
  const waiting = [...state.waitingDrivers]
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
  startExecutorsOnWorkers(step)
}

const startExecutorsOnWorkers = (step: Step) => {
  const { state } = step
  for (const app of [...state.waitingApps]) {
    const coresPerExecutor = Option.getOrUndefined(app.desc.coresPerExecutor)
    const minCores = coresPerExecutor ?? 1
    const coresLeft = Option.getOrElse(app.desc.maxCores, () => state.config.defaultCores) - app.coresGranted
    if (coresLeft < minCores) continue
    // Spark sorts ascending by free cores (stably), then reverses.
    const usable = [...state.workers.values()]
      .filter((worker) =>
        worker.state === "ALIVE" && memoryFree(worker) >= app.desc.memoryPerExecutorMB && coresFree(worker) >= minCores
      )
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
  }
}

const launchExecutor = (step: Step, worker: WorkerEntry, executor: ExecutorEntry) => {
  log(step, "Info", `Launching executor ${Ids.fullExecutorId(executor.app.id, executor.id)} on worker ${worker.id}`)
  send(
    step,
    worker.endpoint,
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
  send(
    step,
    executor.app.driver,
    new AppClient.ExecutorAdded({
      id: executor.id,
      workerId: worker.id,
      hostPort: `${worker.host}:${worker.port}`,
      cores: executor.cores,
      memory: executor.memory
    })
  )
}

// ---- leadership and recovery ------------------------------------------------------------------------------

const electedLeader = (step: Step, stored: Stored) => {
  const { state } = step
  if (state.status !== "STANDBY") return
  const empty = stored.apps.length === 0 && stored.drivers.length === 0 && stored.workers.length === 0
  state.status = empty ? "ALIVE" : "RECOVERING"
  log(
    step,
    "Info",
    empty ? "I have been elected leader! New state: ALIVE" : "I have been elected leader! New state: RECOVERING"
  )
  if (empty) return
  beginRecovery(step, stored)
  step.commands.push({ _tag: "ScheduleCompleteRecovery", afterMillis: state.config.recoveryTimeoutMillis })
}

const beginRecovery = (step: Step, stored: Stored) => {
  const { state } = step
  const changed = new WorkerMessages.MasterChanged({ master: state.config.self, masterWebUiUrl: state.config.webUiUrl })
  for (const info of stored.apps) {
    const app: AppEntry = {
      id: info.id,
      desc: info.desc,
      driver: info.driver,
      startTime: info.startTime,
      submitDate: info.submitDate,
      state: "UNKNOWN",
      coresGranted: 0,
      executors: new Map(),
      nextExecutorId: 0,
      retryCount: 0,
      executorLimit: Option.getOrElse(info.executorLimit, () => Infinity),
      endTime: undefined
    }
    if (registerApplication(step, app)) send(step, app.driver, changed)
    state.nextAppNumber = Math.max(state.nextAppNumber, counterOf(info.id) + 1)
  }
  const workersById = new Map<string, WorkerEntry>()
  for (const info of stored.workers) {
    const worker: WorkerEntry = {
      id: info.id,
      host: info.host,
      port: info.port,
      endpoint: RpcAddress.endpoint(RpcAddress.make(info.host, info.port), EndpointNames.worker),
      webUiAddress: info.webUiAddress,
      cores: info.cores,
      memory: info.memory,
      resources: info.resources,
      state: "UNKNOWN",
      lastHeartbeat: step.now,
      coresUsed: 0,
      memoryUsed: 0,
      executors: new Map(),
      drivers: new Map()
    }
    if (registerWorker(step, worker)) {
      workersById.set(worker.id, worker)
      send(step, worker.endpoint, changed)
    }
  }
  for (const info of stored.drivers) {
    const driver: DriverEntry = {
      id: info.id,
      desc: info.desc,
      startTime: info.startTime,
      submitDate: info.submitDate,
      state: "SUBMITTED",
      worker: undefined,
      exception: undefined
    }
    state.drivers.set(driver.id, driver)
    // A driver that was never launched goes back in the queue; a launched one waits for its worker to claim it.
    if (Option.isNone(info.workerId)) state.waitingDrivers.push(driver)
    state.nextDriverNumber = Math.max(state.nextDriverNumber, counterOf(info.id) + 1)
  }
}

// The counter part of a stored app or driver id, so a recovered master does not hand out an id again.
const counterOf = (id: string): number => {
  const counter = Number(id.slice(id.lastIndexOf("-") + 1))
  return Number.isSafeInteger(counter) ? counter : -1
}

const canCompleteRecovery = (state: State) =>
  state.status === "RECOVERING" &&
  ![...state.workers.values()].some((worker) => worker.state === "UNKNOWN") &&
  ![...state.apps.values()].some((app) => app.state === "UNKNOWN")

const completeRecovery = (step: Step) => {
  const { state } = step
  if (state.status !== "RECOVERING") return
  state.status = "COMPLETING_RECOVERY"
  for (const worker of [...state.workers.values()]) {
    if (worker.state === "UNKNOWN") removeWorker(step, worker, "Not responding for recovery")
  }
  for (const app of [...state.apps.values()]) {
    if (app.state === "UNKNOWN") removeApplication(step, app, "FINISHED")
  }
  for (const app of state.apps.values()) {
    if (app.state === "WAITING") app.state = "RUNNING"
  }
  for (const driver of [...state.drivers.values()]) {
    if (driver.worker !== undefined || state.waitingDrivers.includes(driver)) continue
    log(step, "Warning", `Driver ${driver.id} was not found after master recovery`)
    if (driver.desc.supervise) relaunchDriver(step, driver)
    else removeDriver(step, driver.id, "ERROR", undefined)
  }
  state.status = "ALIVE"
  log(step, "Info", "Recovery complete - resuming operations!")
  schedule(step)
}

const disconnected = (step: Step, peer: RpcAddress.RpcAddress) => {
  const { state } = step
  const key = RpcAddress.key(peer)
  const worker = state.addressToWorker.get(key)
  if (worker !== undefined) removeWorker(step, worker, `${peer.hostPort} got disassociated`)
  const app = state.addressToApp.get(key)
  if (app !== undefined) removeApplication(step, app, "FINISHED")
  if (canCompleteRecovery(state)) completeRecovery(step)
}

// ---- persistence and snapshots ---------------------------------------------------------------------------

// Keeps a completed list bounded as Spark does: when full, drop the oldest tenth.
const retain = <A>(completed: Array<A>, max: number) => {
  if (completed.length >= max) completed.splice(0, Math.max(Math.floor(max / 10), 1))
}

const executorInfo = (executor: ExecutorEntry) =>
  new QueryMessages.ExecutorInfo({
    appId: executor.app.id,
    execId: executor.id,
    workerId: executor.worker.id,
    cores: executor.cores,
    memory: executor.memory,
    state: executor.state,
    resources: {}
  })

const workerInfo = (worker: WorkerEntry) =>
  new QueryMessages.WorkerInfo({
    id: worker.id,
    host: worker.host,
    port: worker.port,
    webUiAddress: worker.webUiAddress,
    cores: worker.cores,
    coresUsed: worker.coresUsed,
    memory: worker.memory,
    memoryUsed: worker.memoryUsed,
    resources: worker.resources,
    resourcesUsed: {},
    state: worker.state,
    lastHeartbeat: worker.lastHeartbeat,
    executors: [...worker.executors.values()].map(executorInfo),
    drivers: [...worker.drivers.keys()]
  })

const appInfo = (app: AppEntry) =>
  new QueryMessages.ApplicationInfo({
    id: app.id,
    startTime: app.startTime,
    submitDate: app.submitDate,
    desc: app.desc,
    driver: app.driver,
    state: app.state,
    coresGranted: app.coresGranted,
    executors: [...app.executors.values()].map(executorInfo),
    executorLimit: Number.isFinite(app.executorLimit) ? Option.some(app.executorLimit) : Option.none(),
    endTime: Option.fromNullable(app.endTime)
  })

const driverInfo = (driver: DriverEntry) =>
  new QueryMessages.DriverInfo({
    id: driver.id,
    startTime: driver.startTime,
    submitDate: driver.submitDate,
    desc: driver.desc,
    state: driver.state,
    workerId: Option.fromNullable(driver.worker?.id),
    exception: Option.fromNullable(driver.exception),
    resources: {}
  })

const persistWorker = (step: Step, worker: WorkerEntry) =>
  step.commands.push({ _tag: "Persist", record: { kind: "worker", value: workerInfo(worker) } })
const persistApp = (step: Step, app: AppEntry) =>
  step.commands.push({ _tag: "Persist", record: { kind: "app", value: appInfo(app) } })
const persistDriver = (step: Step, driver: DriverEntry) =>
  step.commands.push({ _tag: "Persist", record: { kind: "driver", value: driverInfo(driver) } })

/**
 * The master's whole state as the `RequestMasterState` reply.
 *
 * @since 0.1.0
 * @category accessors
 */
export const masterState = (state: State): QueryMessages.MasterStateResponse =>
  new QueryMessages.MasterStateResponse({
    host: state.config.self.address.host,
    port: state.config.self.address.port,
    restPort: Option.fromNullable(state.config.restPort),
    workers: [...state.workers.values()].map(workerInfo),
    activeApps: [...state.apps.values()].map(appInfo),
    completedApps: state.completedApps.map(appInfo),
    activeDrivers: [...state.drivers.values()].map(driverInfo),
    completedDrivers: state.completedDrivers.map(driverInfo),
    status: state.status
  })

/**
 * The ids of the drivers waiting for a worker, in order.
 *
 * @since 0.1.0
 * @category accessors
 */
export const waitingDriverIds = (state: State): ReadonlyArray<Ids.DriverId> => state.waitingDrivers.map((d) => d.id)

/**
 * The executor limit of an active app (Infinity when unlimited), or undefined for an unknown app.
 *
 * @since 0.1.0
 * @category accessors
 */
export const executorLimit = (state: State, appId: Ids.AppId): number | undefined =>
  state.apps.get(appId)?.executorLimit
