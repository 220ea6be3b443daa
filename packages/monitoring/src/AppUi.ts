/**
 * An app's web UI (Spark's `SparkUI` on port 4040): Jobs, Stages, Storage, Environment and Executors tabs, the DAG
 * of each job and stage, event timelines, the monitoring API under `/api/v1`, the app's Prometheus metrics, and
 * live updates as server-sent events. Everything it shows is folded from the app's event stream into an
 * `AppStatus`; it never asks the schedulers.
 *
 * @since 0.1.0
 */
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type { AppEvents } from "@kindling/app"
import { WebServer } from "@kindling/kernel/web"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as AppMetrics from "./AppMetrics.js"
import * as AppPages from "./AppPages.js"
import * as AppStatus from "./AppStatus.js"
import * as MonitoringApi from "./MonitoringApi.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly host: string
  /** 4040 by default; the next free port when taken; 0 picks one. */
  readonly port: number
  readonly maxRetries: number
  readonly retention: AppStatus.Retention
  /** The app's configuration, shown on the Environment tab. */
  readonly properties: ReadonlyArray<readonly [string, string]>
  /** Show kill buttons for running jobs and accept their POSTs from the UI's own pages (`kindling.ui.killEnabled`). */
  readonly killEnabled: boolean
  /** Serve HTTPS with this certificate (`kindling.ssl.*`). */
  readonly tls?: WebServer.Tls | undefined
}

/**
 * A running app UI.
 *
 * @since 0.1.0
 * @category models
 */
export interface AppUi {
  readonly url: string
  /** The app's id, once its cluster manager gave it one (`local-…` in local mode). */
  readonly setAppId: (appId: string) => void
  /** The status the UI shows (read it between events). */
  readonly status: AppStatus.AppStatus
}

// How long the fold lets events gather before it takes them: what the pages may lag behind the app.
const batchMillis = 100

/**
 * Starts the UI on its port, fed by `events` (subscribed before the app's first job); it stops with the scope.
 *
 * @since 0.1.0
 * @category constructors
 */
export const start = (
  options: Options,
  app: AppPages.AppDescription,
  events: Queue.Dequeue<AppEvents.AppEvent>,
  cancelJob: (jobId: number, reason: string) => Effect.Effect<void> = () => Effect.void
): Effect.Effect<AppUi, WebServer.WebPortUnavailable, Scope.Scope> =>
  Effect.gen(function*() {
    const server = yield* WebServer.bind({
      name: "app UI",
      host: options.host,
      port: options.port,
      maxRetries: options.maxRetries,
      tls: options.tls
    })
    const status = AppStatus.make(options.retention)
    let appId = "app"
    const changes = yield* PubSub.sliding<number>(1)
    const metrics = AppMetrics.make(() => appId)
    // Folded in batches: woken by an event, the fold waits a moment for those that follow and takes them all, so
    // that a busy app costs it a few wake-ups a second rather than one per event.
    yield* Effect.forkScoped(Effect.forever(Effect.gen(function*() {
      const first = yield* Queue.take(events)
      yield* Effect.sleep(batchMillis)
      const rest = yield* Queue.takeAll(events)
      AppStatus.apply(status, first)
      metrics.record(status, first)
      for (const event of rest) {
        AppStatus.apply(status, event)
        metrics.record(status, event)
      }
      yield* PubSub.publish(changes, status.version)
    })))
    const info = (): MonitoringApi.AppInfo => ({
      id: appId,
      name: app.name,
      user: app.user,
      startTime: app.startTime,
      version: MonitoringApi.version,
      properties: options.properties
    })
    yield* server.serve({
      routes: routes(status, app, info, Stream.fromPubSub(changes), {
        enabled: options.killEnabled,
        cancelJob
      }),
      ready: Effect.succeed(true),
      metrics: () => ({ prefix: "kindling_app_", tags: { app: appId } }),
      metricsPaths: ["/metrics/applications/prometheus"],
      beforeScrape: Effect.sync(() => metrics.sample())
    })
    return {
      url: server.url,
      status,
      setAppId: (id) => {
        appId = id
      }
    }
  })

/**
 * What the UI needs of a running app (its driver): its events, drained in batches, and a way to cancel a job.
 *
 * @since 0.1.0
 * @category models
 */
export interface AppSource {
  readonly listen: Effect.Effect<Queue.Dequeue<AppEvents.AppEvent>, never, Scope.Scope>
  readonly cancelJob: (jobId: number, reason: string) => Effect.Effect<void>
}

/**
 * Starts the UI unless `options` is undefined, subscribing to the driver's events first. A UI that cannot
 * listen (every port tried is taken) is reported and the app goes on without it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const startIfEnabled = (
  options: Options | undefined,
  app: AppPages.AppDescription,
  driver: AppSource
): Effect.Effect<AppUi | undefined, never, Scope.Scope> =>
  options === undefined ?
    Effect.succeed(undefined) :
    Effect.flatMap(driver.listen, (events) =>
      start(options, app, events, driver.cancelJob).pipe(
        Effect.catchAll((error) =>
          Effect.as(Effect.logWarning(`${error.message}; the app runs without its UI`), undefined)
        )
      ))

/**
 * Whether running jobs can be killed from the UI, and how.
 *
 * @since 0.1.0
 * @category models
 */
export interface Kill {
  readonly enabled: boolean
  readonly cancelJob: (jobId: number, reason: string) => Effect.Effect<void>
}

// A running job's kill button: its action fails, as Spark's "killed via the Web UI" (an id that is no running
// job's is ignored).
const killJob = ({ cancelJob, enabled }: Kill) =>
  WebServer.killHandler({
    enabled,
    redirectTo: "/jobs/",
    kill: (id) => /^\d+$/.test(id) ? cancelJob(Number(id), `Job ${id} killed via the web UI`) : Effect.void
  })

// ---- routes -------------------------------------------------------------------------------------------------

const IdQuery = Schema.Struct({ id: Schema.NumberFromString })
const StageQuery = Schema.Struct({
  id: Schema.NumberFromString,
  attempt: Schema.optional(Schema.NumberFromString),
  "task.page": Schema.optional(Schema.NumberFromString),
  "task.pageSize": Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 10_000))),
  "task.sort": Schema.optional(Schema.String)
})
const TaskListQuery = Schema.Struct({
  offset: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.nonNegative())),
  length: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.positive())),
  sortBy: Schema.optional(Schema.String),
  status: Schema.optional(Schema.String)
})
const StatusQuery = Schema.Struct({ status: Schema.optional(Schema.String) })

const notFound = (what: string) => HttpServerResponse.text(what, { status: 404 })
const badRequest = (what: string) => HttpServerResponse.text(what, { status: 400 })

// Spark's taskList sorts: ID, -ID, runtime, -runtime (and the default, by index).
const apiSorts: Record<string, string> = { ID: "id", "-ID": "-id", runtime: "duration", "-runtime": "-duration" }

/**
 * The UI's pages and API over `status` (kept up to date by whoever feeds it: the live app's fold, or the history
 * server's replay); `changes` says when it changed, for the pages' live updates.
 *
 * @since 0.1.0
 * @category routes
 */
export const routes = (
  status: AppStatus.AppStatus,
  app: AppPages.AppDescription,
  info: () => MonitoringApi.AppInfo,
  changes: Stream.Stream<number>,
  kill: Kill
): HttpRouter.HttpRouter<unknown, never> => {
  // An app that has ended (one the history server shows) is seen as it was at its end: its uptime and what it
  // left running stop growing.
  const now = Effect.map(Clock.currentTimeMillis, (time) => Math.min(time, info().endTime ?? time))
  const query = <A, I extends Readonly<Record<string, string | ReadonlyArray<string> | undefined>>>(
    schema: Schema.Schema<A, I>,
    render: (a: A, now: number) => HttpServerResponse.HttpServerResponse
  ) =>
    Effect.gen(function*() {
      const parsed = yield* Effect.either(HttpServerRequest.schemaSearchParams(schema))
      if (parsed._tag === "Left") return badRequest(`Bad query: ${parsed.left.message.split("\n")[0]}`)
      return render(parsed.right, yield* now)
    })
  const api = (render: (params: Readonly<Record<string, string | undefined>>, now: number) => unknown) =>
    Effect.gen(function*() {
      const params = yield* HttpRouter.params
      if (params["appId"] !== undefined && params["appId"] !== info().id) {
        return notFound(`unknown app id: ${params["appId"]}`)
      }
      const body = render(params, yield* now)
      return body === undefined ? notFound("no such object") : HttpServerResponse.unsafeJson(body)
    })
  const attemptOf = (params: Readonly<Record<string, string | undefined>>) =>
    status.stages.get(AppStatus.stageKey(Number(params["stageId"]), Number(params["attempt"] ?? 0)))
  const sse = Stream.concat(
    Stream.make(`retry: 2000\ndata: ${status.version}\n\n`),
    Stream.merge(
      changes.pipe(Stream.groupedWithin(100_000, "500 millis"), Stream.map(() => `data: ${status.version}\n\n`)),
      // A comment now and then keeps proxies from closing an idle stream.
      Stream.tick("15 seconds").pipe(Stream.map(() => ": keep-alive\n\n"))
    )
  ).pipe(Stream.encodeText)
  const pageRoutes = HttpRouter.empty.pipe(
    HttpRouter.get("/", Effect.succeed(HttpServerResponse.redirect("/jobs/", { status: 302 }))),
    HttpRouter.get("/jobs/", Effect.map(now, (t) => AppPages.jobsPage(status, app, info().id, t, kill.enabled))),
    HttpRouter.post("/jobs/job/kill/", killJob(kill)),
    HttpRouter.get(
      "/jobs/job/",
      query(IdQuery, ({ id }, t) => {
        const job = status.jobs.get(id)
        return job === undefined ? notFound(`No job ${id}`) : AppPages.jobPage(status, app, job, t)
      })
    ),
    HttpRouter.get("/stages/", Effect.map(now, (t) => AppPages.stagesPage(status, app, t))),
    HttpRouter.get(
      "/stages/stage/",
      query(StageQuery, (q, t) => {
        const attempt = status.stages.get(AppStatus.stageKey(q.id, q.attempt ?? 0))
        return attempt === undefined
          ? notFound(`No attempt ${q.attempt ?? 0} of stage ${q.id}`)
          : AppPages.stagePage(status, app, attempt, {
            page: q["task.page"],
            pageSize: q["task.pageSize"],
            sort: q["task.sort"]
          }, t)
      })
    ),
    HttpRouter.get("/storage/", Effect.sync(() => AppPages.storagePage(status, app))),
    HttpRouter.get(
      "/storage/rdd/",
      query(IdQuery, ({ id }) => {
        const storage = status.storage.get(id)
        return storage === undefined
          ? notFound(`Dataset ${id} is not persisted`)
          : AppPages.datasetPage(status, app, storage)
      })
    ),
    HttpRouter.get("/environment/", Effect.sync(() => AppPages.environmentPage(app, info()))),
    HttpRouter.get("/executors/", Effect.sync(() => AppPages.executorsPage(status, app))),
    HttpRouter.get(
      "/events",
      Effect.succeed(
        HttpServerResponse.stream(sse, { contentType: "text/event-stream", headers: { "cache-control": "no-cache" } })
      )
    )
  )
  const apiRoutes = HttpRouter.empty.pipe(
    HttpRouter.get("/api/v1/applications", api(() => [MonitoringApi.application(info(), status.lastUpdated)])),
    HttpRouter.get("/api/v1/applications/:appId", api(() => MonitoringApi.application(info(), status.lastUpdated))),
    HttpRouter.get(
      "/api/v1/applications/:appId/jobs",
      Effect.flatMap(
        Effect.either(HttpServerRequest.schemaSearchParams(StatusQuery)),
        (q) =>
          api(() =>
            [...status.jobs.values()].reverse()
              .filter((job) =>
                q._tag === "Left" || q.right.status === undefined || job.status === q.right.status.toUpperCase()
              )
              .map((job) => MonitoringApi.job(status, job))
          )
      )
    ),
    HttpRouter.get(
      "/api/v1/applications/:appId/jobs/:jobId",
      api((params) => {
        const job = status.jobs.get(Number(params["jobId"]))
        return job === undefined ? undefined : MonitoringApi.job(status, job)
      })
    ),
    HttpRouter.get(
      "/api/v1/applications/:appId/stages",
      Effect.flatMap(
        Effect.either(HttpServerRequest.schemaSearchParams(StatusQuery)),
        (q) =>
          api(() =>
            [...status.stages.values()].reverse()
              .filter((s) =>
                q._tag === "Left" || q.right.status === undefined || s.status === q.right.status.toUpperCase()
              )
              .map(MonitoringApi.stage)
          )
      )
    ),
    HttpRouter.get(
      "/api/v1/applications/:appId/stages/:stageId",
      api((params) => {
        const attempts = AppStatus.attemptsOf(status, Number(params["stageId"]))
        return attempts.length === 0 ? undefined : attempts.map(MonitoringApi.stage)
      })
    ),
    HttpRouter.get(
      "/api/v1/applications/:appId/stages/:stageId/:attempt",
      api((params, t) => {
        const attempt = attemptOf(params)
        if (attempt === undefined) return undefined
        return {
          ...MonitoringApi.stage(attempt),
          tasks: Object.fromEntries(
            attempt.tasks.map((
              task
            ) => [String(task.taskId), MonitoringApi.task(task, t, status.executors.get(task.executorId)?.logUrls)])
          )
        }
      })
    ),
    HttpRouter.get(
      "/api/v1/applications/:appId/stages/:stageId/:attempt/taskList",
      Effect.flatMap(Effect.either(HttpServerRequest.schemaSearchParams(TaskListQuery)), (q) =>
        q._tag === "Left"
          ? Effect.succeed(badRequest("offset and length must be non-negative integers"))
          : api((params, t) => {
            const attempt = attemptOf(params)
            if (attempt === undefined) return undefined
            const offset = q.right.offset ?? 0
            const length = q.right.length ?? 20
            const sorted = AppPages.taskPage(attempt, {
              page: 1,
              pageSize: attempt.tasks.length || 1,
              sort: apiSorts[q.right.sortBy ?? ""] ?? "index"
            }, t).tasks
            const wanted = q.right.status?.toUpperCase()
            return sorted.filter((task) => wanted === undefined || task.status === wanted)
              .slice(offset, offset + length)
              .map((task) => MonitoringApi.task(task, t, status.executors.get(task.executorId)?.logUrls))
          }))
    ),
    HttpRouter.get(
      "/api/v1/applications/:appId/executors",
      api(() =>
        [...status.executors.values()].filter((e) => e.removeTime === undefined).map((e) =>
          MonitoringApi.executor(status, e)
        )
      )
    ),
    HttpRouter.get(
      "/api/v1/applications/:appId/allexecutors",
      api(() => [...status.executors.values()].map((e) => MonitoringApi.executor(status, e)))
    ),
    HttpRouter.get(
      "/api/v1/applications/:appId/storage/rdd",
      api(() => [...status.storage.values()].map(MonitoringApi.storage))
    ),
    HttpRouter.get(
      "/api/v1/applications/:appId/storage/rdd/:rddId",
      api((params) => {
        const storage = status.storage.get(Number(params["rddId"]))
        return storage === undefined ? undefined : MonitoringApi.storageDetails(status, storage)
      })
    ),
    HttpRouter.get("/api/v1/applications/:appId/environment", api(() => MonitoringApi.environment(info())))
  )
  return HttpRouter.concat(pageRoutes, apiRoutes)
}
