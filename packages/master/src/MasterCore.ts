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
 * change it; `masterState` gives an immutable view. The transitions live in `internal/`, one module per
 * subject (workers, drivers, apps, placement, recovery).
 *
 * @since 0.1.0
 */
import type { Ids, RpcAddress } from "@kindling/protocol"
import {
  AppClientMessages as AppClient,
  type Codec,
  Errors,
  QueryMessages,
  SubmissionMessages,
  WorkerMessages
} from "@kindling/protocol"
import * as Exit from "effect/Exit"
import { absurd } from "effect/Function"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import {
  executorStateChanged,
  killExecutorsRequest,
  registerApplicationRequest,
  removeApplication
} from "./internal/apps.js"
import { driverStatus, killDriver, killDriverRequest, removeDriver, submitDriver } from "./internal/drivers.js"
import { schedule } from "./internal/placement.js"
import { canCompleteRecovery, completeRecovery, disconnected, electedLeader } from "./internal/recovery.js"
import * as snapshots from "./internal/snapshots.js"
import type * as internal from "./internal/state.js"
import type { Step } from "./internal/state.js"
import { log, masterUrl, notAlive, send } from "./internal/state.js"
import {
  decommissionWorker,
  registerWorkerRequest,
  timeOutDeadWorkers,
  workerLatestState,
  workerSchedulerStateResponse
} from "./internal/workers.js"

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
      if (app === undefined) {
        log(step, "Warning", `Attempted to acknowledge the master change for unknown app ${message.appId}`)
      } else if (app.state === "UNKNOWN") app.state = "WAITING"
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
      return Exit.succeed(snapshots.masterState(state))
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

// ---- drivers ------------------------------------------------------------------------------------------

// ---- applications and executors -------------------------------------------------------------------------

// ---- scheduling -----------------------------------------------------------------------------------------

// ---- leadership and recovery ------------------------------------------------------------------------------

// ---- persistence and snapshots ---------------------------------------------------------------------------

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

/**
 * The master's state. It is owned by the core: read it through the accessors here.
 *
 * @since 0.1.0
 * @category models
 */
export type State = internal.State

/**
 * The master's whole state as the `RequestMasterState` reply.
 *
 * @since 0.1.0
 * @category accessors
 */
export const masterState: (state: State) => QueryMessages.MasterStateResponse = snapshots.masterState
