/**
 * The contract every role's logic follows: a core is a deterministic state machine,
 * `step(state, input) → commands`. Inputs are decoded messages, connection events, timer ticks and the role's
 * local events, and every one carries `now`, so a core reads no clock. Commands are data: send a message, answer
 * an ask, arm or cancel a timer, log, exit, or anything the role's own interpreter knows how to do. A core owns
 * its state and updates it in place; nothing else may change it.
 *
 * Replies are typed by the request: a message that is an ask reaches the core with an `Ask` for it, and
 * `reply(out, ask, exit)` accepts only that request's reply and declared errors, so a wrong reply does not
 * compile. An ask may be answered in the step that received it or kept and answered in a later one.
 *
 * `Shell` hosts a core on an RpcEnv; the simulated cluster hosts the same cores on a simulated network.
 *
 * @since 0.1.0
 */
import type { Codec, Endpoints, RpcAddress } from "@kindling/protocol"
import type { RpcEnv } from "@kindling/rpc"
import type * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import type * as KernelInputs from "./KernelInputs.js"

/**
 * An ask being answered: the request, and an id the shell uses to route the reply (`KernelInputs.Ask`, with the
 * request's own type).
 *
 * @since 0.1.0
 * @category models
 */
export interface Ask<M extends Codec.Message> extends Omit<AnyAsk, "request"> {
  readonly request: M
}

// The kernel's ask of any message; `Ask` keeps its fields and narrows the request.
type AnyAsk = Exclude<typeof KernelInputs.Receive.Type["ask"], undefined>

/**
 * A message received, as a role's core gets it: the kernel's `Receive` (see `KernelInputs`), its message one of
 * the endpoint's.
 *
 * @since 0.1.0
 * @category models
 */
export interface Receive<In extends Codec.Message> extends Omit<typeof KernelInputs.Receive.Type, "message" | "ask"> {
  readonly message: In
  readonly ask: Ask<In> | undefined
}

/**
 * What every role receives from the kernel, besides its own local inputs: `Start` once, before anything else;
 * `Receive` for each message; `Connected` and `Disconnected` as peers come and go (`KernelInputs` describes each).
 *
 * @since 0.1.0
 * @category models
 */
export type KernelInput<In extends Codec.Message> =
  | Exclude<typeof KernelInputs.Input.Type, { readonly _tag: "Receive" }>
  | Receive<In>

/**
 * Something a role's core is told: a kernel input or one of the role's local inputs (timer ticks, process
 * reports), with the time it is handled.
 *
 * @since 0.1.0
 * @category models
 */
export type Input<In extends Codec.Message, Local extends { readonly _tag: string }> =
  & (KernelInput<In> | Local)
  & { readonly now: number }

/**
 * The commands every shell carries out, whatever the role.
 *
 * @since 0.1.0
 * @category models
 */
export type KernelCommand<Local> =
  /** Made by `send`, which checks that the endpoint accepts the message. */
  | {
    readonly _tag: "Send"
    readonly to: RpcAddress.Ref<Codec.Message>
    readonly message: Codec.Message
    /** The connection to send it on while that is open (see `RpcEnv.send`). */
    readonly via: RpcEnv.ConnectionId | undefined
  }
  /** Made by `reply`, which checks the outcome against the request. */
  | { readonly _tag: "Reply"; readonly ask: Ask<Codec.Message>; readonly exit: Exit.Exit<unknown, unknown> }
  /**
   * Feeds `input` after `delayMillis`, then every `periodMillis` if given (at a fixed rate, as Spark's timers),
   * replacing any timer of the same name.
   */
  | {
    readonly _tag: "StartTimer"
    readonly name: string
    readonly delayMillis: number
    readonly periodMillis: number | undefined
    readonly input: Local
  }
  | { readonly _tag: "CancelTimer"; readonly name: string }
  | { readonly _tag: "Log"; readonly level: LogLevel; readonly message: string }
  /** The node must stop, with this process exit code. */
  | { readonly _tag: "Exit"; readonly code: number; readonly reason: string }

/**
 * @since 0.1.0
 * @category models
 */
export type LogLevel = "Debug" | "Info" | "Warning" | "Error"

/**
 * What a step returns: kernel commands and the role's own.
 *
 * @since 0.1.0
 * @category models
 */
export type Command<Local, C> = KernelCommand<Local> | C

/**
 * A role's logic.
 *
 * @since 0.1.0
 * @category models
 */
export interface Core<
  S,
  In extends Codec.Message,
  Local extends { readonly _tag: string },
  C extends { readonly _tag: string }
> {
  /** The endpoint the core's messages arrive at, and their union. */
  readonly endpoint: Endpoints.Kind<In>
  readonly step: (state: S, input: Input<In, Local>) => ReadonlyArray<Command<Local, C>>
  /** What is wrong with the state, if anything: the role's invariants, checked by tests and on demand. */
  readonly validate: (state: S) => ReadonlyArray<string>
}

/**
 * Where a step collects its commands; transitions take it along (with whatever else the role's step carries).
 *
 * @since 0.1.0
 * @category models
 */
export interface Out<Local, C> {
  readonly now: number
  readonly commands: Array<Command<Local, C>>
}

/**
 * A one-way message to an endpoint that accepts it.
 *
 * @since 0.1.0
 * @category commands
 */
export const send = <M extends Codec.Message>(
  out: Out<any, any>,
  to: RpcAddress.Ref<M>,
  message: M,
  via?: RpcEnv.ConnectionId
): void => {
  // The signature has checked `to` against `message`; the command holds any ref.
  out.commands.push({ _tag: "Send", to: to as RpcAddress.Ref<Codec.Message>, message, via })
}

/**
 * Answers an ask with the request's own reply type or one of its declared errors.
 *
 * @since 0.1.0
 * @category commands
 */
export const reply = <M extends Codec.Message>(
  out: Out<any, any>,
  ask: Ask<M>,
  exit: Exit.Exit<RpcEnv.ReplyOf<M>, RpcEnv.FailureOf<M>>
): void => {
  out.commands.push({ _tag: "Reply", ask, exit })
}

/**
 * @since 0.1.0
 * @category commands
 */
export const log = (out: Out<any, any>, level: LogLevel, message: string): void => {
  out.commands.push({ _tag: "Log", level, message })
}

/**
 * @since 0.1.0
 * @category commands
 */
export const startTimer = <Local>(
  out: Out<Local, any>,
  name: string,
  input: Local,
  delayMillis: number,
  periodMillis?: number
): void => {
  out.commands.push({ _tag: "StartTimer", name, input, delayMillis, periodMillis })
}

/**
 * @since 0.1.0
 * @category commands
 */
export const cancelTimer = (out: Out<any, any>, name: string): void => {
  out.commands.push({ _tag: "CancelTimer", name })
}

/**
 * @since 0.1.0
 * @category commands
 */
export const exit = (out: Out<any, any>, code: number, reason: string): void => {
  out.commands.push({ _tag: "Exit", code, reason })
}

/**
 * The `Ask` a handler of `M` gets: one for a request, none for a one-way message.
 *
 * @since 0.1.0
 * @category models
 */
export type AskFor<M extends Codec.Message> = M extends Schema.WithResult.All ? Ask<M> : undefined

/**
 * One handler per message of an endpoint's union, so a message added to the union makes the compiler ask for
 * its handler; each gets its own message type and, for a request, the `Ask` its reply must match.
 *
 * @since 0.1.0
 * @category models
 */
export type Handlers<In extends Codec.Message, Ctx> = {
  readonly [Tag in In["_tag"]]: (
    ctx: Ctx,
    message: Extract<In, { readonly _tag: Tag }>,
    ask: AskFor<Extract<In, { readonly _tag: Tag }>>
  ) => void
}

/**
 * Routes a received message to its handler.
 *
 * @since 0.1.0
 * @category constructors
 */
export const dispatch = <In extends Codec.Message, Ctx>(handlers: Handlers<In, Ctx>) =>
(
  ctx: Ctx,
  message: In,
  ask: Ask<In> | undefined
): void => {
  // The mapped type guarantees a handler per tag whose parameters are this message's; TypeScript cannot follow
  // a correlated lookup through the union, hence the widening.
  const handler = handlers[message._tag as In["_tag"]] as (ctx: Ctx, message: In, ask: Ask<In> | undefined) => void
  handler(ctx, message, ask)
}

/**
 * A peer's connection opened or closed.
 *
 * @since 0.1.0
 * @category models
 */
export type ConnectionInput = Extract<KernelInput<never>, { readonly _tag: "Connected" | "Disconnected" }>

/**
 * One handler per input a core takes: the kernel's — `Start`, `Connected` and `Disconnected` when the role acts on
 * them (left out, they are ignored), `Receive` as one handler per message (`Handlers`) — and one per local input
 * of the role's own, so a local input added to the union makes the compiler ask for its handler.
 *
 * @since 0.1.0
 * @category models
 */
export type InputHandlers<In extends Codec.Message, Local extends { readonly _tag: string }, Ctx> =
  & {
    readonly Start?: (ctx: Ctx) => void
    readonly Receive: Handlers<In, Ctx>
    readonly Connected?: (ctx: Ctx, input: ConnectionInput) => void
    readonly Disconnected?: (ctx: Ctx, input: ConnectionInput) => void
  }
  & { readonly [Tag in Local["_tag"]]: (ctx: Ctx, input: Extract<Local, { readonly _tag: Tag }>) => void }

/**
 * Routes an input to its handler: the `switch` over the kernel's inputs and the role's that every core's `step`
 * would otherwise repeat.
 *
 * @since 0.1.0
 * @category constructors
 */
export const inputs = <In extends Codec.Message, Local extends { readonly _tag: string }, Ctx>(
  handlers: InputHandlers<In, Local, Ctx>
) => {
  const receive = dispatch<In, Ctx>(handlers.Receive)
  // As in `dispatch`: a handler per tag is guaranteed by the mapped type, not followed through the union.
  const local = handlers as unknown as Record<string, (ctx: Ctx, input: Local) => void>
  return (ctx: Ctx, input: KernelInput<In> | Local): void => {
    const kernel = input as KernelInput<In>
    switch (kernel._tag) {
      case "Start":
        return handlers.Start?.(ctx)
      case "Receive":
        return receive(ctx, kernel.message, kernel.ask)
      case "Connected":
        return handlers.Connected?.(ctx, kernel)
      case "Disconnected":
        return handlers.Disconnected?.(ctx, kernel)
      default:
        return local[(input as Local)._tag]!(ctx, input as Local)
    }
  }
}

/**
 * Whether a message is a request (it carries the schemas of its reply).
 *
 * @since 0.1.0
 * @category guards
 */
export const isRequest = (message: Codec.Message): boolean => Schema.symbolWithResult in message
