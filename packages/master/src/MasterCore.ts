/**
 * The master's logic as a role core (`@kindling/kernel`'s `Core`): `step(state, input)` applies one input (a
 * decoded message, a disconnect, a timer tick, a leadership change) and returns the commands that carry out its
 * effects: messages to send, replies, records to persist, timers to arm. It does no I/O, reads no clock (inputs
 * carry `now`) and draws randomness only from the seeded generator in its state, so a whole cluster can be
 * replayed and checked in a test. Semantics are Spark 3.3's `Master` (docs/protocol.md lists the messages).
 *
 * The state is owned by the core: `step` updates it in place (Spark's master keeps tens of thousands of
 * workers and apps, and copying them per heartbeat would be the master's main cost) and nothing else may
 * change it; `masterState` gives an immutable view. The transitions live in `internal/`, one module per
 * subject (workers, drivers, apps, placement, recovery). Transitions never call the scheduler or recovery
 * themselves: they recommend, and `step` runs each at most once at the end of the input.
 *
 * @since 0.1.0
 */
import { Core } from "@kindling/kernel"
import type { Ids, RpcAddress } from "@kindling/protocol"
import { Endpoints, Errors, QueryMessages, SubmissionMessages, WorkerMessages } from "@kindling/protocol"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type * as Schema from "effect/Schema"
import {
  executorStateChanged,
  killExecutorsRequest,
  registerApplicationRequest,
  removeApplication
} from "./internal/apps.js"
import {
  driverEndedOn,
  driverStatus,
  killDriver,
  killDriverRequest,
  submitDriver,
  workerProcessGone
} from "./internal/drivers.js"
import { schedule } from "./internal/placement.js"
import {
  canCompleteRecovery,
  completeRecovery,
  disconnected,
  electedLeader,
  revokedLeadership
} from "./internal/recovery.js"
import * as snapshots from "./internal/snapshots.js"
import type * as internal from "./internal/state.js"
import type { Step } from "./internal/state.js"
import { answer, log, masterUrl, notAlive, wantRecoveryCheck, wantSchedule } from "./internal/state.js"
import * as validation from "./internal/validation.js"
import {
  decommissionWorker,
  registerWorkerRequest,
  timeOutDeadWorkers,
  workerLatestState,
  workerSchedulerStateResponse
} from "./internal/workers.js"
import type * as MasterInputs from "./MasterInputs.js"

/**
 * Everything the master endpoint accepts.
 *
 * @since 0.1.0
 * @category models
 */
export type Inbound = Endpoints.Inbound["Master"]

/**
 * @since 0.1.0
 * @category models
 */
export interface Config {
  /** Where this master's endpoint is: the `self` of every message it sends. */
  readonly self: RpcAddress.RefOf<"Master">
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
export type Stored = MasterInputs.Stored

/**
 * The master's own inputs: leadership changes (with what was stored, read when leadership came), its timers, kill
 * buttons pressed in its web UI and stored artifacts (`MasterInputs`).
 *
 * @since 0.1.0
 * @category models
 */
export type Local = Schema.Schema.Type<typeof MasterInputs.Local>

/**
 * @since 0.1.0
 * @category models
 */
export type Input = Core.Input<Inbound, Local>

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
 * The master's own commands, besides the kernel's (send, reply, timers, logs, exit).
 *
 * @since 0.1.0
 * @category models
 */
export type MasterCommand =
  | { readonly _tag: "Persist"; readonly record: Record }
  /**
   * Check whether a lost worker's address refuses connections, and feed `WorkerProcessGone` if it does: its
   * supervised drivers' relaunches then need not wait out its fence.
   */
  | { readonly _tag: "ProbeWorker"; readonly workerId: Ids.WorkerId; readonly address: RpcAddress.RpcAddress }
  | { readonly _tag: "Unpersist"; readonly kind: Record["kind"]; readonly id: string }
  /**
   * Pull an uploaded artifact from `from` into the artifact store, then feed `ArtifactStored`; a standby's is kept
   * at least until it leads.
   */
  | {
    readonly _tag: "StoreArtifact"
    readonly ask: Core.Ask<SubmissionMessages.RequestUploadArtifact>
    readonly from: RpcAddress.RpcAddress
    readonly untilLeading: boolean
  }

/**
 * @since 0.1.0
 * @category models
 */
export type Command = Core.Command<Local, MasterCommand>

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
  random: config.seed >>> 0,
  leadingSince: undefined
})

/**
 * Applies one input.
 *
 * @since 0.1.0
 * @category transitions
 */
export const step = (state: State, input: Input): ReadonlyArray<Command> => {
  const current: Step = {
    state,
    now: input.now,
    commands: [],
    wants: { schedule: false, recoveryCheck: false },
    connection: input._tag === "Receive" ? input.connection : undefined,
    sender: input._tag === "Receive" ? input.sender : undefined
  }
  handle(current, input)
  if (current.wants.recoveryCheck && canCompleteRecovery(state)) completeRecovery(current)
  if (current.wants.schedule) schedule(current)
  return current.commands
}

// Decommissions the workers on these hosts (case-insensitive), as Spark's master does; how many matched (none when
// standby).
const decommissionHosts = (step: Step, hostnames: ReadonlyArray<string>): number => {
  const { state } = step
  if (state.status === "STANDBY") return 0
  const hosts = new Set(hostnames.map((host) => host.toLowerCase()))
  const matched = [...state.addressToWorker.values()].filter((worker) => hosts.has(worker.host.toLowerCase()))
  for (const worker of matched) decommissionWorker(step, worker)
  return matched.length
}

const handle = Core.inputs<Inbound, Local, Step>({
  // Spark checks at a fixed rate from the start, whether or not this master leads.
  Start: (step) =>
    Core.startTimer(
      step,
      "checkForWorkerTimeOut",
      { _tag: "CheckForWorkerTimeOut" },
      0,
      step.state.config.workerTimeoutMillis
    ),
  Receive: {
    RegisterWorker: (step, message) => registerWorkerRequest(step, message),
    Heartbeat: (step, message) => {
      const { state } = step
      const worker = state.idToWorker.get(message.workerId)
      if (worker !== undefined) {
        worker.lastHeartbeat = step.now
        // A leader's word that it will not relaunch the worker's drivers before their fence has passed from now.
        if (message.seq !== undefined) {
          answer(step, message.worker, new WorkerMessages.HeartbeatAcknowledged({ seq: message.seq }))
        }
        // Told again until it is gone: the first word may have been lost to a cut link (it changes nothing there).
        if (worker.state === "DECOMMISSIONED") answer(step, message.worker, new WorkerMessages.DecommissionWorker())
      } else if (state.status === "STANDBY") {
        // A worker of a leadership this master lost: told so, it registers with the masters again, whoever leads
        // now (one that dropped it during a partition would never claim it with MasterChanged).
        Core.log(step, "Debug", `Got heartbeat from worker ${message.workerId} while STANDBY; telling it so`)
        answer(step, message.worker, new WorkerMessages.MasterInStandby())
      } else {
        // One taken for dead, or one this leadership never knew: it was removed while it could not be heard (and its
        // removal may have been forgotten since, by a master that led again from its store). Spark asks only the
        // first to register again; the other would run on, stranded, its executors never told their app ended. Its
        // registration is checked as any other, and its latest state then ends what nobody runs any more.
        log(step, "Warning", `Got heartbeat from unregistered worker ${message.workerId}; asking it to re-register`)
        answer(step, message.worker, new WorkerMessages.ReconnectWorker({ masterUrl: masterUrl(state) }))
      }
    },
    ExecutorStateChanged: (step, message, ask) => {
      executorStateChanged(step, message)
      Core.reply(step, ask, Exit.succeed(true))
    },
    DriverStateChanged: (step, message, ask) => {
      // A standby knows no driver and cannot pass the end on: it answers false, and the worker keeps the end for the
      // next leader (in its answer to MasterChanged). Acknowledged, the end would be forgotten, and a supervised
      // driver that finished would be relaunched by a leader that never heard of it.
      if (step.state.status === "STANDBY") return Core.reply(step, ask, Exit.succeed(false))
      driverEndedOn(step, message.driverId, message.state, Option.getOrUndefined(message.exception))
      // Taken into account, or already settled (told twice, or by the worker's answer to MasterChanged): either way
      // the worker may forget it.
      Core.reply(step, ask, Exit.succeed(true))
    },
    WorkerSchedulerStateResponse: (step, message) => workerSchedulerStateResponse(step, message),
    WorkerLatestState: (step, message) => workerLatestState(step, message),
    WorkerDecommissioning: (step, message) => {
      if (step.state.status === "STANDBY") answer(step, message.workerRef, new WorkerMessages.MasterInStandby())
      else {
        const worker = step.state.idToWorker.get(message.id)
        if (worker !== undefined) decommissionWorker(step, worker)
      }
    },
    RequestSubmitDriver: (step, message, ask) => Core.reply(step, ask, submitDriver(step, message.driverDescription)),
    RequestKillDriver: (step, message, ask) => Core.reply(step, ask, killDriverRequest(step, message.driverId)),
    RequestDriverStatus: (step, message, ask) => Core.reply(step, ask, driverStatus(step, message.driverId)),
    RequestKillAllDrivers: (step, _, ask) => {
      const { state } = step
      if (state.status !== "ALIVE") return Core.reply(step, ask, notAlive(state, "kill drivers"))
      for (const driver of [...state.drivers.values()]) killDriver(step, driver)
      Core.reply(
        step,
        ask,
        Exit.succeed(
          new SubmissionMessages.KillAllDriversResponse({
            master: state.config.self,
            success: true,
            message: "Kill request for all drivers submitted"
          })
        )
      )
    },
    RequestClearCompletedDriversAndApps: (step, _, ask) => {
      const { state } = step
      if (state.status !== "ALIVE") return Core.reply(step, ask, notAlive(state, "clear completed drivers and apps"))
      state.completedApps = []
      state.completedDrivers = []
      Core.reply(step, ask, Exit.succeed(true))
    },
    RequestReadyz: (step, _, ask) => Core.reply(step, ask, Exit.succeed(step.state.status !== "STANDBY")),
    RequestUploadArtifact: (step, message, ask) => {
      // A standby keeps an upload too, for when it leads: a supervised driver it must launch again then can still be
      // fetched, by its digest, from it. A master in recovery refuses, as it does submissions.
      const { status } = step.state
      if (status !== "ALIVE" && status !== "STANDBY") {
        return Core.reply(step, ask, notAlive(step.state, "accept artifacts"))
      }
      // The artifact is pulled from the uploader's data plane: it must be a node that listens.
      if (step.sender === undefined) {
        const reason = "the uploading node does not listen, so its artifact cannot be fetched"
        return Core.reply(step, ask, Exit.fail(new Errors.ArtifactRejected({ name: message.name, reason })))
      }
      step.commands.push({ _tag: "StoreArtifact", ask, from: step.sender, untilLeading: status === "STANDBY" })
    },
    RegisterApplication: (step, message) => registerApplicationRequest(step, message),
    UnregisterApplication: (step, message) => {
      const app = step.state.apps.get(message.appId)
      if (app !== undefined) removeApplication(step, app, "FINISHED")
    },
    MasterChangeAcknowledged: (step, message) => {
      const app = step.state.apps.get(message.appId)
      if (app === undefined) {
        log(step, "Warning", `Attempted to acknowledge the master change for unknown app ${message.appId}`)
      } else if (app.state === "UNKNOWN") {
        app.state = "WAITING"
        app.connection = step.connection
      }
      wantRecoveryCheck(step)
    },
    RequestExecutors: (step, message, ask) => {
      const app = step.state.apps.get(message.appId)
      if (app === undefined) return Core.reply(step, ask, Exit.fail(new Errors.AppNotFound({ appId: message.appId })))
      log(step, "Info", `Application ${app.id} requested to set total executors to ${message.requestedTotal}`)
      app.executorLimit = message.requestedTotal
      wantSchedule(step)
      Core.reply(step, ask, Exit.succeed(true))
    },
    KillExecutors: (step, message, ask) => Core.reply(step, ask, killExecutorsRequest(step, message)),
    RequestMasterState: (step, _, ask) => Core.reply(step, ask, Exit.succeed(snapshots.masterState(step.state))),
    DecommissionWorkersOnHosts: (step, message, ask) =>
      Core.reply(step, ask, Exit.succeed(decommissionHosts(step, message.hostnames))),
    DecommissionWorkers: (step, message, ask) => {
      const { state } = step
      if (state.status === "STANDBY") return Core.reply(step, ask, Exit.succeed(0))
      const matched = message.workerIds.flatMap((id) => {
        const worker = state.idToWorker.get(id)
        return worker !== undefined && worker.state === "ALIVE" ? [worker] : []
      })
      for (const worker of matched) decommissionWorker(step, worker)
      Core.reply(step, ask, Exit.succeed(matched.length))
    },
    BoundPortsRequest: (step, _, ask) =>
      Core.reply(
        step,
        ask,
        Exit.succeed(
          new QueryMessages.BoundPortsResponse({
            rpcEndpointPort: step.state.config.self.address.port,
            webUIPort: step.state.config.webUiPort,
            restPort: Option.fromNullable(step.state.config.restPort)
          })
        )
      )
  },
  Disconnected: (step, input) => disconnected(step, input.peer, input.connection),
  ElectedLeader: (step, input) => electedLeader(step, input.stored),
  RevokedLeadership: (step) => revokedLeadership(step),
  CheckForWorkerTimeOut: (step) => timeOutDeadWorkers(step),
  CompleteRecovery: (step) => completeRecovery(step),
  RelaunchDue: wantSchedule,
  WorkerProcessGone: (step, input) => workerProcessGone(step, input.workerId),
  ArtifactStored: (step, input) => Core.reply(step, input.ask, input.exit),
  KillApplicationFromUi: (step, input) => {
    // As Spark's master page: only a leading master acts, on an app it has; anything else is ignored.
    const app = step.state.status === "ALIVE" ? step.state.apps.get(input.appId) : undefined
    if (app !== undefined) removeApplication(step, app, "KILLED")
  },
  DecommissionHostsFromUi: (step, input) => void decommissionHosts(step, input.hosts),
  KillDriverFromUi: (step, input) => {
    const outcome = killDriverRequest(step, input.driverId)
    if (Exit.isFailure(outcome)) log(step, "Warning", `Kill of driver ${input.driverId} from the UI refused`)
  }
})

/**
 * What is wrong with the state, if anything: its invariants (capacity and accounting, every driver
 * waiting or on exactly one live worker or completed, every executor on exactly one app and one worker, nothing
 * placed unless ALIVE). Tests check it after every step; `kindling.debug.validateState` checks it in a node.
 *
 * @since 0.1.0
 * @category validation
 */
export const validate: (state: State) => ReadonlyArray<string> = validation.validate

/**
 * The master as a role for the kernel's shell.
 *
 * @since 0.1.0
 * @category constructors
 */
export const core: Core.Core<State, Inbound, Local, MasterCommand> = {
  endpoint: Endpoints.master,
  step,
  validate
}

/**
 * Whether the master acts as leader (it is not STANDBY).
 *
 * @since 0.1.0
 * @category accessors
 */
export const leads = (state: State): boolean => state.status !== "STANDBY"

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
