/**
 * What follows an app's event stream besides its schedulers — its web UI, its event log, the console progress
 * bar — as the driver's runtime sees it: a port. The listeners themselves (`@kindling/monitoring`) sit above the
 * driver, as Spark's status store listens to its scheduler; the package that composes a driver (`cli`) hands them
 * to `LocalMode` or `Cluster`, which start them the same way in every deploy mode: before the app's first job,
 * telling them the app's id once it has one.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { Driver } from "./Driver.js"

/**
 * The app as its listeners know it from the start (its id comes later: `Listening.setAppId`).
 *
 * @since 0.1.0
 * @category models
 */
export interface App {
  readonly name: string
  /** The master URL as given: `local[2]`, `kindling://host:7077`, … */
  readonly master: string
  readonly user: string
  readonly startTime: number
}

/**
 * What listeners get of the driver: its events (as a stream, as a queue drained in batches, or handed over as the
 * driver makes them) and a way to cancel a job, as the UI's kill button does.
 *
 * @since 0.1.0
 * @category models
 */
export type Source = Pick<Driver, "subscribe" | "listen" | "onEvents" | "cancelJob">

/**
 * Listeners that have started.
 *
 * @since 0.1.0
 * @category models
 */
export interface Listening {
  /** Where the app's UI is, unless it is off or could not listen. */
  readonly uiUrl: string | undefined
  /** Where the app's event log goes, which a master lists with the app (Spark's `eventLogDir` and codec). */
  readonly eventLog: { readonly dir: string; readonly codec: string | undefined } | undefined
  /** Gives them the app's id (local mode: at once; on a cluster: once the master registered it). */
  readonly setAppId: (appId: string) => void
}

/**
 * Starts listeners on a driver; they stop with the scope. A listener that cannot start (a UI with no free port, a
 * log folder that cannot be written) is reported by it, and the app goes on without it: the result never fails.
 *
 * @since 0.1.0
 * @category models
 */
export type Start = (app: App, driver: Source) => Effect.Effect<Listening, never, Scope.Scope>

/**
 * No listener: an app nobody watches (the simulated cluster's, a test's).
 *
 * @since 0.1.0
 * @category constructors
 */
export const none: Start = () => Effect.succeed({ uiUrl: undefined, eventLog: undefined, setAppId: () => {} })
