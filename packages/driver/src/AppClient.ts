/**
 * The app client as a running role: its core (`AppClientCore`) in the kernel's shell on the RpcEnv in context,
 * telling the driver what the masters say through the callbacks it is given.
 *
 * @since 0.1.0
 */
import { Shell } from "@kindling/kernel"
import {
  AppClientMessages,
  type Descriptions,
  Endpoints,
  type Ids,
  QueryMessages,
  type RpcAddress
} from "@kindling/protocol"
import { RpcEnv } from "@kindling/rpc"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as AppClientCore from "./AppClientCore.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly masters: ReadonlyArray<RpcAddress.RpcAddress>
  readonly appDescription: Descriptions.ApplicationDescription
  readonly validateState?: boolean
  /** Everything the app client learns, for the driver. */
  readonly tell: (
    command: Exclude<AppClientCore.AppClientCommand, { readonly _tag: "CheckRegistered" }>
  ) => Effect.Effect<void>
  /** The app client stopped on a defect of its own (its core threw or broke an invariant). */
  readonly onExit: (code: number, reason: string) => Effect.Effect<void>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface AppClient {
  /**
   * Asks the master for no more executors (Spark's `requestTotalExecutors(0)`), so that the ones the app stops
   * are not replaced; waits for the answer, briefly.
   */
  readonly release: Effect.Effect<void>
  /**
   * Sets how many executors the master gives the app in all (dynamic allocation); the answer is awaited, briefly:
   * true when the master took it (false before the app is registered, or when the master did not answer).
   */
  readonly requestTotal: (total: number) => Effect.Effect<boolean>
  /**
   * Asks the master to kill these executors of the app (dynamic allocation gives them back): true when the master
   * took the request.
   */
  readonly kill: (executorIds: ReadonlyArray<string>) => Effect.Effect<boolean>
  /** How many of the app's executors the master still counts. */
  readonly executors: Effect.Effect<number>
  /** Unregisters the app: it is done. */
  readonly stop: Effect.Effect<void>
}

/**
 * Registers the app with the masters.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: Options
): Effect.Effect<AppClient, Shell.NotListening | RpcEnv.EndpointAlreadyRegistered, RpcEnv.RpcEnv | Scope.Scope> =>
  Effect.gen(function*() {
    const rpc = yield* RpcEnv.RpcEnv
    // Up to five times, 2 s apart until it answers: the master that lost its connection to the app, leading, does not
    // list it (it removed it). One that does, or does not lead (a new leader will say MasterChanged), ends the check.
    const checkRegistered = (
      command: Extract<AppClientCore.AppClientCommand, { readonly _tag: "CheckRegistered" }>,
      host: Shell.Host<AppClientCore.Local>
    ) =>
      rpc.ask(Endpoints.ref(command.master, Endpoints.master), new QueryMessages.RequestMasterState(), {
        timeout: 5000
      }).pipe(
        Effect.retry(Schedule.spaced("2 seconds").pipe(Schedule.intersect(Schedule.recurs(4)))),
        Effect.flatMap((state) =>
          Effect.sync(() => {
            if (state.status !== "ALIVE" || state.activeApps.some((app) => app.id === command.appId)) return
            const completed = state.completedApps.find((app) => app.id === command.appId)
            host.feed({
              _tag: "AppUnknown",
              reason: completed === undefined
                ? "the master no longer knows it"
                : `it is ${completed.state} there, ended while the master could not reach the driver`
            })
          })
        ),
        Effect.ignore
      )
    const address = yield* Shell.listeningAddress(Endpoints.appClient)
    const shell = yield* Shell.make({
      core: AppClientCore.core,
      state: AppClientCore.make({
        self: Endpoints.ref(address, Endpoints.appClient),
        masters: options.masters.map((master) => Endpoints.ref(master, Endpoints.master)),
        appDescription: options.appDescription,
        registrationTimeoutMillis: 20_000,
        registrationRetries: 3,
        unreachableAttempts: 3,
        unreachableRetryMillis: 1000
      }),
      interpret: (command, host) =>
        command._tag === "CheckRegistered"
          ? Effect.sync(() => host.fork(checkRegistered(command, host)))
          : options.tell(command),
      // A registration that could not be sent is the core's to judge: did it ever reach a master?
      undelivered: (to, message, error) =>
        message._tag === "RegisterApplication"
          ? {
            _tag: "RegistrationUndelivered" as const,
            master: to.address,
            reason: error.message,
            connected: error._tag !== "ConnectFailed"
          }
          : undefined,
      validateState: options.validateState ?? false,
      onExit: options.onExit
    })
    // Asks the master the app is registered with, if any; a master that does not answer in time is let be.
    const askMaster = (
      request: (appId: Ids.AppId) => AppClientMessages.RequestExecutors | AppClientMessages.KillExecutors
    ) =>
      Effect.gen(function*() {
        const { appId, master } = yield* shell.read((state) => ({ appId: state.appId, master: state.master }))
        if (appId === undefined || master === undefined) return false
        return yield* rpc.ask(master, request(appId), { timeout: 5000 })
      }).pipe(Effect.orElseSucceed(() => false))
    const requestTotal = (total: number) =>
      askMaster((appId) => new AppClientMessages.RequestExecutors({ appId, requestedTotal: total }))
    return {
      release: Effect.asVoid(requestTotal(0)),
      requestTotal,
      kill: (executorIds) => askMaster((appId) => new AppClientMessages.KillExecutors({ appId, executorIds })),
      executors: shell.read((state) => state.executors.size),
      stop: Effect.zipRight(Effect.sync(() => shell.feed({ _tag: "Stop" })), shell.read(() => undefined))
    }
  })
