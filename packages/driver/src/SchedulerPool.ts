/**
 * Which scheduler pool an action's job runs in (Spark's `spark.scheduler.pool` local property). Under
 * `kindling.scheduler.mode=FAIR` the pools share the app's cores — a freed core goes to the pool running the
 * fewest tasks — so a short interactive job is not stuck behind a long one; under FIFO pools change nothing.
 * The pool follows the fiber, as Spark's follows the thread:
 *
 *     yield* report.count().pipe(SchedulerPool.within("reports"))
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"

/**
 * The pool of the jobs this fiber starts: `default` unless set.
 *
 * @since 0.1.0
 * @category fiber refs
 */
export const current: FiberRef.FiberRef<string> = FiberRef.unsafeMake("default")

/**
 * Runs `effect` with its jobs in `pool`.
 *
 * @since 0.1.0
 * @category combinators
 */
export const within = (pool: string) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.locally(effect, current, pool)
