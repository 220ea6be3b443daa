/**
 * What follows an app's event stream besides its schedulers, started the same way in every deploy mode: its web
 * UI and its event log. Both subscribe before the app's first job and learn the app's id when it has one.
 *
 * @since 0.1.0
 */
import { type AppPages, AppUi, EventLogWriter, MonitoringApi } from "@kindling/monitoring"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { Driver } from "./Driver.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Serve the app's web UI (`kindling.ui.*`). */
  readonly ui?: AppUi.Options | undefined
  /** Write the app's event log (`kindling.eventLog.*`). */
  readonly eventLog?: EventLogWriter.Options | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface AppListeners {
  /** Where the app's UI is, unless it is off or could not listen. */
  readonly uiUrl: string | undefined
  /** Gives the UI and the log the app's id (local mode: at once; on a cluster: once the master registered it). */
  readonly setAppId: (appId: string) => void
}

/**
 * Starts what `options` asks for; each stops with the scope.
 *
 * @since 0.1.0
 * @category constructors
 */
export const start = (
  options: Options,
  app: AppPages.AppDescription,
  driver: Pick<Driver, "listen" | "onEvents" | "cancelJob">
): Effect.Effect<AppListeners, never, Scope.Scope> =>
  Effect.gen(function*() {
    // The log listens before the UI starts: starting the UI (binding its port) lets the app go on meanwhile, and
    // the log must not miss what happens then.
    const log = options.eventLog === undefined ? undefined : yield* EventLogWriter.start(options.eventLog, {
      name: app.name,
      user: app.user,
      startTime: app.startTime,
      version: MonitoringApi.version
    })
    if (log !== undefined) yield* driver.onEvents(log.add)
    const ui = yield* AppUi.startIfEnabled(options.ui, app, driver)
    return {
      uiUrl: ui?.url,
      setAppId: (appId) => {
        ui?.setAppId(appId)
        log?.setAppId(appId)
      }
    }
  })
