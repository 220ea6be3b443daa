/**
 * The one Effect shell every role runs in. It registers the core's endpoint on the RpcEnv, turns messages,
 * connection events, timer ticks and the role's own reports into inputs, and feeds them to the core one at a time
 * from a mailbox, carrying out each step's commands before it takes the next input. Kernel commands (send, reply,
 * timers, logs, exit) are carried out here; the role's own commands go to the interpreter the role supplies.
 *
 * Feeding never waits for a step, so an interpreter may feed the core (a process ended, a fetch finished)
 * without the re-entrancy deadlock of a lock held across interpretation. Replies go out after every command of
 * their step has been carried out (a submission is on disk before its client hears of it); when a command fails,
 * the node stops (fail-stop) and the step's asks are answered with an error, never with success — or, when the
 * role can go on without it (`Abandoned`: a leader that resigned), only the step is dropped, its asks refused.
 *
 * A defect is fatal, never a hang: a core that throws no longer knows its own state, so the node stops at once
 * with the stack in the log and exit code 70 (sysexits' EX_SOFTWARE), its asks refused and its timers ended; the
 * role's `onExit` frees what the role holds. With `validateState` (`kindling.debug.validateState`), the core's
 * `validate` runs after every step and the node stops the same way at the first violation.
 *
 * @since 0.1.0
 */
import { type Codec, Errors, type RpcAddress } from "@kindling/protocol"
// By its own path, not the index: an executor's bundle then leaves out the other roles' messages (see Endpoints).
import * as Endpoints from "@kindling/protocol/Endpoints"
import { Outbox, RpcEnv } from "@kindling/rpc"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as FiberMap from "effect/FiberMap"
import * as FiberSet from "effect/FiberSet"
import type * as Scope from "effect/Scope"
import * as Core from "./Core.js"

/**
 * What a role's interpreter may do besides carrying out its command: feed the core later, and run work in the
 * background of the shell (it stops when the shell stops).
 *
 * @since 0.1.0
 * @category models
 */
export interface Host<Local> {
  /** Queues a local input; it is stepped after everything queued before it. Returns at once. */
  readonly feed: (input: Local) => void
  readonly fork: (effect: Effect.Effect<unknown>) => void
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Options<
  S,
  In extends Codec.Message,
  Local extends { readonly _tag: string },
  C extends { readonly _tag: string },
  R
> {
  readonly core: Core.Core<S, In, Local, C>
  readonly state: S
  /**
   * Carries out one of the role's own commands. Expected failures are the role's to turn into inputs; a defect
   * here stops the node. Failing with `Abandoned` drops the step instead (see there): the node goes on. A command
   * carried out at once, in the call, returns `undefined`: a step whose commands all are (and sends and answers)
   * runs without an effect, which is what keeps a role's hot paths (a task's launch and end) off the fiber runtime.
   */
  readonly interpret: (command: C, host: Host<Local>) => Effect.Effect<void, Abandoned, R> | undefined
  readonly validateState?: boolean
  /**
   * Looked at before every input: an input the core must take before that one, if any. A leader whose lease on
   * leadership lapsed while its process was paused steps down this way before it handles anything the pause held
   * back, rather than after (its own report of the lapse is queued behind them).
   */
  readonly preempt?: (state: S) => Local | undefined
  /**
   * A message the core sent that could not be delivered, as an input of the core's own, when the core decides
   * what that means (an app client that reaches no master gives up); `undefined` leaves it to the shell, which
   * logs it as a warning, as it does every undelivered message without this.
   */
  readonly undelivered?: (
    to: RpcAddress.RpcEndpointRef,
    message: Codec.Message,
    error: Errors.RpcError
  ) => Local | undefined
  /**
   * The node must stop with this exit code: an `Exit` command, a failed command (1), a core that threw or broke an
   * invariant (`internalErrorCode`).
   */
  readonly onExit: (code: number, reason: string) => Effect.Effect<void>
}

/**
 * A command that could not be carried out, by a node that can go on without it: the rest of the step's commands
 * are dropped and its asks refused with the reason (none hears of a success), and the node takes its next input.
 * The role must already have arranged what makes its state right again — a leader whose write to ZooKeeper failed
 * has resigned, and steps down (to a state with nothing the write was about) before its next input.
 *
 * @since 0.1.0
 * @category errors
 */
export class Abandoned extends Data.TaggedError("Abandoned")<{ readonly reason: string }> {}

/**
 * The exit code of a node stopped by its own inconsistency: its core threw, or broke an invariant (sysexits'
 * EX_SOFTWARE).
 *
 * @since 0.1.0
 */
export const internalErrorCode = 70

/**
 * A seam for tests: the cores of the shells started under it run as this function makes them (a test wraps a
 * role's core to make one of its handlers throw, and checks that the role ends as a defect must end it). Every
 * shell runs its core as it is otherwise.
 *
 * @since 0.1.0
 * @category tags
 */
export class CoreWrapper extends Context.Reference<CoreWrapper>()("@kindling/kernel/Shell/CoreWrapper", {
  defaultValue:
    () =>
    <S, In extends Codec.Message, Local extends { readonly _tag: string }, C extends { readonly _tag: string }>(
      core: Core.Core<S, In, Local, C>
    ): Core.Core<S, In, Local, C> => core
}) {}

/**
 * A running role.
 *
 * @since 0.1.0
 * @category models
 */
export interface Shell<S, In extends Codec.Message, Local> {
  readonly address: RpcAddress.RpcAddress
  /** This role's own endpoint. */
  readonly self: RpcAddress.Ref<In>
  readonly feed: (input: Local) => void
  /** Reads the state between two steps. */
  readonly read: <A>(f: (state: S) => A) => Effect.Effect<A>
  /**
   * Stops the role as a defect of its own would (exit code `internalErrorCode`): for a role made of more than one
   * core, when another of its cores met a defect.
   */
  readonly halt: (reason: string) => Effect.Effect<void>
}

/**
 * A role that others must reach needs an RpcEnv that listens.
 *
 * @since 0.1.0
 * @category errors
 */
export class NotListening extends Data.TaggedError("NotListening")<{ readonly endpoint: string }> {
  override get message(): string {
    return `The ${this.endpoint} endpoint needs an RpcEnv that listens on a host and port`
  }
}

/**
 * The address the RpcEnv in context listens on, for a role that must be reachable at `endpoint`.
 *
 * @since 0.1.0
 * @category accessors
 */
export const listeningAddress = <M extends Codec.Message>(
  endpoint: Endpoints.Kind<M>
): Effect.Effect<RpcAddress.RpcAddress, NotListening, RpcEnv.RpcEnv> =>
  Effect.flatMap(RpcEnv.RpcEnv, (rpc) =>
    rpc.address === undefined
      ? Effect.fail(new NotListening({ endpoint: endpoint.name }))
      : Effect.succeed(rpc.address))

type Work<S, In extends Codec.Message, Local> =
  | { readonly _tag: "Input"; readonly input: Core.KernelInput<In> | Local }
  | { readonly _tag: "Read"; readonly read: (state: S) => void }

// The gist of a failure, on one line.
const describe = (cause: Cause.Cause<unknown>): string => {
  const error = Cause.squash(cause)
  const text = error instanceof Error || (typeof error === "object" && error !== null && "message" in error)
    ? String((error as { readonly message: unknown }).message)
    : String(error)
  return text.split("\n")[0]!
}

const logAt = (level: Core.LogLevel, message: string): Effect.Effect<void> => {
  switch (level) {
    case "Debug":
      return Effect.logDebug(message)
    case "Info":
      return Effect.logInfo(message)
    case "Warning":
      return Effect.logWarning(message)
    case "Error":
      return Effect.logError(message)
  }
}

/**
 * Starts a role on the RpcEnv in context: its endpoint is registered and its core gets `Start`. It stops when the
 * scope closes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <
  S,
  In extends Codec.Message,
  Local extends { readonly _tag: string },
  C extends { readonly _tag: string },
  R
>(
  options: Options<S, In, Local, C, R>
): Effect.Effect<
  Shell<S, In, Local>,
  NotListening | RpcEnv.EndpointAlreadyRegistered,
  RpcEnv.RpcEnv | Scope.Scope | R
> =>
  Effect.gen(function*() {
    const { state } = options
    const core = (yield* CoreWrapper)(options.core)
    const rpc = yield* RpcEnv.RpcEnv
    const address = yield* listeningAddress(core.endpoint)
    const clock = yield* Effect.clock
    const background = yield* FiberSet.make()
    const runBackground = yield* FiberSet.runtime(background)<R>()
    const timers = yield* FiberMap.make<string>()
    // A message that could not be delivered is the core's to judge when it says so, else a warning.
    const post = yield* Outbox.make(rpc, (to, message, error) => {
      const input = options.undelivered?.(to, message, error)
      return input === undefined
        ? Outbox.warn(to, message, error)
        : Effect.sync(() => enqueue({ _tag: "Input", input }))
    })

    const queue: Array<Work<S, In, Local>> = []
    let draining = false
    let stopped = false
    let nextAskId = 0
    // Asks not yet answered, with the request each was for.
    const pendingAsks = new Map<
      number,
      { readonly deferred: Deferred.Deferred<unknown, unknown>; readonly tag: string }
    >()

    const enqueue = (work: Work<S, In, Local>) => {
      if (stopped) {
        // A stopped role takes no input, but its last state can still be read.
        if (work._tag === "Read") work.read(state)
        return
      }
      queue.push(work)
      if (!draining) {
        draining = true
        drainNow()
      }
    }
    const host: Host<Local> = {
      feed: (input) => enqueue({ _tag: "Input", input }),
      fork: (effect) => {
        runBackground(effect)
      }
    }

    const answer = (id: number, exit: Exit.Exit<unknown, unknown>) => {
      const pending = pendingAsks.get(id)
      if (pending === undefined) return
      pendingAsks.delete(id)
      Deferred.unsafeDone(pending.deferred, exit)
    }

    // Stops the node. Every ask it has not answered is refused, in one line, never a stack trace: none of them
    // will be answered now (those of the step that stopped it included, which must not hear of a success).
    const stop = (code: number, reason: string) =>
      Effect.suspend(() => {
        if (stopped) return Effect.void
        stopped = true
        queue.length = 0
        for (const [id, { tag }] of [...pendingAsks]) {
          answer(
            id,
            Exit.fail(
              new Errors.RemoteHandlerError({
                endpoint: core.endpoint.name,
                request: tag,
                reason: `the ${core.endpoint.name} stopped: ${reason}`
              })
            )
          )
        }
        return Effect.logError(`${core.endpoint.name} stops: ${reason}`).pipe(
          Effect.zipRight(FiberMap.clear(timers)),
          Effect.zipRight(options.onExit(code, reason))
        )
      })

    // A defect: what the core holds can no longer be trusted, so the node stops, saying where it broke.
    const fail = (what: string, cause: Cause.Cause<unknown>) =>
      Effect.zipRight(
        Effect.logError(`${core.endpoint.name} ${what}`, cause),
        stop(internalErrorCode, `internal error: ${what}: ${describe(cause)}`)
      )

    // At a fixed rate, as Spark's timers. A tick is queued only after one more turn of the event loop, so that
    // whatever input is already waiting (in the sockets, after the node was paused or starved) is read first: a
    // timer must not judge a peer silent on time the node could not hear it (a master checking heartbeats after
    // SIGSTOP). After a stall longer than a period the missed ticks are not made up one after another.
    const startTimer = (command: Extract<Core.KernelCommand<Local>, { _tag: "StartTimer" }>) =>
      FiberMap.run(
        timers,
        command.name,
        Effect.gen(function*() {
          let due = clock.unsafeCurrentTimeMillis() + command.delayMillis
          for (;;) {
            yield* Effect.sleep(Math.max(0, due - clock.unsafeCurrentTimeMillis()))
            yield* Effect.sleep(0)
            enqueue({ _tag: "Input", input: command.input })
            if (command.periodMillis === undefined) return
            const now = clock.unsafeCurrentTimeMillis()
            due = now - due > command.periodMillis ? now + command.periodMillis : due + command.periodMillis
          }
        })
      )

    // Drops the rest of a step whose command `tag` failed: its asks, answered or not by the step, are refused.
    const abandon = (tag: string, reason: string, commands: ReadonlyArray<Core.Command<Local, C>>) =>
      Effect.suspend(() => {
        for (const command of commands) {
          if ((command as Core.KernelCommand<Local>)._tag !== "Reply") continue
          const { ask } = command as Extract<Core.KernelCommand<Local>, { _tag: "Reply" }>
          answer(
            ask.id,
            Exit.fail(
              new Errors.RemoteHandlerError({
                endpoint: core.endpoint.name,
                request: pendingAsks.get(ask.id)?.tag ?? tag,
                reason: `the ${core.endpoint.name} could not carry out ${tag}: ${reason}`
              })
            )
          )
        }
        return Effect.logWarning(`${core.endpoint.name} abandoned a step: ${tag} failed: ${reason}`)
      })

    type Replies = Array<Extract<Core.KernelCommand<Local>, { _tag: "Reply" }>>
    // How a command is carried out: at once, in place (a send; an answer, kept until the step is done; a role's
    // command its interpreter carried out in the call), by an effect of the role's, or by the kernel's own effect
    // (a timer, a log line, an exit).
    type Carried = "done" | "kernel" | Effect.Effect<void, Abandoned, R>
    const carryInPlace = (command: Core.Command<Local, C>, replies: Replies): Carried => {
      const kernelCommand = command as Core.KernelCommand<Local>
      switch (kernelCommand._tag) {
        case "Send":
          post(kernelCommand.to, kernelCommand.message, kernelCommand.via)
          return "done"
        case "Reply":
          replies.push(kernelCommand)
          return "done"
        case "StartTimer":
        case "CancelTimer":
        case "Log":
        case "Exit":
          return "kernel"
        default:
          return options.interpret(command as C, host) ?? "done"
      }
    }

    // Carries out a step's commands in order; the replies wait until the rest is done. A command that fails stops
    // the node (exit 1); one that dies in the shell's own hands (a message that cannot be sent, say) is a defect.
    // Most steps only send, answer and do what their interpreter does at once: those are carried out here, and
    // `undefined` says so; otherwise the effect that carries out the rest.
    const carryOut = (commands: ReadonlyArray<Core.Command<Local, C>>): Effect.Effect<void, never, R> | undefined => {
      const replies: Replies = []
      let next = 0
      let carried: Carried = "done"
      try {
        while (next < commands.length && (carried = carryInPlace(commands[next]!, replies)) === "done") next++
      } catch (defect) {
        return fail("failed to carry out a step", Cause.die(defect))
      }
      if (next === commands.length) {
        for (const { ask, exit } of replies) answer(ask.id, exit)
        return undefined
      }
      return carryOutFrom(commands, next, carried as Exclude<Carried, "done">, replies)
    }

    // The rest of a step from the first command that takes an effect (`carried`: how that one is carried out).
    const carryOutFrom = (
      commands: ReadonlyArray<Core.Command<Local, C>>,
      first: number,
      carried: Exclude<Carried, "done">,
      replies: Replies
    ) =>
      Effect.gen(function*() {
        for (let next = first; next < commands.length; next++) {
          const command = commands[next]!
          const how = next === first ? carried : carryInPlace(command, replies)
          if (how === "done") continue
          if (how === "kernel") {
            const kernelCommand = command as Exclude<Core.KernelCommand<Local>, { _tag: "Send" | "Reply" }>
            switch (kernelCommand._tag) {
              case "StartTimer":
                yield* startTimer(kernelCommand)
                break
              case "CancelTimer":
                yield* FiberMap.remove(timers, kernelCommand.name)
                break
              case "Log":
                yield* logAt(kernelCommand.level, kernelCommand.message)
                break
              case "Exit":
                yield* options.onExit(kernelCommand.code, kernelCommand.reason)
                break
            }
          } else {
            const failed = yield* Effect.exit(how)
            if (Exit.isFailure(failed)) {
              const tag = (command as C)._tag
              const abandoned = Cause.failureOption(failed.cause)
              if (abandoned._tag === "Some") return yield* abandon(tag, abandoned.value.reason, commands)
              yield* Effect.logError(`${core.endpoint.name} could not carry out ${tag}`, failed.cause)
              return yield* stop(1, `${tag} failed: ${describe(failed.cause)}`)
            }
          }
          if (stopped) return
        }
        for (const { ask, exit } of replies) answer(ask.id, exit)
      }).pipe(Effect.catchAllDefect((defect) => fail("failed to carry out a step", Cause.die(defect))))

    // Takes one input: `undefined` once its step is carried out in place, else the effect that finishes it.
    const handle = (input: Core.KernelInput<In> | Local): Effect.Effect<void, never, R> | undefined => {
      const what = input._tag === "Receive"
        ? `Receive ${(input as { readonly message: In }).message._tag}`
        : input._tag
      let commands: ReadonlyArray<Core.Command<Local, C>>
      try {
        commands = core.step(state, { ...input, now: clock.unsafeCurrentTimeMillis() } as Core.Input<In, Local>)
      } catch (defect) {
        return fail(`failed to handle ${what}`, Cause.die(defect))
      }
      if (options.validateState === true) {
        const problems = core.validate(state)
        if (problems.length > 0) {
          return stop(internalErrorCode, `state invariant violated after ${what}: ${problems.join("; ")}`)
        }
      }
      return carryOut(commands)
    }

    // The mailbox is drained in the call that found it idle, step after step, for as long as the steps are carried
    // out in place; the first that needs an effect goes on in a background fiber, which drains the rest. Inputs
    // fed meanwhile (by an interpreter, say) join the queue: a step never runs inside another.
    const drainNow = () => {
      try {
        while (queue.length > 0 && !stopped) {
          const rest = next()
          if (rest !== undefined) {
            runBackground(Effect.zipRight(rest, drain))
            return
          }
        }
      } catch (defect) {
        // The node stops, and takes nothing more.
        runBackground(fail("failed between two steps", Cause.die(defect)))
        return
      }
      draining = false
    }
    // The next piece of work: a read, or an input with the one the core must take before it.
    const next = (): Effect.Effect<void, never, R> | undefined => {
      const work = queue.shift()!
      if (work._tag === "Read") {
        work.read(state)
        return undefined
      }
      const first = options.preempt?.(state)
      const before = first === undefined ? undefined : handle(first)
      if (before === undefined) return stopped ? undefined : handle(work.input)
      return Effect.zipRight(before, Effect.suspend(() => (stopped ? undefined : handle(work.input)) ?? Effect.void))
    }
    const drain: Effect.Effect<void, never, R> = Effect.gen(function*() {
      while (queue.length > 0 && !stopped) {
        const rest = next()
        if (rest !== undefined) yield* rest
      }
      draining = false
    }).pipe(Effect.catchAllDefect((defect) => fail("failed between two steps", Cause.die(defect))))

    const receive = (message: In, context: RpcEnv.MessageContext): Effect.Effect<unknown, unknown> => {
      if (!Core.isRequest(message)) {
        enqueue({
          _tag: "Input",
          input: {
            _tag: "Receive",
            message,
            ask: undefined,
            sender: context.sender,
            peer: context.peer,
            connection: context.connection
          }
        })
        return Effect.void
      }
      const ask: Core.Ask<In> = { id: nextAskId++, request: message }
      const deferred = Deferred.unsafeMake<unknown, unknown>(FiberId.none)
      pendingAsks.set(ask.id, { deferred, tag: message._tag })
      enqueue({
        _tag: "Input",
        input: {
          _tag: "Receive",
          message,
          ask,
          sender: context.sender,
          peer: context.peer,
          connection: context.connection
        }
      })
      return Deferred.await(deferred)
    }

    // Every message goes through `receive`, whose reply is checked against the request where the core answers
    // (Core.reply); the handler table and the context it needs (none) are therefore stated, not inferred.
    const handlers = Object.fromEntries(Endpoints.tags(core.endpoint).map((tag) => [tag, receive]))
    const register = rpc.register(core.endpoint.name, {
      inbound: core.endpoint.inbound,
      handlers: handlers as unknown as RpcEnv.Handlers<In, never>,
      onConnected: (peer, connection) =>
        Effect.sync(() => enqueue({ _tag: "Input", input: { _tag: "Connected", peer, connection } })),
      onDisconnected: (peer, connection) =>
        Effect.sync(() => enqueue({ _tag: "Input", input: { _tag: "Disconnected", peer, connection } })),
      // The mailbox orders the inputs; the endpoint must not hold a message back while an ask waits for its step.
      concurrency: "unbounded"
    }) as Effect.Effect<void, RpcEnv.EndpointAlreadyRegistered, Scope.Scope>
    yield* register
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        stopped = true
        for (const { deferred } of pendingAsks.values()) Deferred.unsafeDone(deferred, Exit.interrupt(FiberId.none))
        pendingAsks.clear()
      })
    )
    enqueue({ _tag: "Input", input: { _tag: "Start" } })

    return {
      address,
      self: Endpoints.ref(address, core.endpoint),
      feed: host.feed,
      halt: (reason) => stop(internalErrorCode, reason),
      read: <A>(f: (state: S) => A) =>
        Effect.suspend(() => {
          const deferred = Deferred.unsafeMake<A>(FiberId.none)
          enqueue({ _tag: "Read", read: (s) => Deferred.unsafeDone(deferred, Exit.succeed(f(s))) })
          return Deferred.await(deferred)
        })
    }
  })
