/**
 * How a master learns that it leads. Spark elects a single master at once ("monarchy") in recovery modes NONE
 * and FILESYSTEM, and runs a ZooKeeper latch for standby masters in recovery mode ZOOKEEPER
 * (`ZooKeeperRecovery`).
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type { UntrustedStore } from "./StoreTrust.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Candidate {
  readonly elected: Effect.Effect<void>
  readonly revoked: Effect.Effect<void>
  /**
   * The election's own nodes are not the cluster's (`StoreTrust`): this candidate has left the election for good,
   * and the master must stop.
   */
  readonly untrusted: (error: UntrustedStore) => Effect.Effect<void>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class LeaderElection extends Context.Tag("@kindling/master/LeaderElection")<LeaderElection, {
  /** Takes part in the election for as long as the scope is open, calling back on each change. */
  readonly join: (candidate: Candidate) => Effect.Effect<void, never, Scope.Scope>
  /**
   * Whether this master may act as leader at this instant, by its own clock. It turns false the moment the
   * election can no longer vouch for the leadership (its lease on it ran out), which may be before the election
   * has reported the revocation: a master paused past its session's timeout checks this before anything else.
   */
  readonly mayLead: () => boolean
  /**
   * Gives up the leadership at once, because a write the leader had to make failed (it can no longer vouch that
   * its records are the ones a successor will read): `revoked` is called and `mayLead` turns false before this
   * returns, and the master stays in the election as a candidate. Absent where no other master can take over: the
   * only master stops instead.
   */
  readonly resign?: (reason: string) => Effect.Effect<void>
}>() {}

/**
 * The only master there is: elected as soon as it joins, never revoked.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSingle: Layer.Layer<LeaderElection> = Layer.succeed(LeaderElection, {
  join: (candidate) => candidate.elected,
  mayLead: () => true
})
