/**
 * What watches a live app, as its driver is handed it (the driver's `AppListeners` port): its web UI, its event
 * log and the console progress bar, each following the driver's event stream. `kindling` makes them from the app's
 * configuration and gives them to the driver's runtime, which starts them before the app's first job in every
 * deploy mode.
 *
 * @since 0.1.0
 */
import type { AppListeners } from "@kindling/driver"
import * as Effect from "effect/Effect"
import * as AppUi from "./AppUi.js"
import * as ConsoleProgress from "./ConsoleProgress.js"
import * as EventLogWriter from "./EventLogWriter.js"
import * as MonitoringApi from "./MonitoringApi.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Serve the app's web UI (`kindling.ui.*`). */
  readonly ui?: AppUi.Options | undefined
  /** Write the app's event log (`kindling.eventLog.*`). */
  readonly eventLog?: EventLogWriter.Options | undefined
  /** Draw the console progress bar on stderr (`kindling.ui.showConsoleProgress`). */
  readonly progress?: boolean | undefined
}

/**
 * The listeners `options` asks for; each stops with the scope they are started in.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options): AppListeners.Start => (app, driver) =>
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
    if (options.progress === true) yield* ConsoleProgress.run(ConsoleProgress.onStderr(yield* driver.subscribe))
    return {
      uiUrl: ui?.url,
      eventLog: options.eventLog === undefined ? undefined : {
        dir: options.eventLog.dir,
        codec: options.eventLog.compress ? EventLogWriter.codec : undefined
      },
      setAppId: (appId) => {
        ui?.setAppId(appId)
        log?.setAppId(appId)
      }
    }
  })
