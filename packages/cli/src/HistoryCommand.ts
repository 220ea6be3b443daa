/**
 * `kindling history`: the history server, serving every app whose event log is in the log folder until the process
 * is stopped.
 *
 * @since 0.1.0
 */
import { DriverConf } from "@kindling/driver"
import { KernelConf, TlsConf } from "@kindling/kernel"
import { EventLogWriter, HistoryConf, HistoryServer } from "@kindling/monitoring"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Settings from "./Settings.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Args {
  readonly host: Option.Option<string>
  readonly port: Option.Option<number>
  /** The log folder, instead of `kindling.history.fs.logDirectory`. */
  readonly logDirectory: Option.Option<string>
  readonly propertiesFile: Option.Option<string>
  readonly conf: ReadonlyArray<string>
}

/**
 * Runs a history server until the process is stopped. A log folder that does not exist stops it at once.
 *
 * @since 0.1.0
 * @category running
 */
export const run = (args: Args): Effect.Effect<number, Settings.Failure> =>
  Effect.gen(function*() {
    const conf = yield* Settings.load({
      propertiesFile: args.propertiesFile,
      conf: args.conf,
      flags: {
        [HistoryConf.keys.uiPort.name]: Option.getOrUndefined(Option.map(args.port, String)),
        [HistoryConf.keys.logDirectory.name]: Option.getOrUndefined(args.logDirectory)
      }
    })
    const dir = conf.get(HistoryConf.keys.logDirectory)
    if (!Fs.existsSync(EventLogWriter.directory(dir))) {
      return yield* new Settings.UsageError({
        message: `The event log folder ${dir} does not exist: create it, or give another with ` +
          `--conf ${HistoryConf.keys.logDirectory.name}=…`
      })
    }
    return yield* Effect.gen(function*() {
      const server = yield* HistoryServer.start({
        dir,
        host: Option.getOrElse(args.host, () => Os.hostname()),
        port: conf.get(HistoryConf.keys.uiPort),
        maxRetries: conf.get(KernelConf.keys.portMaxRetries),
        tls: yield* TlsConf.serverTls(conf, "historyServer"),
        updateIntervalMillis: conf.get(HistoryConf.keys.updateInterval),
        retainedApplications: conf.get(HistoryConf.keys.retainedApplications),
        retention: {
          jobs: conf.get(DriverConf.keys.uiRetainedJobs),
          stages: conf.get(DriverConf.keys.uiRetainedStages),
          tasks: conf.get(DriverConf.keys.uiRetainedTasks)
        }
      })
      yield* Effect.logInfo(`Kindling history server at ${server.url}`)
      return yield* Effect.never
    }).pipe(Effect.scoped)
  })
