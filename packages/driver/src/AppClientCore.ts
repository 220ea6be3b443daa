/**
 * The app client's core (Spark's `StandaloneAppClient`): it registers the app with every master and retries as
 * Spark does (every 20 s, three times, then gives up), follows the master of the moment through `MasterChanged`,
 * and turns what the master says about executors into what the driver needs: which executors are gone, and
 * whether the app itself was removed.
 *
 * Beyond Spark, an app that reaches no master at all gives up in seconds, not a minute: a registration that
 * finds no connection to its master (nothing listens there, its host does not answer) is sent to that master
 * again 1 s later, twice; once every master of the URL has failed so, and no connection to any was ever made,
 * the app is dead with `No master reachable at …`. A master once reached is waited for as Spark waits.
 *
 * When the connection to its master closes, the app client asks that master whether it still has the app (it may
 * have removed it while the two could not talk, and its word been lost: seed 751), five times 2 s apart until it
 * answers. It carries dynamic allocation's requests to the master and asks again until they are taken
 * (`internal/appClient/allocationRequests`).
 *
 * @since 0.1.0
 */
import { Core } from "@kindling/kernel"
import {
  AppClientMessages,
  type Descriptions,
  Endpoints,
  type Ids,
  RpcAddress,
  States,
  type WorkerMessages
} from "@kindling/protocol"
import * as Option from "effect/Option"
import type * as Schema from "effect/Schema"
import type * as AppClientInputs from "./AppClientInputs.js"
import * as AllocationRequests from "./internal/appClient/allocationRequests.js"
import * as Leaving from "./internal/appClient/leaving.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Config {
  readonly self: RpcAddress.Ref<AppClientMessages.MasterToAppClient>
  readonly masters: ReadonlyArray<RpcAddress.Ref<AppClientMessages.AppClientToMaster>>
  readonly appDescription: Descriptions.ApplicationDescription
  /** Spark's REGISTRATION_TIMEOUT_SECONDS (20 s) and REGISTRATION_RETRIES (3). */
  readonly registrationTimeoutMillis: number
  readonly registrationRetries: number
  /** How often a registration is sent to a master no connection can be made to (3), and how far apart (1 s). */
  readonly unreachableAttempts: number
  readonly unreachableRetryMillis: number
  /** How often the master that lost the app's connection is asked whether it has the app (5), how far apart (2 s). */
  readonly checkAttempts: number
  readonly checkRetryMillis: number
  /** How often dynamic allocation's requests the master may not have are asked again (1 s). */
  readonly allocationRetryMillis: number
  /** How long the app leaving waits for the master to take its last total, and to count none of its executors. */
  readonly leaveTimeoutMillis: number
}

/**
 * @since 0.1.0
 * @category models
 */
export interface State {
  readonly config: Config
  appId: Ids.AppId | undefined
  master: RpcAddress.Ref<AppClientMessages.AppClientToMaster> | undefined
  attempts: number
  stopped: boolean
  /** Whether a connection to any master was ever made. */
  reached: boolean
  /** For each master (by address key) no connection could be made to: the failed attempts, and the last reason. */
  readonly unreachable: Map<string, { attempts: number; reason: string }>
  /** Which worker each executor runs on, to know what a lost worker takes with it. */
  readonly executors: Map<number, Ids.WorkerId>
  /** The executors whose process was reported RUNNING. */
  readonly started: Set<number>
  /** The check of the app's registration under way: how many times its master was asked. */
  checks: number | undefined
  readonly allocation: AllocationRequests.Allocation
  /** Where the app is in leaving its master, once it began. */
  leaving: Leaving.Phase | undefined
}

/**
 * The app client's own inputs: its registration retries and the app's end (`AppClientInputs`).
 *
 * @since 0.1.0
 * @category models
 */
export type Local = Schema.Schema.Type<typeof AppClientInputs.Local>

/**
 * What the app client tells the driver.
 *
 * @since 0.1.0
 * @category models
 */
export type AppClientCommand =
  | { readonly _tag: "AppRegistered"; readonly appId: Ids.AppId }
  | { readonly _tag: "ExecutorGranted"; readonly executorId: number; readonly hostPort: string; readonly cores: number }
  /**
   * The executor is gone; `started` is false for one whose process never ran (its launch failed); with
   * `workerLost`, its worker is gone too (and what that worker's shuffle service served).
   */
  | {
    readonly _tag: "ExecutorGone"
    readonly executorId: number
    readonly reason: string
    readonly started: boolean
    readonly workerLost: boolean
  }
  /**
   * The executor's worker is being decommissioned: the master counts it no more (it may grant a replacement), the
   * driver drains it.
   */
  | { readonly _tag: "ExecutorDecommissioned"; readonly executorId: number; readonly reason: string }
  /** The app cannot go on: the master removed it, or no master answered. */
  | { readonly _tag: "AppDead"; readonly reason: string }
  /** Another master leads now; it knows the app from its store (requests since it was stored, it may not). */
  | { readonly _tag: "MasterChanged" }
  /**
   * The connection to the app's master closed: ask that master whether it still has the app, and feed back
   * `AppUnknown` if it leads without it (the app client does this itself; the driver never sees it).
   */
  | { readonly _tag: "CheckRegistered"; readonly appId: Ids.AppId; readonly master: RpcAddress.RpcAddress }
  /** Ask the master for this total of executors, and feed back `TotalAnswered` with `ask`. */
  | {
    readonly _tag: "AskTotal"
    readonly appId: Ids.AppId
    readonly master: RpcAddress.Ref<AppClientMessages.AppClientToMaster>
    readonly total: number
    readonly ask: number
  }
  /** Ask the master to kill these executors of the app (its answer is not needed: they are asked until gone). */
  | {
    readonly _tag: "AskKill"
    readonly appId: Ids.AppId
    readonly master: RpcAddress.Ref<AppClientMessages.AppClientToMaster>
    readonly executorIds: ReadonlyArray<string>
  }
  /**
   * The app is leaving and the master will give it no executor more (or has none to give: it is not registered,
   * or did not answer in time).
   */
  | { readonly _tag: "Released" }
  /** The app has left its master (or gave up waiting for it to count no executor). */
  | { readonly _tag: "Left" }

/**
 * What the app client tells the driver: its commands but those it carries out with the master itself.
 *
 * @since 0.1.0
 * @category models
 */
export type DriverCommand = Exclude<
  AppClientCommand,
  { readonly _tag: "CheckRegistered" | "AskTotal" | "AskKill" | "Released" | "Left" }
>

/**
 * @since 0.1.0
 * @category models
 */
export type Command = Core.Command<Local, AppClientCommand>
/**
 * @since 0.1.0
 * @category models
 */
export type Inbound = AppClientMessages.MasterToAppClient
type Input = Core.Input<Inbound, Local>
/**
 * @since 0.1.0
 * @category models
 */
export type Step = Core.Out<Local, AppClientCommand> & { readonly state: State }

/**
 * @since 0.1.0
 * @category constructors
 */
export const make = (config: Config): State => ({
  config,
  appId: undefined,
  master: undefined,
  attempts: 0,
  stopped: false,
  reached: false,
  unreachable: new Map(),
  executors: new Map(),
  started: new Set(),
  checks: undefined,
  allocation: AllocationRequests.empty(),
  leaving: undefined
})

const registerWith = (step: Step, master: RpcAddress.Ref<AppClientMessages.AppClientToMaster>) => {
  const { config } = step.state
  Core.log(step, "Info", `Connecting to master ${master.address.url}...`)
  Core.send(
    step,
    master,
    new AppClientMessages.RegisterApplication({ appDescription: config.appDescription, driver: config.self })
  )
}

const register = (step: Step) => {
  for (const master of step.state.config.masters) registerWith(step, master)
}

const isMaster = (state: State, peer: RpcAddress.RpcAddress) =>
  state.config.masters.some((master) => RpcAddress.key(master.address) === RpcAddress.key(peer))

const dead = (step: Step, reason: string) => {
  if (step.state.stopped) return
  step.state.stopped = true
  Core.cancelTimer(step, "registration")
  Core.cancelTimer(step, checkTimer)
  step.commands.push({ _tag: "AppDead", reason })
}

const checkTimer = "check registration"

// One more ask of the app's master whether it still has the app; the shell feeds `AppUnknown` when it does not, and
// `CheckUnanswered` when it does not answer.
const checkRegistered = (step: Step) => {
  const { state } = step
  if (state.appId === undefined || state.master === undefined || state.checks === undefined) return
  state.checks++
  Core.log(step, "Info", `Asking master ${state.master.address.url} whether it still has ${state.appId}`)
  step.commands.push({ _tag: "CheckRegistered", appId: state.appId, master: state.master.address })
}

// Unregisters the app (once) and stops asking anything.
const stop = (step: Step) => {
  const { state } = step
  if (state.appId !== undefined && state.master !== undefined && !state.stopped) {
    Core.send(step, state.master, new AppClientMessages.UnregisterApplication({ appId: state.appId }))
  }
  state.stopped = true
  Core.cancelTimer(step, "registration")
  Core.cancelTimer(step, checkTimer)
}

const executorGone = (step: Step, executorId: number, reason: string, workerLost: boolean) => {
  const { state } = step
  // Heard even for an executor decommissioned before (no longer among `executors`): a kill of it is no longer owed.
  AllocationRequests.gone(step, executorId)
  if (!state.executors.delete(executorId)) return
  const started = state.started.delete(executorId)
  step.commands.push({ _tag: "ExecutorGone", executorId, reason, started, workerLost })
}

const handlers: Core.Handlers<Inbound, Step> = {
  RegisteredApplication: (step, message) => {
    const { state } = step
    if (state.appId !== undefined || state.stopped) return
    state.appId = message.appId
    state.master = message.master
    state.reached = true
    Core.cancelTimer(step, "registration")
    Core.log(step, "Info", `Connected to Kindling cluster with app ID ${message.appId}`)
    step.commands.push({ _tag: "AppRegistered", appId: message.appId })
    AllocationRequests.newMaster(step)
  },
  ExecutorAdded: (step, message) => {
    const { state } = step
    state.executors.set(message.id, message.workerId)
    Core.log(
      step,
      "Info",
      `Executor added: ${state.appId}/${message.id} on ${message.workerId} (${message.hostPort}) with ` +
        `${message.cores} core(s)`
    )
    step.commands.push({
      _tag: "ExecutorGranted",
      executorId: message.id,
      hostPort: message.hostPort,
      cores: message.cores
    })
  },
  ExecutorUpdated: (step, message) => {
    const text = message.message._tag === "Some" ? ` (${message.message.value})` : ""
    Core.log(step, "Info", `Executor updated: ${step.state.appId}/${message.id} is now ${message.state}${text}`)
    if (message.state === "RUNNING" && step.state.executors.has(message.id)) step.state.started.add(message.id)
    if (States.isExecutorFinished(message.state)) {
      executorGone(step, message.id, `Executor ${message.state}${text}`, Option.isSome(message.workerHost))
    } else if (message.state === "DECOMMISSIONED" && step.state.executors.delete(message.id)) {
      step.state.started.delete(message.id)
      step.commands.push({
        _tag: "ExecutorDecommissioned",
        executorId: message.id,
        reason: `Executor decommission${text}`
      })
    }
  },
  WorkerRemoved: (step, message) => {
    Core.log(step, "Info", `Worker ${message.id} removed: ${message.message}`)
    for (const [executorId, workerId] of [...step.state.executors]) {
      if (workerId === message.id) executorGone(step, executorId, `Worker lost: ${message.message}`, true)
    }
  },
  ApplicationRemoved: (step, message) => {
    Core.log(step, "Error", `Master removed our application: ${message.message}`)
    dead(step, `Master removed our application: ${message.message}`)
  },
  MasterChanged: (step, message: WorkerMessages.MasterChanged) => {
    const { state } = step
    Core.log(step, "Info", `Master has changed, new master is at ${message.master.address.url}`)
    state.master = Endpoints.ref(message.master.address, Endpoints.master)
    if (state.appId !== undefined) {
      Core.send(step, state.master, new AppClientMessages.MasterChangeAcknowledged({ appId: state.appId }))
    }
    step.commands.push({ _tag: "MasterChanged" })
    AllocationRequests.newMaster(step)
  }
}

const handle = Core.inputs<Inbound, Local, Step>({
  Start: (step) => {
    register(step)
    Core.startTimer(
      step,
      "registration",
      { _tag: "RetryRegistration" },
      step.state.config.registrationTimeoutMillis,
      step.state.config.registrationTimeoutMillis
    )
  },
  Receive: handlers,
  Connected: (step, input) => {
    if (isMaster(step.state, input.peer)) step.state.reached = true
  },
  RegistrationUndelivered: (step, input) => {
    const { state } = step
    if (state.appId !== undefined || state.stopped) return
    if (input.connected) {
      // A master reached and lost before it answered: the 20 s retries are for it, as in Spark.
      state.reached = true
      Core.log(step, "Warning", `Could not register with master ${input.master.url}: ${input.reason}`)
      return
    }
    const key = RpcAddress.key(input.master)
    const attempts = (state.unreachable.get(key)?.attempts ?? 0) + 1
    state.unreachable.set(key, { attempts, reason: input.reason })
    if (attempts < state.config.unreachableAttempts) {
      Core.log(step, "Warning", `No master at ${input.master.url} (${input.reason}); trying again`)
      Core.startTimer(
        step,
        `reach ${key}`,
        { _tag: "RetryMaster", master: input.master },
        state.config.unreachableRetryMillis
      )
      return
    }
    const { masters } = state.config
    const allUnreachable = masters.every((master) =>
      (state.unreachable.get(RpcAddress.key(master.address))?.attempts ?? 0) >= state.config.unreachableAttempts
    )
    if (state.reached || !allUnreachable) return
    const url = `kindling://${masters.map((master) => master.address.hostPort).join(",")}`
    const reasons = [...new Set(masters.map((master) => state.unreachable.get(RpcAddress.key(master.address))!.reason))]
    const reason = `No master reachable at ${url}: ${reasons.join("; ")}`
    Core.log(step, "Error", reason)
    dead(step, reason)
  },
  RetryMaster: (step, input) => {
    const { state } = step
    if (state.appId !== undefined || state.stopped) return
    const master = state.config.masters.find((each) => RpcAddress.key(each.address) === RpcAddress.key(input.master))
    if (master !== undefined) registerWith(step, master)
  },
  Disconnected: (step, input) => {
    const { state } = step
    if (state.master !== undefined && RpcAddress.key(input.peer) === RpcAddress.key(state.master.address)) {
      Core.log(step, "Warning", `Connection to ${input.peer.hostPort} failed; waiting for master to reconnect...`)
      // A master that lost the connection removes the app; the word it sends may be lost too, and the app would
      // wait for ever: the app client asks it.
      if (state.appId !== undefined && !state.stopped) {
        state.checks = 0
        Core.cancelTimer(step, checkTimer)
        checkRegistered(step)
      }
    }
  },
  CheckUnanswered: (step, input) => {
    const { state } = step
    if (state.checks === undefined || state.stopped) return
    if (state.checks >= state.config.checkAttempts) {
      // As Spark's app client, it goes on waiting for its master to come back.
      Core.log(step, "Warning", `The master did not say whether it has the app (${input.reason})`)
      state.checks = undefined
      return
    }
    Core.startTimer(step, checkTimer, { _tag: "RetryCheck" }, state.config.checkRetryMillis)
  },
  RetryCheck: (step) => {
    if (step.state.checks !== undefined && !step.state.stopped) checkRegistered(step)
  },
  RequestTotal: (step, input) => {
    // Leaving, the app wants no executor more, whatever dynamic allocation still thinks.
    if (step.state.leaving === undefined) AllocationRequests.requestTotal(step, input.total)
  },
  KillExecutors: (step, input) => AllocationRequests.kill(step, input.executorIds),
  TotalAnswered: (step, input) => AllocationRequests.answered(step, input.ask, input.taken),
  SyncAllocation: (step) => AllocationRequests.retry(step),
  Release: (step) => Leaving.release(step),
  Leave: (step) => Leaving.leave(step),
  LeaveTimeout: (step, input) => Leaving.timedOut(step, input.phase, stop),
  AppUnknown: (step, input) => {
    if (step.state.stopped) return
    step.state.checks = undefined
    Core.log(step, "Error", `Master removed our application: ${input.reason}`)
    dead(step, `Master removed our application: ${input.reason}`)
  },
  RetryRegistration: (step) => {
    const { state } = step
    if (state.appId !== undefined || state.stopped) return
    state.attempts++
    if (state.attempts >= state.config.registrationRetries) {
      Core.log(step, "Error", "All masters are unresponsive! Giving up.")
      dead(step, "All masters are unresponsive! Giving up.")
    } else {
      register(step)
    }
  },
  Stop: (step) => stop(step)
})

/**
 * @since 0.1.0
 */
export const step = (state: State, input: Input): ReadonlyArray<Command> => {
  const step: Step = { state, now: input.now, commands: [] }
  handle(step, input)
  Leaving.progress(step, stop)
  AllocationRequests.keepTimer(step)
  return step.commands
}

/**
 * What is wrong with the state, if anything: a registered app knows its master; a check of its registration is of
 * a registered app, and asks no more often than it may; allocation's requests are numbered and of a registered app;
 * an app that left its master asks nothing more.
 *
 * @since 0.1.0
 */
export const validate = (state: State): ReadonlyArray<string> => [
  ...(state.appId !== undefined && state.master === undefined ? ["registered without a master"] : []),
  ...(state.checks !== undefined && (state.appId === undefined || state.checks > state.config.checkAttempts)
    ? [`registration checked ${state.checks} times`]
    : []),
  ...AllocationRequests.validate(state.allocation, state.appId !== undefined),
  ...(state.leaving === "left" && !state.stopped ? ["left the master without stopping"] : [])
]

/**
 * @since 0.1.0
 * @category models
 */
export const core: Core.Core<State, Inbound, Local, AppClientCommand> = {
  endpoint: Endpoints.appClient,
  step,
  validate
}
