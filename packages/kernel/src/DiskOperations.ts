/**
 * File operations as Effects, their failures `DiskError`s naming the operation, the path and the system's code.
 *
 * Removing what a node no longer needs — its scratch directory, a finished app's directories, old work dirs, a
 * fetched block's file, a dropped dataset's blocks — is a cleanup: where one is run for its own sake, its failure
 * is logged as a warning and goes no further (`logged`). What is left behind only takes space, and must never
 * stop the node or fail the work it cleans up after.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import { type DiskError, fromCause } from "./DiskError.js"

/**
 * A synchronous operation on `path`, which may throw.
 *
 * @since 0.1.0
 * @category constructors
 */
export const attempt = <A>(operation: string, path: string, run: () => A): Effect.Effect<A, DiskError> =>
  Effect.try({ try: run, catch: (error) => fromCause(operation, path, error) })

/**
 * An asynchronous operation on `path`, which may reject.
 *
 * @since 0.1.0
 * @category constructors
 */
export const attemptPromise = <A>(
  operation: string,
  path: string,
  run: () => Promise<A>
): Effect.Effect<A, DiskError> => Effect.tryPromise({ try: run, catch: (error) => fromCause(operation, path, error) })

/**
 * Runs a cleanup; its failure is logged, not passed on.
 *
 * @since 0.1.0
 * @category combinators
 */
export const logged = <R>(cleanup: Effect.Effect<void, DiskError, R>): Effect.Effect<void, never, R> =>
  Effect.catchAll(cleanup, (error) => Effect.logWarning(`Cleanup failed: ${error.message}`))

/**
 * Removes `path` by the synchronous `remove`, logging a failure.
 *
 * @since 0.1.0
 * @category combinators
 */
export const removing = (path: string, remove: () => void): Effect.Effect<void> =>
  logged(attempt("remove", path, remove))
