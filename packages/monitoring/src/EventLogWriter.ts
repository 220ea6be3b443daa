/**
 * An app's event log (`kindling.eventLog.*`): its event stream written as it happens, one JSON line per event in
 * Spark's format (`EventLogCodec`), under Spark's file names, so that Kindling's history server and Spark's own
 * can read it.
 *
 * - One file, `<dir>/<appId>` (`.gz` when compressed), named `….inprogress` until the app ends; or, rolling, a
 *   folder `eventlog_v2_<appId>` of `events_<n>_<appId>` files of about `maxFileSize` bytes of events each (counted
 *   before compression) and an empty `appstatus_<appId>(.inprogress)` marker, as Spark's rolling writer lays it out.
 * - Compressed logs are gzip (`node:zlib`): each batch of lines is a gzip member of its own, so a log cut short by
 *   a crash still reads up to its last whole member.
 * - Lines are written in batches, each batch with one write: a crash loses at most the events held (below) and the
 *   batch being written, and a reader never sees half a batch except at the very end of a log it knows to be in
 *   progress.
 * - The events are turned into Spark's and written on a thread of the log's own (`eventLogThread.ts`): on the
 *   driver's thread, that cost a fifth of its time in jobs of short tasks. The driver's thread hands them over in
 *   batches, as Spark's writer buffers them: the events that come by the thousand — tasks' starts and ends,
 *   executors' metrics, blocks — wait for the next event of another kind (a stage's or job's start or end, an
 *   executor added or lost), for 256 of them, or for the first event to come a second or more after the first of
 *   them (executors' heartbeats come every few seconds), whichever is first.
 *
 * @since 0.1.0
 */
import type { AppEvents } from "@kindling/app"
import { ModuleLoading } from "@kindling/kernel"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Runtime from "effect/Runtime"
import type * as Scope from "effect/Scope"
import * as Path from "node:path"
import * as Url from "node:url"
import * as EventLogCodec from "./EventLogCodec.js"
import type * as EventLogFiles from "./internal/eventLogFiles.js"
import * as Names from "./internal/eventLogNames.js"
import type { FromLogThread, ToLogThread } from "./internal/eventLogThreadMessages.js"
import type * as MonitoringApi from "./MonitoringApi.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The folder logs go to: a path or a `file:` URL (`kindling.eventLog.dir`). */
  readonly dir: string
  /** gzip each log (`kindling.eventLog.compress`). */
  readonly compress: boolean
  /** Roll over to a new file past this many bytes (`kindling.eventLog.rolling.*`); one file when absent. */
  readonly rollingMaxFileSize?: number | undefined
  /** The app's configuration, as its Environment page shows it. */
  readonly properties: ReadonlyArray<readonly [string, string]>
}

/**
 * The codec of a compressed log, by the name an app's description gives it (Spark's `eventLogCodec`).
 *
 * @since 0.1.0
 * @category constants
 */
export const codec = "gzip"

/**
 * A running event log.
 *
 * @since 0.1.0
 * @category models
 */
export interface EventLog {
  /** Names the log and starts writing it: nothing is written before the app has its id. */
  readonly setAppId: (appId: string) => void
  /** Logs the app's events, in the order they happened (events added before the app has its id wait for it). */
  readonly add: (events: ReadonlyArray<AppEvents.AppEvent>) => void
}

/**
 * The suffix of a log still being written.
 *
 * @since 0.1.0
 * @category constants
 */
export const inProgressSuffix = Names.inProgressSuffix

/**
 * The prefix of a rolling log's folder (Spark's `eventlog_v2_`).
 *
 * @since 0.1.0
 * @category constants
 */
export const rollingPrefix = Names.rollingPrefix

/**
 * A folder path from `kindling.eventLog.dir` (a path or a `file:` URL).
 *
 * @since 0.1.0
 */
export const directory = (dir: string): string => dir.startsWith("file:") ? Url.fileURLToPath(dir) : Path.resolve(dir)

// The most events held before they are handed over.
const batchSize = 256

// Events held at most this long, as far as the next event's arrival tells (see the module's description).
const holdMillis = 1000

// Events that come by the thousand and may wait for the next hand-over.
const held = new Set<AppEvents.AppEvent["_tag"]>(["TaskStart", "TaskEnd", "ExecutorMetricsUpdate", "BlockUpdated"])

// How long the end of the app waits for its log's last write.
const closeTimeoutMillis = 30_000

/**
 * Starts the log of `app`, fed by `add` (from before the app's first job); it is finished — its last events and
 * Spark's `ApplicationEnd` written, its name no longer in progress — when the scope closes. A log that cannot be
 * written is reported, and the app goes on without it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const start = (
  options: Options,
  app: Omit<MonitoringApi.AppInfo, "id" | "properties" | "endTime">
): Effect.Effect<EventLog, never, Scope.Scope> =>
  Effect.gen(function*() {
    const dir = directory(options.dir)
    const layout: EventLogFiles.Layout = {
      compress: options.compress,
      rollingMaxFileSize: options.rollingMaxFileSize
    }
    const closed = yield* Deferred.make<void>()
    const runFork = Runtime.runFork(yield* Effect.runtime<never>())
    const clock = yield* Effect.clock
    const thread = ModuleLoading.thread(import.meta.url, "eventLogThread", { dir, layout })
    let appId: string | undefined
    let stopped = false
    const stop = (problem: Effect.Effect<void>) => {
      if (!stopped) runFork(problem)
      stopped = true
      Deferred.unsafeDone(closed, Exit.void)
    }
    thread.on("message", (message: FromLogThread) => {
      switch (message._tag) {
        case "Opened":
          runFork(Effect.logInfo(`Logging events to ${message.path}`))
          return
        case "Failed":
          return stop(Effect.logError(`${message.reason}; the app goes on without its event log`))
        case "Closed":
          return Deferred.unsafeDone(closed, Exit.void)
      }
    })
    thread.on("error", (error) => stop(Effect.logError(`The event log stopped (${error.message}); the app goes on`)))
    thread.on("exit", () => stop(Effect.void))
    yield* Effect.addFinalizer(() => Effect.promise(() => thread.terminate()))

    const post = (message: ToLogThread) => {
      if (!stopped) thread.postMessage(message)
    }
    // What is held for the next hand-over, and since when.
    let holding: Array<AppEvents.AppEvent> = []
    let holdingSince = 0
    const takeHeld = () => {
      const taken = holding
      holding = []
      return taken
    }

    // At the end, what is held goes over, then the end, and the app waits for the log's last write (bounded: a
    // stuck disk does not keep the app from ending).
    yield* Effect.addFinalizer((exit) =>
      Effect.gen(function*() {
        if (appId === undefined || stopped) return
        const time = yield* Clock.currentTimeMillis
        post({ _tag: "Close", events: takeHeld(), footer: EventLogCodec.footer(time, Exit.isSuccess(exit) ? 0 : 1) })
        const done = yield* Deferred.await(closed).pipe(Effect.timeout(closeTimeoutMillis), Effect.option)
        if (done._tag === "None") {
          yield* Effect.logError(`The event log's last write took over ${closeTimeoutMillis} ms`)
        }
      })
    )
    return {
      setAppId: (id) => {
        if (appId !== undefined) return
        appId = id
        post({ _tag: "Open", appId: id, header: EventLogCodec.header({ ...app, id, properties: options.properties }) })
        if (holding.length > 0) post({ _tag: "Events", events: takeHeld() })
      },
      add: (events) => {
        if (stopped || events.length === 0) return
        const now = clock.unsafeCurrentTimeMillis()
        if (holding.length === 0) holdingSince = now
        let due = holding.length + events.length >= batchSize || now - holdingSince >= holdMillis
        for (const event of events) {
          holding.push(event)
          due ||= !held.has(event._tag)
        }
        if (due && appId !== undefined) post({ _tag: "Events", events: takeHeld() })
      }
    }
  })
