// The worker's records, and what every part of a step uses.
import { Core } from "@kindling/kernel"
import type { Descriptions, Ids, RpcAddress, States, WorkerMessages } from "@kindling/protocol"
import type { Config, Local, WorkerCommand } from "../WorkerCore.js"

export interface DriverEntry {
  readonly id: Ids.DriverId
  readonly desc: Descriptions.DriverDescription
  state: States.DriverState
  exception: Descriptions.RemoteException | undefined
  /** Why the worker is stopping it, if it is: a kill asked for, or its fencing (it ends RELAUNCHING then). */
  stopping?: "kill" | "fence"
  /** When its process last started (its launch, or its last relaunch): how long a run lasted sets the back-off. */
  startedAt: number
  /** Supervised, after a failed run: the back-off it waited last, which the next failure in a row doubles. */
  backoffMillis?: number
  /** Supervised, while it waits out its back-off with no process: when it runs again. */
  relaunchAt?: number | undefined
}

export interface ExecutorEntry {
  readonly appId: Ids.AppId
  readonly execId: number
  readonly appDesc: Descriptions.ApplicationDescription
  readonly cores: number
  readonly memory: number
  state: States.ExecutorState
}

// What the worker tells its master about what runs here (see stateSync.ts).
export type SyncMessage = WorkerMessages.ExecutorStateChanged | WorkerMessages.DriverStateChanged

// One executor's (or driver's) messages to the master, the first being asked.
export interface Sync {
  readonly key: string
  readonly queue: Array<{ readonly to: RpcAddress.RefOf<"Master">; readonly message: SyncMessage }>
  /** Of the first message, from 1. */
  attempt: number
  /** The ask of the first message now out (when not `retrying`): only its answer counts. */
  askId: number
  /** Waiting to ask again after a failure. */
  retrying: boolean
}

// The worker's state (public as `WorkerCore.State`, to be read through its accessors).
export interface State {
  readonly config: Config
  registered: boolean
  connected: boolean
  master: RpcAddress.RefOf<"Master"> | undefined
  masterWebUiUrl: string | undefined
  registrationAttempts: number
  registrationTimer: "none" | "initial" | "prolonged"
  /** When this worker last registered or sent its master a heartbeat (undefined before it ever registered). */
  lastHeardAt: number | undefined
  decommissioned: boolean
  coresUsed: number
  memoryUsed: number
  readonly drivers: Map<Ids.DriverId, DriverEntry>
  readonly finishedDrivers: Array<DriverEntry>
  readonly executors: Map<string, ExecutorEntry>
  readonly finishedExecutors: Array<ExecutorEntry>
  /** Apps the master said are finished whose executors have not all ended here yet. */
  readonly finishedApps: Set<Ids.AppId>
  /**
   * Apps whose executors ran here and whose local dirs are not cleaned up yet: told to every master the worker
   * registers with, which says which of them finished (one that ended while the worker was away goes unsaid).
   */
  readonly appsWithData: Set<Ids.AppId>
  /** Drivers that ended here and whose end no master has acknowledged yet. */
  readonly unheard: Map<Ids.DriverId, DriverEntry>
  /** What is being told to the master, by executor or driver. */
  readonly syncs: Map<string, Sync>
  nextSyncAskId: number
  /** When each heartbeat not yet acknowledged went out, by number (fencing only; those older than the lease go). */
  readonly heartbeatsOut: Map<number, number>
  nextHeartbeat: number
  /** When the last heartbeat a master acknowledged went out: the lease runs from there (fencing only). */
  leaseFrom: number | undefined
}

// One step in progress; `step` is not re-entrant, so one buffer serves.
export interface Step extends Core.Out<Local, WorkerCommand> {
  readonly state: State
  /** The listening address of the node whose message this step handles, when it has one. */
  readonly sender: RpcAddress.RpcAddress | undefined
}

export const log = (step: Step, level: Core.LogLevel, message: string) => Core.log(step, level, message)

export const masterUrl = (state: State) => state.master?.address.url

/**
 * Whether the master has surely taken this worker for dead: it has not heard from the worker for longer than the
 * worker timeout (the worker was paused, or its heartbeats could not go out). A launch that arrives now was sent
 * before that, and the master has since given the driver or executor up, or is about to.
 */
export const takenForDead = (step: Step) =>
  step.state.lastHeardAt !== undefined && step.now - step.state.lastHeardAt > step.state.config.workerTimeoutMillis

// A decommissioned worker with nothing left running, whose master has heard of every end, has done its part.
export const exitIfDrained = (step: Step) => {
  const { state } = step
  if (!state.decommissioned || state.executors.size > 0 || state.drivers.size > 0 || state.syncs.size > 0) return
  Core.exit(step, 0, "Decommissioned, and no executor or driver runs here any more: exiting")
}
