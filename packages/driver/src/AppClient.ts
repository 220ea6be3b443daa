/**
 * The app client as a running role: its core (`AppClientCore`) in the kernel's shell on the RpcEnv in context,
 * telling the driver what the masters say through the callbacks it is given.
 *
 * @since 0.1.0
 */
import { Shell } from "@kindling/kernel"
import { AppClientMessages, type Descriptions, Endpoints, QueryMessages, type RpcAddress } from "@kindling/protocol"
import { RpcEnv } from "@kindling/rpc"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
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
  readonly tell: (command: AppClientCore.DriverCommand) => Effect.Effect<void>
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
   * are not replaced; returns once a master took it, or after 5 s (`AppClientCore` decides).
   */
  readonly release: Effect.Effect<void>
  /**
   * Leaves the master once it counts no executor of the app (their workers saw them end), or after 5 s: leaving
   * first would have the workers kill them mid-goodbye.
   */
  readonly leave: Effect.Effect<void>
  /**
   * Sets how many executors the master gives the app in all (dynamic allocation), or has it kill some: the app
   * client asks until the master has taken it (`AppClientCore`).
   */
  readonly allocate: (input: Extract<AppClientCore.Local, { readonly _tag: "RequestTotal" | "KillExecutors" }>) => void
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
    // The master that lost its connection to the app, leading, does not list it (it removed it). One that does, or
    // does not lead (a new leader will say MasterChanged), ends the check; one that does not answer is the core's to
    // ask again.
    const checkRegistered = (
      command: Extract<AppClientCore.AppClientCommand, { readonly _tag: "CheckRegistered" }>,
      host: Shell.Host<AppClientCore.Local>
    ) =>
      rpc.ask(Endpoints.ref(command.master, Endpoints.master), new QueryMessages.RequestMasterState(), {
        timeout: 5000
      }).pipe(
        Effect.match({
          onFailure: (error) => host.feed({ _tag: "CheckUnanswered", reason: error.message }),
          onSuccess: (state) => {
            if (state.status !== "ALIVE" || state.activeApps.some((app) => app.id === command.appId)) return
            const completed = state.completedApps.find((app) => app.id === command.appId)
            host.feed({
              _tag: "AppUnknown",
              reason: completed === undefined
                ? "the master no longer knows it"
                : `it is ${completed.state} there, ended while the master could not reach the driver`
            })
          }
        })
      )
    // Asks the master the app is registered with; one that does not answer in time has not taken the request.
    const askMaster = (
      master: RpcAddress.Ref<AppClientMessages.AppClientToMaster>,
      request: AppClientMessages.RequestExecutors | AppClientMessages.KillExecutors
    ) => rpc.ask(master, request, { timeout: 5000 }).pipe(Effect.orElseSucceed(() => false))
    const released = yield* Deferred.make<void>()
    const left = yield* Deferred.make<void>()
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
        unreachableRetryMillis: 1000,
        checkAttempts: 5,
        checkRetryMillis: 2000,
        allocationRetryMillis: 1000,
        leaveTimeoutMillis: 5000
      }),
      interpret: (command, host) => {
        switch (command._tag) {
          case "CheckRegistered":
            return Effect.sync(() => host.fork(checkRegistered(command, host)))
          case "AskTotal":
            return Effect.sync(() =>
              host.fork(
                Effect.map(
                  askMaster(
                    command.master,
                    new AppClientMessages.RequestExecutors({ appId: command.appId, requestedTotal: command.total })
                  ),
                  (taken) => host.feed({ _tag: "TotalAnswered", ask: command.ask, taken })
                )
              )
            )
          case "AskKill":
            return Effect.sync(() =>
              host.fork(
                askMaster(
                  command.master,
                  new AppClientMessages.KillExecutors({ appId: command.appId, executorIds: command.executorIds })
                )
              )
            )
          case "Released":
            return Deferred.succeed(released, undefined)
          case "Left":
            return Deferred.succeed(left, undefined)
          default:
            return options.tell(command)
        }
      },
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
      // Stopped on a defect, it will say nothing more: nothing is left to wait for.
      onExit: (code, reason) =>
        Effect.zipRight(
          Effect.all([Deferred.succeed(released, undefined), Deferred.succeed(left, undefined)]),
          options.onExit(code, reason)
        )
    })
    return {
      release: Effect.zipRight(Effect.sync(() => shell.feed({ _tag: "Release" })), Deferred.await(released)),
      leave: Effect.zipRight(Effect.sync(() => shell.feed({ _tag: "Leave" })), Deferred.await(left)),
      allocate: shell.feed,
      stop: Effect.zipRight(Effect.sync(() => shell.feed({ _tag: "Stop" })), shell.read(() => undefined))
    }
  })
