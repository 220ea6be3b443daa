/**
 * What watches an app that `kindling` runs a driver for — its web UI, its event log, the console progress bar —
 * made from the app's configuration (`kindling.ui.*`, `kindling.eventLog.*`) and handed to the driver's runtime
 * (`LocalMode`, `Cluster`), which cannot import them: they sit above it, in `@kindling/monitoring`.
 *
 * @since 0.1.0
 */
import type { Conf, Problem } from "@kindling/conf"
import { type AppListeners, DriverConf } from "@kindling/driver"
import { KernelConf, TlsConf } from "@kindling/kernel"
import { type AppUi, DriverListeners, type EventLogWriter } from "@kindling/monitoring"
import * as Either from "effect/Either"

// The configuration as the UI and the event log show it, in key order: the values of secret keys are redacted in
// the entries themselves (every credential's key is declared secret, `Registry.make` sees to it).
const shownProperties = (conf: Conf.Conf<DriverConf.AppKeys>) =>
  conf.entries
    .map((entry) => [entry.key, entry.value] as const)
    .sort(([a], [b]) => a.localeCompare(b))

// The app UI's settings, or undefined when it is off (`kindling.ui.enabled=false`); it listens on `host`. The
// configuration it shows has secrets redacted, as Spark's.
const uiOptions = (
  conf: Conf.Conf<DriverConf.AppKeys>,
  host: string
): Either.Either<AppUi.Options | undefined, Problem.InvalidConf> =>
  !conf.get(DriverConf.keys.uiEnabled) ? Either.right(undefined) : Either.map(
    TlsConf.serverTls(conf, "ui"),
    (tls) => ({
      host,
      tls,
      port: conf.get(DriverConf.keys.uiPort),
      maxRetries: conf.get(KernelConf.keys.portMaxRetries),
      killEnabled: conf.get(KernelConf.keys.uiKillEnabled),
      retention: {
        jobs: conf.get(DriverConf.keys.uiRetainedJobs),
        stages: conf.get(DriverConf.keys.uiRetainedStages),
        tasks: conf.get(DriverConf.keys.uiRetainedTasks)
      },
      properties: shownProperties(conf)
    })
  )

// The event log's settings, or undefined when it is off (`kindling.eventLog.enabled=false`).
const eventLogOptions = (conf: Conf.Conf<DriverConf.AppKeys>): EventLogWriter.Options | undefined =>
  conf.get(DriverConf.keys.eventLogEnabled)
    ? {
      dir: conf.get(DriverConf.keys.eventLogDir),
      compress: conf.get(DriverConf.keys.eventLogCompress),
      rollingMaxFileSize: conf.get(DriverConf.keys.eventLogRollingEnabled)
        ? conf.get(DriverConf.keys.eventLogRollingMaxFileSize) * 2 ** 20
        : undefined,
      properties: shownProperties(conf)
    }
    : undefined

/**
 * The listeners the configuration asks for: the UI (on `host`) and the event log, and the progress bar when
 * `progress` says so (a driver whose stderr nobody watches draws none).
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromConf = (
  conf: Conf.Conf<DriverConf.AppKeys>,
  host: string,
  progress: boolean
): Either.Either<AppListeners.Start, Problem.InvalidConf> =>
  Either.map(
    uiOptions(conf, host),
    (ui) => DriverListeners.make({ ui, eventLog: eventLogOptions(conf), progress })
  )
