/**
 * Defects on demand, for the tests that check how a role ends when its own logic fails: the core of one role
 * throws on the inputs a test picks, through the shell's `CoreWrapper` seam, and every other core runs as it is.
 *
 * @since 0.1.0
 */
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Shell from "./Shell.js"

/**
 * The wrapper under which the core of the role at endpoint `endpoint` throws on an input `when` picks — by the
 * input's tag, or the message's tag for a received message; `input` is the whole input.
 *
 * @since 0.1.0
 * @category constructors
 */
export const throwing = (
  endpoint: string,
  when: (tag: string, input: unknown) => boolean
): Context.Tag.Service<typeof Shell.CoreWrapper> =>
(core) =>
  core.endpoint.name !== endpoint ? core : {
    ...core,
    step: (state, input) => {
      const tag = input._tag === "Receive"
        ? (input as { readonly message: { readonly _tag: string } }).message._tag
        : input._tag
      if (when(tag, input)) throw new Error(`injected defect at ${tag}`)
      return core.step(state, input)
    }
  }

/**
 * Runs `effect` with the core of `endpoint` throwing as `throwing` says.
 *
 * @since 0.1.0
 * @category combinators
 */
export const injected = (
  endpoint: string,
  when: (tag: string, input: unknown) => boolean
) =>
<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.provideService(effect, Shell.CoreWrapper, throwing(endpoint, when))
