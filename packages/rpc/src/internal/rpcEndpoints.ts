/**
 * The endpoints registered on a node, and how each takes what the network (or the node itself) delivers: the
 * messages for it, each run by its handler with the outcome sent back for an ask, and the connects and
 * disconnects it is told about. A sequential endpoint (the default) handles one delivery at a time, in order; an
 * unbounded one runs each in its own fiber. Unregistering answers what it had not taken yet with
 * `EndpointNotFound` and interrupts what it was running.
 */
import { type Codec, Errors, type RpcAddress } from "@kindling/protocol"
import * as Cause from "effect/Cause"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Runtime from "effect/Runtime"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type * as Api from "../RpcEnv.js"

export class EndpointAlreadyRegistered extends Data.TaggedError("EndpointAlreadyRegistered")<{
  readonly name: string
}> {
  override get message(): string {
    return `An endpoint named ${this.name} is already registered`
  }
}

export type Delivery =
  | {
    readonly _tag: "message"
    readonly message: Codec.Message
    readonly context: Api.MessageContext
    readonly reply: ((exit: Exit.Exit<unknown, unknown>) => void) | undefined
  }
  | { readonly _tag: "connected" | "disconnected"; readonly peer: RpcAddress.RpcAddress; readonly connection: number }

export interface EndpointRuntime {
  readonly name: string
  readonly inbound: Schema.Schema<any, any, never>
  /** Whether a message handed over as a value (not decoded with `inbound`) is one the endpoint accepts. */
  readonly accepts: (message: unknown) => boolean
  /** What a message it does not accept is answered with: as a frame whose body `inbound` cannot decode. */
  readonly refusal: (message: Codec.Message) => Errors.MalformedFrame
  readonly deliver: (delivery: Delivery) => void
}

/**
 * The endpoints of one node by name.
 */
export interface Registry {
  readonly get: (name: string) => EndpointRuntime | undefined
  /** Tells every endpoint of a connection that opened or closed. */
  readonly notify: (delivery: Delivery) => void
  /** Registers `endpoint` as `name` for the scope's lifetime. */
  readonly register: <A extends Codec.Message, R>(
    name: string,
    endpoint: Api.Endpoint<A, Api.Handlers<A, R>, R>
  ) => Effect.Effect<void, EndpointAlreadyRegistered, R | Scope.Scope>
}

// Messages are instances of their Schema classes, checked when they are made: whether an endpoint takes one is a
// matter of its class, asked of the inbound union once per class rather than once per message. Anything else (a
// plain object) is refused, as the frame path refuses to encode it.
const acceptsByClass = (inbound: Schema.Schema<any, any, never>) => {
  const isInbound = Schema.is(inbound)
  const byClass = new Map<unknown, boolean>()
  return (message: unknown): boolean => {
    const ctor = (message as { readonly constructor?: unknown } | null)?.constructor
    let accepted = byClass.get(ctor)
    if (accepted === undefined) {
      accepted = Schema.isSchema(ctor) && isInbound(message)
      byClass.set(ctor, accepted)
    }
    return accepted
  }
}

export const makeRegistry = (): Registry => {
  const endpoints = new Map<string, EndpointRuntime>()

  const notify = (delivery: Delivery) => {
    for (const endpoint of endpoints.values()) endpoint.deliver(delivery)
  }

  const register = <A extends Codec.Message, R>(name: string, endpoint: Api.Endpoint<A, Api.Handlers<A, R>, R>) =>
    Effect.gen(function*() {
      if (endpoints.has(name)) return yield* Effect.fail(new EndpointAlreadyRegistered({ name }))
      const endpointRuntime = yield* Effect.runtime<R>()
      const runEndpointFork = Runtime.runFork(endpointRuntime)
      const handlers = endpoint.handlers as unknown as Record<string, Api.Handler<Codec.Message, R>>
      const running = new Set<Fiber.RuntimeFiber<void>>()

      const handle = (delivery: Delivery): Effect.Effect<void, never, R> => {
        if (delivery._tag !== "message") {
          const hook = delivery._tag === "connected" ? endpoint.onConnected : endpoint.onDisconnected
          return hook === undefined
            ? Effect.void
            : Effect.catchAllCause(
              hook(delivery.peer, delivery.connection),
              (cause) => Effect.logError(`endpoint ${name}: ${delivery._tag} hook failed`, cause)
            )
        }
        return run(
          delivery,
          Effect.suspend(() => handlers[delivery.message._tag]!(delivery.message, delivery.context))
        )
      }

      type MessageDelivery = Extract<Delivery, { _tag: "message" }>

      const isReported = (delivery: MessageDelivery, exit: Exit.Exit<unknown, unknown>) =>
        Exit.isSuccess(exit) || (Cause.isFailType(exit.cause) && delivery.reply !== undefined)

      const failed = (delivery: MessageDelivery, exit: Exit.Failure<unknown, unknown>) =>
        Effect.logError(`endpoint ${name} failed to handle ${delivery.message._tag}`, exit.cause)

      // Runs a handler's effect and answers with its outcome. A declared failure of an ask is the asker's to
      // report; anything else that goes wrong is logged here.
      const run = (delivery: MessageDelivery, effect: Effect.Effect<unknown, unknown, R>) =>
        Effect.flatMap(Effect.exit(effect), (exit) => {
          delivery.reply?.(exit)
          return isReported(delivery, exit) ? Effect.void : failed(delivery, exit as Exit.Failure<unknown, unknown>)
        })

      // A handler that answers with a value it already has (Effect.succeed, Effect.fail: an Exit) needs no
      // fiber; when the endpoint is idle its answer goes out at once.
      const build = (delivery: MessageDelivery): Effect.Effect<unknown, unknown, R> => {
        try {
          return handlers[delivery.message._tag]!(delivery.message, delivery.context)
        } catch (error) {
          return Exit.die(error)
        }
      }

      const runNow = (delivery: MessageDelivery): boolean => {
        const effect = build(delivery)
        if (!Exit.isExit(effect)) {
          track(runEndpointFork(sequential ? Effect.zipRight(run(delivery, effect), drain) : run(delivery, effect)))
          return false
        }
        delivery.reply?.(effect)
        if (!isReported(delivery, effect)) runEndpointFork(failed(delivery, effect as Exit.Failure<unknown, unknown>))
        return true
      }

      // Sequential endpoints drain their backlog in one fiber, started synchronously when a delivery finds the
      // endpoint idle, so a handler that does not suspend answers within the socket callback.
      const sequential = endpoint.concurrency !== "unbounded"
      const backlog: Array<Delivery> = []
      let draining = false
      const drain: Effect.Effect<void, never, R> = Effect.suspend(() => {
        const next = backlog.shift()
        if (next === undefined) {
          draining = false
          return Effect.void
        }
        return Effect.zipRight(handle(next), drain)
      })
      const track = (fiber: Fiber.RuntimeFiber<void>) => {
        running.add(fiber)
        fiber.addObserver(() => running.delete(fiber))
      }
      const deliver = (delivery: Delivery) => {
        if (!sequential) {
          if (delivery._tag === "message") runNow(delivery)
          else track(runEndpointFork(handle(delivery)))
          return
        }
        if (draining) {
          backlog.push(delivery)
          return
        }
        draining = true
        if (delivery._tag === "message") {
          if (runNow(delivery)) draining = false
          return
        }
        backlog.push(delivery)
        track(runEndpointFork(drain))
      }

      yield* Effect.acquireRelease(
        Effect.sync(() =>
          endpoints.set(name, {
            name,
            inbound: endpoint.inbound,
            accepts: acceptsByClass(endpoint.inbound),
            refusal: (message) =>
              new Errors.MalformedFrame({ reason: `endpoint ${name} does not accept ${message._tag}` }),
            deliver
          })
        ),
        () =>
          Effect.gen(function*() {
            endpoints.delete(name)
            for (const delivery of backlog.splice(0)) {
              if (delivery._tag === "message") {
                delivery.reply?.(Exit.fail(new Errors.EndpointNotFound({ endpoint: name })))
              }
            }
            yield* Fiber.interruptAll(running)
          })
      )
    })

  return { get: (name) => endpoints.get(name), notify, register }
}
