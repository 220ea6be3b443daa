/**
 * Fire-and-forget sending in Spark's sense: `post` returns at once, messages to one destination go out in the
 * order they were posted — at once when the connection to it is open, else from a fiber of their own that dials
 * it — so a slow or unreachable peer delays only its own messages and never the node that posts them. A failed send is reported to `onError` and dropped.
 *
 * @since 0.1.0
 */
import { type Codec, type Errors, RpcAddress } from "@kindling/protocol"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FiberSet from "effect/FiberSet"
import type * as Scope from "effect/Scope"
import type { ConnectionId, RpcEnv } from "./RpcEnv.js"

/**
 * @since 0.1.0
 * @category models
 */
export type Post = <M extends Codec.Message>(to: RpcAddress.Ref<M>, message: M, via?: ConnectionId) => void

/**
 * What is done with a failed send unless told otherwise: a warning naming the message, the destination and why.
 *
 * @since 0.1.0
 * @category constructors
 */
export const warn = (
  to: RpcAddress.RpcEndpointRef,
  message: Codec.Message,
  error: Errors.RpcError
): Effect.Effect<void> => Effect.logWarning(`Could not send ${message._tag} to ${to.toString()}: ${error.message}`)

/**
 * An outbox on the RpcEnv; its fibers stop when the scope closes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  rpc: RpcEnv,
  onError: (to: RpcAddress.RpcEndpointRef, message: Codec.Message, error: Errors.RpcError) => Effect.Effect<void> = warn
): Effect.Effect<Post, never, Scope.Scope> =>
  Effect.gen(function*() {
    const fibers = yield* FiberSet.make()
    const run = yield* FiberSet.runtime(fibers)<never>()
    const queues = new Map<
      string,
      Array<
        {
          readonly to: RpcAddress.Ref<Codec.Message>
          readonly message: Codec.Message
          readonly via: ConnectionId | undefined
        }
      >
    >()
    const drain = (destination: string): Effect.Effect<void> =>
      Effect.suspend(() => {
        const next = queues.get(destination)!.shift()
        if (next === undefined) {
          queues.delete(destination)
          return Effect.void
        }
        return rpc.send(next.to, next.message, { via: next.via }).pipe(
          Effect.catchAll((error) => onError(next.to, next.message, error)),
          Effect.zipRight(drain(destination))
        )
      })
    return <M extends Codec.Message>(to: RpcAddress.Ref<M>, message: M, via?: ConnectionId) => {
      const destination = RpcAddress.key(to.address)
      // Held as a ref to any message: `post`'s signature has checked that this one accepts `message`.
      const entry = { to: to as RpcAddress.Ref<Codec.Message>, message, via }
      const queue = queues.get(destination)
      if (queue !== undefined) {
        queue.push(entry)
        return
      }
      // Nothing waits for this destination: on an open connection the message goes out now, without a fiber.
      const sent = rpc.sendNow(entry.to, message, { via })
      if (sent === undefined) {
        queues.set(destination, [entry])
        run(drain(destination))
      } else if (Either.isLeft(sent)) {
        run(onError(entry.to, message, sent.left))
      }
    }
  })
