// Dials that belong to the node, not to the fiber that needed the connection first: every fiber that needs the same
// connection meanwhile waits on the one dial, and one that gives up (its ask timed out, its task or command was
// interrupted) stops waiting at once while the dial goes on for the others. A dial is bounded by the lookup timeout,
// or ends when the node stops. The control plane's connections and the data plane's fetch links both dial this way.
import type { Errors } from "@kindling/protocol"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"

export interface SharedDials<A> {
  /** The connection `key` names: the dial under way, or `connect` run now as the node's own. */
  readonly dial: (key: string, connect: Effect.Effect<A, Errors.RpcError>) => Effect.Effect<A, Errors.RpcError>
  /** Interrupts the dials under way; their waiters fail with `stopped`. */
  readonly stop: Effect.Effect<void>
}

export const makeSharedDials = <A>(
  runFork: <X, E>(effect: Effect.Effect<X, E>) => Fiber.RuntimeFiber<X, E>,
  stopped: (key: string) => Errors.RpcError
): SharedDials<A> => {
  const dialing = new Map<string, Deferred.Deferred<A, Errors.RpcError>>()
  const fibers = new Set<Fiber.RuntimeFiber<unknown, unknown>>()
  const dial = (key: string, connect: Effect.Effect<A, Errors.RpcError>) =>
    Effect.suspend(() => {
      const inFlight = dialing.get(key)
      if (inFlight !== undefined) return Deferred.await(inFlight)
      const deferred = Deferred.unsafeMake<A, Errors.RpcError>(FiberId.none)
      dialing.set(key, deferred)
      const fiber = runFork(connect.pipe(Effect.onExit((exit) =>
        Effect.sync(() => {
          dialing.delete(key)
          Deferred.unsafeDone(deferred, Exit.isInterrupted(exit) ? Exit.fail(stopped(key)) : exit)
        })
      )))
      fibers.add(fiber)
      fiber.addObserver(() => fibers.delete(fiber))
      return Deferred.await(deferred)
    })
  return { dial, stop: Effect.suspend(() => Fiber.interruptAll([...fibers])) }
}
