/**
 * The history server (`kindling history`, Spark's History Server on port 18080): every app whose event log is in
 * the log folder, listed with its duration, each served by the same UI and `/api/v1` code as a live app — its log
 * replayed into an `AppStatus` — under `/history/<appId>/`. The folder is read again every
 * `kindling.history.fs.update.interval`: new logs appear, growing ones catch up (only their new lines are read),
 * and their open pages update live. As Spark's (`spark.history.retainedApplications`), it keeps the replayed
 * status of `kindling.history.retainedApplications` finished apps in memory, those whose pages were asked for
 * last; the others stay listed, and their log is read again when a page of theirs is asked for. Running apps'
 * logs are always kept, since only their new lines are read.
 *
 * @since 0.1.0
 */
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Html, WebServer } from "@kindling/kernel/web"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as PubSub from "effect/PubSub"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Fs from "node:fs"
import type * as AppStatus from "./AppStatus.js"
import * as AppUi from "./AppUi.js"
import * as EventLogCodec from "./EventLogCodec.js"
import * as EventLogReader from "./EventLogReader.js"
import { directory } from "./EventLogWriter.js"
import * as MonitoringApi from "./MonitoringApi.js"

const { html, link } = Html

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The folder of event logs: a path or a `file:` URL (`kindling.history.fs.logDirectory`). */
  readonly dir: string
  readonly host: string
  /** 18080 by default; the next free port when taken; 0 picks one. */
  readonly port: number
  readonly maxRetries: number
  /** How often the folder is read again (`kindling.history.fs.update.interval`). */
  readonly updateIntervalMillis: number
  readonly retention: AppStatus.Retention
  /** Finished apps whose replayed status stays in memory (`kindling.history.retainedApplications`). */
  readonly retainedApplications: number
  /** Serve HTTPS with this certificate (`kindling.ssl.*`). */
  readonly tls?: WebServer.Tls | undefined
}

/**
 * A running history server.
 *
 * @since 0.1.0
 * @category models
 */
export interface HistoryServer {
  readonly url: string
  /** Reads the folder now (it is read every update interval anyway). */
  readonly refresh: Effect.Effect<void>
  /** How many apps' replayed status it holds in memory now (running apps, and the retained finished ones). */
  readonly replaysInMemory: () => number
}

// What the listing shows of a log, kept when its replay is let go.
interface Summary {
  /** The app, without its configuration (which only its own pages show). */
  readonly app: MonitoringApi.AppInfo
  readonly started: boolean
  readonly complete: boolean
  readonly lastUpdated: number
  readonly lastTime: number
}

// One log and what serves it.
interface Loaded {
  readonly key: string
  /** The log as read so far; undefined while its finished app is not among the retained ones. */
  log: EventLogReader.AppLog | undefined
  summary: Summary
  /** Its current name in the folder (it loses `.inprogress` when its app ends). */
  entry: string
  /** When a page of its was last asked for (a count of requests), for keeping the most recently used. */
  used: number
  readonly changes: PubSub.PubSub<number>
  published: number
  routes: HttpRouter.HttpRouter<unknown, never> | undefined
  /** Why it could not be read the last time, if it could not. */
  problem: string | undefined
}

// What the API says about a logged app. One whose log is incomplete has not ended, whatever its last event says.
const info = (log: EventLogReader.AppLog): MonitoringApi.AppInfo => {
  const { endTime, ...app } = EventLogCodec.appInfo(log.replay, log.key)
  return log.complete && endTime !== undefined ? { ...app, endTime } : app
}

const summarize = (log: EventLogReader.AppLog): Summary => ({
  app: { ...info(log), properties: [] },
  // A log is an app's once its start is read.
  started: log.replay.name !== "" || log.replay.id !== undefined,
  complete: log.complete,
  lastUpdated: log.status.lastUpdated,
  lastTime: log.replay.lastTime
})

const uiRoot = (appId: string) => `/history/${encodeURIComponent(appId)}/`

const notFound = (what: string) => HttpServerResponse.text(what, { status: 404 })

/**
 * Starts the server on its port, having read the folder once; it stops with the scope.
 *
 * @since 0.1.0
 * @category constructors
 */
export const start = (options: Options): Effect.Effect<HistoryServer, WebServer.WebPortUnavailable, Scope.Scope> =>
  Effect.gen(function*() {
    const dir = directory(options.dir)
    const server = yield* WebServer.bind({
      name: "history server",
      host: options.host,
      port: options.port,
      maxRetries: options.maxRetries,
      tls: options.tls
    })
    const apps = new Map<string, Loaded>()
    let lastScan = 0
    let folderProblem: string | undefined
    let requests = 0

    // Lets go of the replays of the finished apps used longest ago, past the retained number.
    const release = () => {
      const finished = [...apps.values()].filter((loaded) => loaded.log !== undefined && loaded.log.complete)
      if (finished.length <= options.retainedApplications) return
      finished.sort((a, b) => a.used - b.used)
      for (const loaded of finished.slice(0, finished.length - options.retainedApplications)) {
        loaded.log = undefined
        loaded.routes = undefined
      }
    }

    const refresh = Effect.gen(function*() {
      const names = yield* Effect.try(() => Fs.readdirSync(dir)).pipe(Effect.either)
      if (names._tag === "Left") {
        const problem = `The event log folder ${dir} cannot be read: ${String(names.left.error)}`
        // Said once, not at every update.
        if (problem !== folderProblem) yield* Effect.logWarning(problem)
        folderProblem = problem
        return
      }
      folderProblem = undefined
      const present = new Set<string>()
      for (const name of names.right) {
        const key = EventLogReader.keyOf(name)
        if (key === undefined) continue
        present.add(key)
        let loaded = apps.get(key)
        if (loaded === undefined) {
          const log = EventLogReader.make(key, options.retention)
          loaded = {
            key,
            log,
            summary: summarize(log),
            entry: name,
            used: 0,
            changes: yield* PubSub.sliding<number>(1),
            published: 0,
            routes: undefined,
            problem: undefined
          }
          apps.set(key, loaded)
        }
        // A finished app's log no longer changes: one let go is read again only when asked for.
        if (loaded.log === undefined) continue
        loaded.entry = name
        const current = loaded
        const log = loaded.log
        const read = yield* Effect.either(Effect.try(() => EventLogReader.refresh(log, dir, name)))
        const problem = read._tag === "Left"
          ? `The event log ${name} cannot be read: ${String(read.left.error)}`
          : undefined
        // Said once, not at every update.
        if (problem !== undefined && problem !== current.problem) yield* Effect.logWarning(problem)
        current.problem = problem
        current.summary = summarize(log)
        if (log.status.version !== current.published) {
          current.published = log.status.version
          yield* PubSub.publish(current.changes, current.published)
        }
      }
      for (const key of [...apps.keys()]) if (!present.has(key)) apps.delete(key)
      release()
      lastScan = yield* Clock.currentTimeMillis
    })

    // The replayed log of an app whose page is asked for, read again if it was let go (which fails if the log has
    // gone or broken since).
    const logOf = (loaded: Loaded): Effect.Effect<EventLogReader.AppLog, string> =>
      Effect.suspend(() => {
        loaded.used = ++requests
        if (loaded.log !== undefined) return Effect.succeed(loaded.log)
        const log = EventLogReader.make(loaded.key, options.retention)
        return Effect.try({
          try: () => EventLogReader.refresh(log, dir, loaded.entry),
          catch: (error) => `The event log ${loaded.entry} cannot be read: ${String(error)}`
        }).pipe(Effect.map(() => {
          loaded.log = log
          loaded.published = log.status.version
          release()
          return log
        }))
      })

    const listed = () =>
      [...apps.values()].filter((loaded) => loaded.summary.started)
        .sort((a, b) => b.summary.app.startTime - a.summary.app.startTime)
    const byId = (appId: string) => listed().find((loaded) => loaded.summary.app.id === appId)
    const routesOf = (loaded: Loaded, log: EventLogReader.AppLog) => {
      if (loaded.routes !== undefined) return loaded.routes
      const app = info(log)
      loaded.routes = AppUi.routes(
        log.status,
        {
          name: app.name,
          master: app.properties.find(([key]) => key === "kindling.master")?.[1] ?? "",
          user: app.user,
          startTime: app.startTime,
          uiRoot: uiRoot(app.id),
          // Pages follow a log that may grow; a finished app's is a record, not live.
          liveBadge: () => (loaded.summary.complete ? undefined : "incomplete")
        },
        () => info(log),
        Stream.fromPubSub(loaded.changes),
        { enabled: false, cancelJob: () => Effect.void }
      )
      return loaded.routes
    }
    // An app's own routes answer the request, given the path they know it by.
    const dispatch = (appId: string, path: string) =>
      Effect.gen(function*() {
        const loaded = byId(appId)
        if (loaded === undefined) return notFound(`No app ${appId} in ${dir}`)
        const log = yield* Effect.either(logOf(loaded))
        if (log._tag === "Left") return HttpServerResponse.text(log.left, { status: 500 })
        const request = yield* HttpServerRequest.HttpServerRequest
        return yield* routesOf(loaded, log.right).pipe(
          Effect.provideService(HttpServerRequest.HttpServerRequest, request.modify({ url: path })),
          Effect.catchIf(
            (error) => error instanceof HttpServerError.RouteNotFound,
            () => Effect.succeed(notFound(`No page ${path} for ${appId}`))
          )
        )
      })
    const appPath = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const appId = (yield* HttpRouter.params)["appId"] ?? ""
      const rest = request.url.slice(uiRoot(appId).length - 1)
      return yield* dispatch(appId, rest === "" || rest === "/" ? "/jobs/" : rest)
    })
    const apiPath = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      return yield* dispatch((yield* HttpRouter.params)["appId"] ?? "", request.url)
    })

    const ListQuery = Schema.Struct({
      status: Schema.optional(Schema.Literal("completed", "running")),
      limit: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.positive()))
    })
    const routes = HttpRouter.empty.pipe(
      HttpRouter.get("/", Effect.map(Clock.currentTimeMillis, (now) => listPage(dir, listed(), lastScan, now))),
      HttpRouter.get("/history/:appId", appPath),
      HttpRouter.get("/history/:appId/*", appPath),
      HttpRouter.get(
        "/api/v1/applications",
        Effect.gen(function*() {
          const query = yield* Effect.either(HttpServerRequest.schemaSearchParams(ListQuery))
          if (query._tag === "Left") {
            return HttpServerResponse.text("status must be completed or running; limit a positive integer", {
              status: 400
            })
          }
          const { limit, status } = query.right
          const apps = listed().filter((loaded) =>
            status === undefined || (status === "completed") === loaded.summary.complete
          )
          return HttpServerResponse.unsafeJson(
            apps.slice(0, limit ?? apps.length).map(({ summary }) =>
              MonitoringApi.application(summary.app, summary.lastUpdated)
            )
          )
        })
      ),
      HttpRouter.get("/api/v1/applications/:appId", apiPath),
      HttpRouter.get("/api/v1/applications/:appId/*", apiPath)
    )

    yield* refresh
    yield* Effect.forkScoped(Effect.forever(Effect.zipRight(Effect.sleep(options.updateIntervalMillis), refresh)))
    yield* server.serve({
      routes,
      ready: Effect.succeed(true),
      metrics: () => ({ prefix: "kindling_history_", tags: {} })
    })
    yield* Effect.logInfo(`Reading event logs from ${dir}`)
    return {
      url: server.url,
      refresh,
      replaysInMemory: () => [...apps.values()].filter((loaded) => loaded.log !== undefined).length
    }
  })

const listPage = (dir: string, apps: ReadonlyArray<Loaded>, lastScan: number, now: number) => {
  const table = (rows: ReadonlyArray<Loaded>, empty: string) =>
    Html.table<Loaded>(
      [
        { header: "App ID", cell: (a) => link(`${uiRoot(a.summary.app.id)}jobs/`, a.summary.app.id) },
        { header: "App Name", cell: (a) => a.summary.app.name },
        { header: "Started", cell: (a) => Html.time(a.summary.app.startTime) },
        {
          header: "Completed",
          cell: (a) => {
            const end = a.summary.app.endTime
            return end === undefined ? "" : Html.time(end)
          }
        },
        {
          header: "Duration",
          cell: (a) => Html.duration((a.summary.app.endTime ?? a.summary.lastTime) - a.summary.app.startTime),
          numeric: true
        },
        { header: "User", cell: (a) => a.summary.app.user },
        { header: "Last Updated", cell: (a) => Html.time(a.summary.lastUpdated || a.summary.app.startTime) },
        { header: "Event Log", cell: (a) => a.entry }
      ],
      rows,
      { empty }
    )
  const complete = apps.filter((a) => a.summary.complete)
  const incomplete = apps.filter((a) => !a.summary.complete)
  return Html.respond(Html.page({
    title: "History Server",
    body: html`<ul class="summary">
<li><strong>Event log directory:</strong>${dir}</li>
<li><strong>Last updated:</strong>${lastScan === 0 ? "never" : Html.time(lastScan)} (${
      Html.duration(now - lastScan)
    } ago)</li>
</ul>
<h2>Completed Applications (${complete.length})</h2>${table(complete, "No completed applications.")}
<h2>Incomplete Applications (${incomplete.length})</h2>
<p>Apps still running, or that ended without closing their log (a crash): shown up to their last complete event.</p>
${table(incomplete, "No incomplete applications.")}`
  }))
}
