/**
 * The worker's logic as a deterministic state machine, in the shape of `MasterCore`: `step(state, input)`
 * applies one input — a message from a master, a timer tick, a runner's report, a lost connection — and
 * returns commands: messages to send, processes to start or kill, timers to arm, directories to clean, or
 * an exit. Semantics are Spark 3.3's `Worker` (reference/spark-standalone-protocol.md §2.3, §4.3, §4.6, §4.7).
 *
 * @since 0.1.0
 */
import {
  type Codec,
  Descriptions,
  Ids,
  QueryMessages,
  type RpcAddress,
  States,
  WorkerMessages
} from "@kindling/protocol"
import { absurd } from "effect/Function"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

/**
 * Everything the worker endpoint accepts.
 *
 * @since 0.1.0
 * @category models
 */
export const Inbound = Schema.Union(WorkerMessages.MasterToWorker, QueryMessages.WorkerQuery)
/**
 * @since 0.1.0
 * @category models
 */
export type Inbound = typeof Inbound.Type

/**
 * Spark's registration schedule: 6 attempts about 10 s apart, then 10 more about 60 s apart, each interval
 * scaled by a factor drawn once per process so that workers restarted together do not retry in step.
 *
 * @since 0.1.0
 * @category models
 */
export interface RegistrationSchedule {
  readonly initialIntervalMillis: number
  readonly initialAttempts: number
  readonly prolongedIntervalMillis: number
  readonly maxAttempts: number
  /** In [0.5, 1.5). */
  readonly fuzz: number
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Config {
  readonly workerId: Ids.WorkerId
  /** This worker's endpoint, as masters should address it. */
  readonly self: RpcAddress.RpcEndpointRef
  readonly webUiUrl: string
  readonly cores: number
  readonly memory: number
  /** The masters to register with, in the order given. */
  readonly masters: ReadonlyArray<RpcAddress.RpcEndpointRef>
  readonly workerTimeoutMillis: number
  readonly registration: RegistrationSchedule
  readonly cleanup: { readonly enabled: boolean; readonly intervalMillis: number; readonly appDataTtlMillis: number }
  readonly retainedExecutors: number
  readonly retainedDrivers: number
  /** Where the runners keep their directories, for the state the worker reports. */
  readonly workDir: string
}

/**
 * @since 0.1.0
 * @category models
 */
export type Input =
  | { readonly _tag: "Start" }
  | { readonly _tag: "Receive"; readonly message: Inbound }
  | { readonly _tag: "ReregisterWithMaster" }
  | { readonly _tag: "SendHeartbeat" }
  | { readonly _tag: "WorkDirCleanup" }
  | { readonly _tag: "Disconnected"; readonly peer: RpcAddress.RpcAddress }
  | {
    readonly _tag: "DriverEnded"
    readonly driverId: Ids.DriverId
    readonly state: States.DriverState
    readonly exception: Descriptions.RemoteException | undefined
  }
  | {
    readonly _tag: "ExecutorChanged"
    readonly appId: Ids.AppId
    readonly execId: number
    readonly state: States.ExecutorState
    readonly message: string | undefined
    readonly exitStatus: number | undefined
  }

/**
 * @since 0.1.0
 * @category models
 */
export type Timer = "registration" | "heartbeat" | "cleanup"

/**
 * @since 0.1.0
 * @category models
 */
export type Command =
  | { readonly _tag: "Send"; readonly to: RpcAddress.RpcEndpointRef; readonly message: Codec.Message }
  /** Asked, retried up to `kindling.worker.executorStateSync.maxAttempts` times, then the worker exits. */
  | {
    readonly _tag: "SyncExecutorState"
    readonly to: RpcAddress.RpcEndpointRef
    readonly message: WorkerMessages.ExecutorStateChanged
  }
  /** Fires `input` every `periodMillis` (first after `delayMillis`), replacing any timer of that name. */
  | { readonly _tag: "StartTimer"; readonly timer: Timer; readonly delayMillis: number; readonly periodMillis: number }
  | { readonly _tag: "CancelTimer"; readonly timer: Timer }
  | { readonly _tag: "LaunchDriver"; readonly driverId: Ids.DriverId; readonly desc: Descriptions.DriverDescription }
  | { readonly _tag: "KillDriver"; readonly driverId: Ids.DriverId }
  | {
    readonly _tag: "LaunchExecutor"
    readonly appId: Ids.AppId
    readonly execId: number
    readonly appDesc: Descriptions.ApplicationDescription
    readonly cores: number
    readonly memory: number
  }
  | { readonly _tag: "KillExecutor"; readonly appId: Ids.AppId; readonly execId: number }
  /** Deletes the app's local scratch directories: it is finished and none of its executors is left here. */
  | { readonly _tag: "CleanupApplication"; readonly appId: Ids.AppId }
  /** Deletes work-dir entries not named in `keep` that have nothing newer than the TTL. */
  | { readonly _tag: "CleanupWorkDir"; readonly keep: ReadonlyArray<string>; readonly ttlMillis: number }
  | { readonly _tag: "Reply"; readonly value: unknown }
  | { readonly _tag: "Exit"; readonly code: number; readonly reason: string }
  | { readonly _tag: "Log"; readonly level: "Info" | "Warning" | "Error"; readonly message: string }

interface DriverEntry {
  readonly id: Ids.DriverId
  readonly desc: Descriptions.DriverDescription
  state: States.DriverState
  exception: Descriptions.RemoteException | undefined
}

interface ExecutorEntry {
  readonly appId: Ids.AppId
  readonly execId: number
  readonly appDesc: Descriptions.ApplicationDescription
  readonly cores: number
  readonly memory: number
  state: States.ExecutorState
}

/**
 * The worker's state; owned by the core, read through the accessors.
 *
 * @since 0.1.0
 * @category models
 */
export interface State {
  readonly config: Config
  registered: boolean
  connected: boolean
  master: RpcAddress.RpcEndpointRef | undefined
  masterWebUiUrl: string | undefined
  registrationAttempts: number
  registrationTimer: "none" | "initial" | "prolonged"
  decommissioned: boolean
  coresUsed: number
  memoryUsed: number
  readonly drivers: Map<Ids.DriverId, DriverEntry>
  readonly finishedDrivers: Array<DriverEntry>
  readonly executors: Map<string, ExecutorEntry>
  readonly finishedExecutors: Array<ExecutorEntry>
  /** Apps the master said are finished whose executors have not all ended here yet. */
  readonly finishedApps: Set<Ids.AppId>
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const make = (config: Config): State => ({
  config,
  registered: false,
  connected: false,
  master: undefined,
  masterWebUiUrl: undefined,
  registrationAttempts: 0,
  registrationTimer: "none",
  decommissioned: false,
  coresUsed: 0,
  memoryUsed: 0,
  drivers: new Map(),
  finishedDrivers: [],
  executors: new Map(),
  finishedExecutors: [],
  finishedApps: new Set()
})

type Out = Array<Command>

const log = (out: Out, level: "Info" | "Warning" | "Error", message: string) =>
  out.push({ _tag: "Log", level, message })

const masterUrl = (state: State) => state.master?.address.url

/**
 * Applies one input.
 *
 * @since 0.1.0
 * @category transitions
 */
export const step = (state: State, input: Input): ReadonlyArray<Command> => {
  const out: Out = []
  switch (input._tag) {
    case "Start":
      registerWithMaster(state, out)
      break
    case "Receive":
      receive(state, out, input.message)
      break
    case "ReregisterWithMaster":
      reregisterWithMaster(state, out)
      break
    case "SendHeartbeat":
      if (state.connected && state.master !== undefined) {
        out.push({
          _tag: "Send",
          to: state.master,
          message: new WorkerMessages.Heartbeat({ workerId: state.config.workerId, worker: state.config.self })
        })
      }
      break
    case "WorkDirCleanup":
      out.push({
        _tag: "CleanupWorkDir",
        keep: [...new Set([...[...state.executors.values()].map((e) => e.appId), ...state.drivers.keys()])],
        ttlMillis: state.config.cleanup.appDataTtlMillis
      })
      break
    case "Disconnected":
      if (state.master !== undefined && state.master.address.hostPort === input.peer.hostPort) {
        log(out, "Error", `Connection to master ${input.peer.hostPort} lost; waiting for a master to reconnect...`)
        state.connected = false
        registerWithMaster(state, out)
      }
      break
    case "DriverEnded":
      driverEnded(state, out, input)
      break
    case "ExecutorChanged":
      executorChanged(state, out, input)
      break
    default:
      absurd(input)
  }
  return out
}

// ---- registration ---------------------------------------------------------------------------------------

const registerMessage = (state: State, master: RpcAddress.RpcEndpointRef) =>
  new WorkerMessages.RegisterWorker({
    id: state.config.workerId,
    host: state.config.self.address.host,
    port: state.config.self.address.port,
    worker: state.config.self,
    cores: state.config.cores,
    memory: state.config.memory,
    workerWebUiUrl: state.config.webUiUrl,
    masterAddress: master.address,
    resources: {}
  })

const registerWithAll = (state: State, out: Out) => {
  for (const master of state.config.masters) {
    out.push({ _tag: "Send", to: master, message: registerMessage(state, master) })
  }
}

// Spark rounds the fuzzed intervals to whole seconds (5–15 s, 30–90 s); sub-second intervals (tests) to ms.
const interval = (state: State, millis: number) => {
  const fuzzed = millis * state.config.registration.fuzz
  return millis >= 1000 ? Math.round(fuzzed / 1000) * 1000 : Math.round(fuzzed)
}

const registerWithMaster = (state: State, out: Out) => {
  if (state.registrationTimer !== "none") {
    log(out, "Info", "Not spawning another attempt to register with the master: one is scheduled already")
    return
  }
  state.registered = false
  state.registrationAttempts = 0
  registerWithAll(state, out)
  const every = interval(state, state.config.registration.initialIntervalMillis)
  state.registrationTimer = "initial"
  out.push({ _tag: "StartTimer", timer: "registration", delayMillis: every, periodMillis: every })
}

const cancelRegistrationTimer = (state: State, out: Out) => {
  if (state.registrationTimer === "none") return
  state.registrationTimer = "none"
  out.push({ _tag: "CancelTimer", timer: "registration" })
}

const reregisterWithMaster = (state: State, out: Out) => {
  state.registrationAttempts += 1
  if (state.registered) return cancelRegistrationTimer(state, out)
  const schedule = state.config.registration
  if (state.registrationAttempts > schedule.maxAttempts) {
    log(out, "Error", "All masters are unresponsive! Giving up.")
    out.push({ _tag: "Exit", code: 1, reason: "All masters are unresponsive" })
    return
  }
  log(out, "Info", `Retrying connection to master (attempt # ${state.registrationAttempts})`)
  // A master seen before is the one to ask; otherwise every configured master.
  if (state.master !== undefined) {
    out.push({ _tag: "Send", to: state.master, message: registerMessage(state, state.master) })
  } else registerWithAll(state, out)
  if (state.registrationAttempts === schedule.initialAttempts) {
    const every = interval(state, schedule.prolongedIntervalMillis)
    state.registrationTimer = "prolonged"
    out.push({ _tag: "StartTimer", timer: "registration", delayMillis: every, periodMillis: every })
  }
}

const changeMaster = (state: State, out: Out, master: RpcAddress.RpcEndpointRef, webUiUrl: string) => {
  state.master = master
  state.masterWebUiUrl = webUiUrl
  state.connected = true
  cancelRegistrationTimer(state, out)
}

const describeExecutor = (executor: ExecutorEntry) =>
  new WorkerMessages.WorkerExecutorStateResponse({
    desc: new Descriptions.ExecutorDescription({
      appId: executor.appId,
      execId: executor.execId,
      cores: executor.cores,
      state: executor.state
    }),
    resources: {}
  })

// ---- messages from masters -------------------------------------------------------------------------------

const receive = (state: State, out: Out, message: Inbound) => {
  switch (message._tag) {
    case "RegisteredWorker": {
      if (message.duplicate) log(out, "Warning", `Duplicate registration at master ${message.master.address.url}`)
      log(out, "Info", `Successfully registered with master ${message.master.address.url}`)
      state.registered = true
      changeMaster(state, out, message.master, message.masterWebUiUrl)
      const heartbeat = Math.floor(state.config.workerTimeoutMillis / 4)
      out.push({ _tag: "StartTimer", timer: "heartbeat", delayMillis: 0, periodMillis: heartbeat })
      if (state.config.cleanup.enabled) {
        const every = state.config.cleanup.intervalMillis
        out.push({ _tag: "StartTimer", timer: "cleanup", delayMillis: every, periodMillis: every })
      }
      out.push({
        _tag: "Send",
        to: message.master,
        message: new WorkerMessages.WorkerLatestState({
          id: state.config.workerId,
          executors: [...state.executors.values()].map((e) => describeExecutor(e).desc),
          driverIds: [...state.drivers.keys()]
        })
      })
      return
    }
    case "RegisterWorkerFailed":
      if (!state.registered) {
        log(out, "Error", `Worker registration failed: ${message.message}`)
        out.push({ _tag: "Exit", code: 1, reason: `Worker registration failed: ${message.message}` })
      }
      return
    case "MasterInStandby":
      return
    case "ReconnectWorker":
      log(out, "Info", `Master with url ${message.masterUrl} requested this worker to reconnect.`)
      registerWithMaster(state, out)
      return
    case "MasterChanged":
      log(out, "Info", `Master has changed, new master is at ${message.master.address.url}`)
      changeMaster(state, out, message.master, message.masterWebUiUrl)
      out.push({
        _tag: "Send",
        to: message.master,
        message: new WorkerMessages.WorkerSchedulerStateResponse({
          id: state.config.workerId,
          execResponses: [...state.executors.values()].map(describeExecutor),
          driverResponses: [...state.drivers.keys()].map((driverId) =>
            new WorkerMessages.WorkerDriverStateResponse({ driverId, resources: {} })
          )
        })
      })
      return
    case "LaunchExecutor": {
      if (message.masterUrl !== masterUrl(state)) {
        log(out, "Warning", `Invalid master (${message.masterUrl}) attempted to launch executor.`)
        return
      }
      if (state.decommissioned) {
        log(out, "Warning", "Asked to launch an executor while decommissioned; not launching it.")
        return
      }
      log(out, "Info", `Asked to launch executor ${message.appId}/${message.execId} for ${message.appDesc.name}`)
      const executor: ExecutorEntry = {
        appId: message.appId,
        execId: message.execId,
        appDesc: message.appDesc,
        cores: message.cores,
        memory: message.memory,
        state: "LAUNCHING"
      }
      state.executors.set(Ids.fullExecutorId(message.appId, message.execId), executor)
      state.coresUsed += message.cores
      state.memoryUsed += message.memory
      out.push({
        _tag: "LaunchExecutor",
        appId: message.appId,
        execId: message.execId,
        appDesc: message.appDesc,
        cores: message.cores,
        memory: message.memory
      })
      return
    }
    case "KillExecutor": {
      if (message.masterUrl !== masterUrl(state)) {
        log(out, "Warning", `Invalid master (${message.masterUrl}) attempted to kill executor ${message.execId}`)
        return
      }
      const fullId = Ids.fullExecutorId(message.appId, message.execId)
      if (!state.executors.has(fullId)) log(out, "Info", `Asked to kill unknown executor ${fullId}`)
      else {
        log(out, "Info", `Asked to kill executor ${fullId}`)
        out.push({ _tag: "KillExecutor", appId: message.appId, execId: message.execId })
      }
      return
    }
    case "LaunchDriver": {
      log(out, "Info", `Asked to launch driver ${message.driverId}`)
      const desc = message.driverDesc
      state.drivers.set(message.driverId, { id: message.driverId, desc, state: "RUNNING", exception: undefined })
      state.coresUsed += desc.cores
      state.memoryUsed += desc.mem
      out.push({ _tag: "LaunchDriver", driverId: message.driverId, desc })
      return
    }
    case "KillDriver":
      if (!state.drivers.has(message.driverId)) log(out, "Error", `Asked to kill unknown driver ${message.driverId}`)
      else {
        log(out, "Info", `Asked to kill driver ${message.driverId}`)
        out.push({ _tag: "KillDriver", driverId: message.driverId })
      }
      return
    case "ApplicationFinished":
      state.finishedApps.add(message.id)
      maybeCleanupApplication(state, out, message.id)
      return
    case "DecommissionWorker":
      if (!state.decommissioned) {
        log(out, "Info", "Decommissioning this worker: it accepts no new executors")
        state.decommissioned = true
      }
      return
    case "RequestWorkerState":
      out.push({ _tag: "Reply", value: workerState(state) })
      return
    default:
      absurd(message)
  }
}

// ---- runner reports --------------------------------------------------------------------------------------

// Keeps a finished list bounded as Spark does: when over the limit, drop the oldest tenth.
const retain = <A>(finished: Array<A>, max: number) => {
  if (finished.length > max) finished.splice(0, Math.max(Math.floor(max / 10), 1))
}

const sendToMaster = (state: State, out: Out, message: Codec.Message) => {
  if (state.master === undefined) {
    log(out, "Warning", `Dropping ${message._tag} because the connection to master has not yet been established`)
    return
  }
  out.push({ _tag: "Send", to: state.master, message })
}

const driverEnded = (state: State, out: Out, input: Extract<Input, { _tag: "DriverEnded" }>) => {
  const driver = state.drivers.get(input.driverId)
  if (driver === undefined) return
  const what = {
    ERROR: `failed with unrecoverable exception: ${input.exception?.message ?? "unknown"}`,
    FAILED: "exited with failure",
    FINISHED: "exited successfully",
    KILLED: "was killed by user"
  } as Record<string, string>
  log(
    out,
    input.state === "FINISHED" || input.state === "KILLED" ? "Info" : "Warning",
    `Driver ${input.driverId} ${what[input.state] ?? `changed state to ${input.state}`}`
  )
  sendToMaster(
    state,
    out,
    new WorkerMessages.DriverStateChanged({
      driverId: input.driverId,
      state: input.state,
      exception: Option.fromNullable(input.exception)
    })
  )
  state.drivers.delete(input.driverId)
  driver.state = input.state
  driver.exception = input.exception
  state.finishedDrivers.push(driver)
  retain(state.finishedDrivers, state.config.retainedDrivers)
  state.coresUsed -= driver.desc.cores
  state.memoryUsed -= driver.desc.mem
}

const executorChanged = (state: State, out: Out, input: Extract<Input, { _tag: "ExecutorChanged" }>) => {
  const fullId = Ids.fullExecutorId(input.appId, input.execId)
  const executor = state.executors.get(fullId)
  if (executor !== undefined) executor.state = input.state
  if (States.isExecutorFinished(input.state)) {
    if (executor !== undefined) {
      log(
        out,
        "Info",
        `Executor ${fullId} finished with state ${input.state}${input.message ? ` message ${input.message}` : ""}`
      )
      state.executors.delete(fullId)
      state.finishedExecutors.push(executor)
      retain(state.finishedExecutors, state.config.retainedExecutors)
      state.coresUsed -= executor.cores
      state.memoryUsed -= executor.memory
    } else {
      log(out, "Info", `Unknown executor ${fullId} finished with state ${input.state}`)
    }
    maybeCleanupApplication(state, out, input.appId)
  }
  if (state.master === undefined) {
    log(
      out,
      "Warning",
      "Dropping an executor state change because the connection to master has not yet been established"
    )
    return
  }
  out.push({
    _tag: "SyncExecutorState",
    to: state.master,
    message: new WorkerMessages.ExecutorStateChanged({
      appId: input.appId,
      execId: input.execId,
      state: input.state,
      message: Option.fromNullable(input.message),
      exitStatus: Option.fromNullable(input.exitStatus)
    })
  })
}

const maybeCleanupApplication = (state: State, out: Out, appId: Ids.AppId) => {
  if (!state.finishedApps.has(appId)) return
  if ([...state.executors.values()].some((e) => e.appId === appId)) return
  state.finishedApps.delete(appId)
  log(out, "Info", `Cleaning up local directories for application ${appId}`)
  out.push({ _tag: "CleanupApplication", appId })
}

// ---- snapshots -------------------------------------------------------------------------------------------

/**
 * The master the worker currently reports to, if it has one.
 *
 * @since 0.1.0
 * @category accessors
 */
export const activeMaster = (state: State): RpcAddress.RpcEndpointRef | undefined => state.master

/**
 * The worker's state as the `RequestWorkerState` reply.
 *
 * @since 0.1.0
 * @category accessors
 */
export const workerState = (state: State): QueryMessages.WorkerStateResponse => {
  const { workDir } = state.config
  const executor = (e: ExecutorEntry) =>
    new QueryMessages.ExecutorRunnerInfo({
      appId: e.appId,
      execId: e.execId,
      appDesc: e.appDesc,
      cores: e.cores,
      memory: e.memory,
      state: e.state,
      resources: {},
      workDir: `${workDir}/${e.appId}/${e.execId}`
    })
  const driver = (d: DriverEntry) =>
    new QueryMessages.DriverRunnerInfo({
      driverId: d.id,
      desc: d.desc,
      state: d.state,
      exception: Option.fromNullable(d.exception),
      resources: {},
      workDir: `${workDir}/${d.id}`
    })
  return new QueryMessages.WorkerStateResponse({
    host: state.config.self.address.host,
    port: state.config.self.address.port,
    workerId: state.config.workerId,
    executors: [...state.executors.values()].map(executor),
    finishedExecutors: state.finishedExecutors.map(executor),
    drivers: [...state.drivers.values()].map(driver),
    finishedDrivers: state.finishedDrivers.map(driver),
    masterUrl: Option.fromNullable(masterUrl(state)),
    cores: state.config.cores,
    memory: state.config.memory,
    coresUsed: state.coresUsed,
    memoryUsed: state.memoryUsed,
    masterWebUiUrl: Option.fromNullable(state.masterWebUiUrl),
    resources: {},
    resourcesUsed: {}
  })
}
