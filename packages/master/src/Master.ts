/**
 * The master's Effect shell: it registers the `Master` endpoint on the RpcEnv, feeds every input — messages,
 * disconnects, timer ticks, leadership — to the core one at a time, and carries out the commands the core
 * returns (sends, persistence, timers).
 *
 * @since 0.1.0
 */
import { EndpointNames, Outbox, type QueryMessages, RpcAddress, RpcEnv } from "@kindling/protocol"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import { LeaderElection } from "./LeaderElection.js"
import * as MasterCore from "./MasterCore.js"
import { Persistence, type PersistenceError } from "./Persistence.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options extends Omit<MasterCore.Config, "self"> {
  /** Called when leadership is revoked; the process is expected to exit with the code. */
  readonly onExit: (code: number) => Effect.Effect<void>
}

/**
 * A running master.
 *
 * @since 0.1.0
 * @category models
 */
export interface Master {
  readonly address: RpcAddress.RpcAddress
  readonly url: string
  /** The master's whole state, as `RequestMasterState` answers it. */
  readonly state: Effect.Effect<QueryMessages.MasterStateResponse>
}

const inboundTags: ReadonlyArray<string> = MasterCore.Inbound.members.flatMap((union) =>
  union.members.map((member) => member._tag)
)

/**
 * Starts a master on the RpcEnv in context; it stops when the scope closes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: Options
): Effect.Effect<
  Master,
  RpcEnv.EndpointAlreadyRegistered,
  RpcEnv.RpcEnv | Persistence | LeaderElection | Scope.Scope
> =>
  Effect.gen(function*() {
    const rpc = yield* RpcEnv.RpcEnv
    const persistence = yield* Persistence
    const election = yield* LeaderElection
    const address = rpc.address!
    const self = RpcAddress.endpoint(address, EndpointNames.master)
    const { onExit, ...config } = options
    const core = MasterCore.make({ ...config, self })
    const lock = yield* Effect.makeSemaphore(1)
    // Background work (the recovery timer) lives as long as the master.
    const background = yield* FiberSet.make()
    const fork = yield* FiberSet.runtime(background)<never>()
    const send = yield* Outbox.make(rpc)

    // A master that cannot keep its recovery state stops, rather than go on with state it would lose: the
    // input being handled goes no further (no launch is sent, no ask answered with success), and a restarted
    // master recovers from what is on disk.
    const stopOn = (error: PersistenceError) =>
      Effect.logError(`${error.message}; the master stops`).pipe(
        Effect.zipRight(onExit(1)),
        Effect.zipRight(Effect.die(error))
      )

    const interpret = (command: MasterCore.Command): Effect.Effect<void> => {
      switch (command._tag) {
        case "Send":
          return Effect.sync(() => send(command.to, command.message))
        case "Persist":
          return persistence.persist(command.record).pipe(Effect.catchAll(stopOn))
        case "Unpersist":
          return persistence.unpersist(command.kind, command.id).pipe(Effect.catchAll(stopOn))
        case "ScheduleCompleteRecovery":
          return Effect.sync(() =>
            fork(Effect.zipRight(Effect.sleep(command.afterMillis), feedTimed("CompleteRecovery")))
          )
        case "Exit":
          return onExit(command.code)
        case "Log":
          return command.level === "Info" ? Effect.logInfo(command.message) : Effect.logWarning(command.message)
      }
    }

    // One input at a time, its commands carried out before the next input is taken (and before an ask is
    // answered: a submitted driver is on disk when the client hears of it).
    const feed = (input: MasterCore.Input) =>
      lock.withPermits(1)(
        Effect.suspend(() => {
          const output = MasterCore.step(core, input)
          return Effect.forEach(output.commands, interpret, { discard: true }).pipe(Effect.as(output.reply))
        })
      )

    const feedTimed = (tag: "CheckForWorkerTimeOut" | "CompleteRecovery" | "RevokedLeadership") =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => feed({ _tag: tag, now })).pipe(Effect.asVoid)

    const receive = (message: MasterCore.Inbound, context: RpcEnv.MessageContext) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => feed({ _tag: "Receive", message, sender: context.sender, now }))
        .pipe(
          Effect.flatMap((reply) => reply ?? Effect.void)
        )

    yield* rpc.register(EndpointNames.master, {
      inbound: MasterCore.Inbound,
      handlers: Object.fromEntries(inboundTags.map((tag) => [tag, receive])) as unknown as RpcEnv.Handlers<
        MasterCore.Inbound,
        never
      >,
      onDisconnected: (peer) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => feed({ _tag: "Disconnected", peer, now })).pipe(Effect.asVoid)
    })

    // What is stored is read when leadership comes, not before: another master may have led in between.
    yield* election.join({
      elected: Effect.gen(function*() {
        const stored = yield* persistence.readAll.pipe(Effect.catchAll(stopOn))
        yield* feed({ _tag: "ElectedLeader", stored, now: yield* Clock.currentTimeMillis })
      }),
      revoked: feedTimed("RevokedLeadership")
    })
    // Spark checks at a fixed rate, starting at once.
    yield* Effect.forkScoped(
      Effect.repeat(
        feedTimed("CheckForWorkerTimeOut").pipe(
          Effect.catchAllCause((cause) => Effect.logError("Checking for worker time-outs failed", cause))
        ),
        Schedule.fixed(config.workerTimeoutMillis)
      )
    )
    yield* Effect.logInfo(`Kindling master at ${address.url}`)

    return {
      address,
      url: address.url,
      state: lock.withPermits(1)(Effect.sync(() => MasterCore.masterState(core)))
    }
  })
