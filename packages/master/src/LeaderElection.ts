/**
 * How a master learns that it leads. Spark elects a single master at once ("monarchy") in recovery modes NONE
 * and FILESYSTEM, and runs a ZooKeeper latch for standby masters; a coordination service comes later, behind
 * this same port.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"

/**
 * @since 0.1.0
 * @category models
 */
export interface Candidate {
  readonly elected: Effect.Effect<void>
  readonly revoked: Effect.Effect<void>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class LeaderElection extends Context.Tag("@kindling/master/LeaderElection")<LeaderElection, {
  /** Takes part in the election for as long as the scope is open, calling back on each change. */
  readonly join: (candidate: Candidate) => Effect.Effect<void, never, Scope.Scope>
}>() {}

/**
 * The only master there is: elected as soon as it joins, never revoked.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSingle: Layer.Layer<LeaderElection> = Layer.succeed(LeaderElection, {
  join: (candidate) => candidate.elected
})
