/**
 * The master's web UI (Spark's `MasterWebUI`): the cluster summary with its workers, apps and drivers, an app
 * page with its executors, kill buttons, Spark's `/json`, and the master's metrics — all read from the master's
 * state snapshot, never a copy of it.
 *
 * @since 0.1.0
 */
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Html, WebServer } from "@kindling/kernel/web"
import type { Master } from "@kindling/master"
import { Ids, type QueryMessages, SparkJson } from "@kindling/protocol"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

const { html, link } = Html

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly master: Master.Master
  /** Show kill buttons and accept their POSTs (`kindling.ui.killEnabled`). */
  readonly killEnabled: boolean
  /** Who may decommission workers with `POST /workers/kill/` (`kindling.master.ui.decommission.allow.mode`). */
  readonly decommissionAllowMode?: "LOCAL" | "ALLOW" | "DENY"
  /** The history server finished apps link to (`kindling.history.ui.url`). */
  readonly historyUrl?: string | undefined
}

// A finished app's page in the history server, when there is one to link to (it has the app once its log is read).
const historyPage = (options: Options, app: QueryMessages.ApplicationInfo) =>
  options.historyUrl === undefined || options.historyUrl === ""
    ? undefined
    : `${options.historyUrl.replace(/\/+$/, "")}/history/${encodeURIComponent(app.id)}/jobs/`

const state = (cell: string) => html`<span class="state-${cell}">${cell}</span>`

const killButton = (options: Options, path: string, id: string, what: string) =>
  options.killEnabled ? Html.killButton(path, id, what) : ""

const workersTable = (workers: ReadonlyArray<QueryMessages.WorkerInfo>) =>
  Html.table<QueryMessages.WorkerInfo>(
    [
      { header: "Worker Id", cell: (w) => w.webUiAddress === "" ? w.id : link(w.webUiAddress, w.id) },
      { header: "Address", cell: (w) => `${w.host}:${w.port}` },
      { header: "State", cell: (w) => state(w.state) },
      { header: "Cores", cell: (w) => `${w.cores} (${w.coresUsed} Used)`, numeric: true },
      {
        header: "Memory",
        cell: (w) => `${Html.megabytes(w.memory)} (${Html.megabytes(w.memoryUsed)} Used)`,
        numeric: true
      }
    ],
    workers,
    { empty: "No workers have registered.", id: "workers" }
  )

const historyLine = (url: string | undefined) =>
  url === undefined ? "" : html`<li><strong>History:</strong>${link(url, url)}</li>`

const appsTable = (
  options: Options,
  apps: ReadonlyArray<QueryMessages.ApplicationInfo>,
  now: number,
  active: boolean,
  id: string
) =>
  Html.table<QueryMessages.ApplicationInfo>(
    [
      {
        header: "Application ID",
        cell: (a) => [link(`/app/?appId=${a.id}`, a.id), active ? killButton(options, "/app/kill/", a.id, "app") : ""]
      },
      {
        header: "Name",
        cell: (a) => {
          const ui = active ? (a.desc.appUiUrl === "" ? undefined : a.desc.appUiUrl) : historyPage(options, a)
          return ui === undefined ? a.desc.name : link(ui, a.desc.name)
        }
      },
      { header: "Cores", cell: (a) => a.coresGranted, numeric: true },
      { header: "Memory per Executor", cell: (a) => Html.megabytes(a.desc.memoryPerExecutorMB), numeric: true },
      { header: "Submitted Time", cell: (a) => Html.time(a.submitDate) },
      { header: "User", cell: (a) => a.desc.user },
      { header: "State", cell: (a) => state(a.state) },
      {
        header: "Duration",
        cell: (a) => Html.duration(Option.getOrElse(a.endTime, () => now) - a.startTime),
        numeric: true
      }
    ],
    apps,
    { id }
  )

const driversTable = (
  options: Options,
  drivers: ReadonlyArray<QueryMessages.DriverInfo>,
  workers: ReadonlyArray<QueryMessages.WorkerInfo>,
  active: boolean,
  id: string
) => {
  const workerLink = (driver: QueryMessages.DriverInfo) =>
    Option.match(driver.workerId, {
      onNone: () => "None",
      onSome: (workerId) => {
        const worker = workers.find((w) => w.id === workerId)
        return worker === undefined || worker.webUiAddress === "" ? workerId : link(worker.webUiAddress, workerId)
      }
    })
  return Html.table<QueryMessages.DriverInfo>(
    [
      {
        header: "Submission ID",
        cell: (d) => [d.id, active ? killButton(options, "/driver/kill/", d.id, "driver") : ""]
      },
      { header: "Submitted Time", cell: (d) => Html.time(d.submitDate) },
      { header: "Worker", cell: workerLink },
      { header: "State", cell: (d) => state(d.state) },
      { header: "Cores", cell: (d) => d.desc.cores, numeric: true },
      { header: "Memory", cell: (d) => Html.megabytes(d.desc.mem), numeric: true },
      { header: "Main Class", cell: (d) => SparkJson.mainClass(d.desc) }
    ],
    drivers,
    { id }
  )
}

const title = (snapshot: QueryMessages.MasterStateResponse) => `Master at kindling://${snapshot.host}:${snapshot.port}`

const masterPage = (options: Options, snapshot: QueryMessages.MasterStateResponse, now: number) => {
  const json = SparkJson.masterState(snapshot, now)
  return Html.page({
    title: title(snapshot),
    body: html`<h1>${title(snapshot)}</h1>
<ul class="summary">
<li><strong>URL:</strong>${json.url}</li>
${
      Option.match(snapshot.restPort, {
        onNone: () => "",
        onSome: (port) => html`<li><strong>REST URL:</strong>kindling://${snapshot.host}:${port} (cluster mode)</li>`
      })
    }
<li><strong>Alive Workers:</strong>${json.aliveworkers}</li>
<li><strong>Cores in use:</strong>${json.cores} Total, ${json.coresused} Used</li>
<li><strong>Memory in use:</strong>${Html.megabytes(json.memory)} Total, ${Html.megabytes(json.memoryused)} Used</li>
<li><strong>Applications:</strong>${snapshot.activeApps.length} Running, ${snapshot.completedApps.length} Completed</li>
<li><strong>Drivers:</strong>${snapshot.activeDrivers.length} Running, ${snapshot.completedDrivers.length} Completed</li>
<li><strong>Status:</strong>${state(snapshot.status)}</li>
</ul>
<h2>Workers (${snapshot.workers.length})</h2>${workersTable(snapshot.workers)}
<h2>Running Applications (${snapshot.activeApps.length})</h2>${
      appsTable(options, snapshot.activeApps, now, true, "running-apps")
    }
<h2>Running Drivers (${snapshot.activeDrivers.length})</h2>${
      driversTable(options, snapshot.activeDrivers, snapshot.workers, true, "running-drivers")
    }
<h2>Completed Applications (${snapshot.completedApps.length})</h2>${
      appsTable(options, snapshot.completedApps, now, false, "completed-apps")
    }
<h2>Completed Drivers (${snapshot.completedDrivers.length})</h2>${
      driversTable(options, snapshot.completedDrivers, snapshot.workers, false, "completed-drivers")
    }`
  })
}

const findApp = (snapshot: QueryMessages.MasterStateResponse, appId: string) =>
  [...snapshot.activeApps, ...snapshot.completedApps].find((app) => app.id === appId)

const appPage = (
  options: Options,
  snapshot: QueryMessages.MasterStateResponse,
  app: QueryMessages.ApplicationInfo,
  now: number
) => {
  const workerUi = (workerId: string) => snapshot.workers.find((w) => w.id === workerId)?.webUiAddress ?? ""
  const executors = Html.table<QueryMessages.ExecutorInfo>(
    [
      { header: "Executor ID", cell: (e) => e.execId, numeric: true },
      {
        header: "Worker",
        cell: (e) => workerUi(e.workerId) === "" ? e.workerId : link(workerUi(e.workerId), e.workerId)
      },
      { header: "Cores", cell: (e) => e.cores, numeric: true },
      { header: "Memory", cell: (e) => Html.megabytes(e.memory), numeric: true },
      { header: "State", cell: (e) => state(e.state) },
      {
        header: "Logs",
        cell: (e) =>
          workerUi(e.workerId) === "" ? "" : [
            link(`${workerUi(e.workerId)}/logPage/?appId=${app.id}&executorId=${e.execId}&logType=stdout`, "stdout"),
            " ",
            link(`${workerUi(e.workerId)}/logPage/?appId=${app.id}&executorId=${e.execId}&logType=stderr`, "stderr")
          ]
      }
    ],
    app.executors,
    { empty: "No executors.", id: "executors" }
  )
  return Html.page({
    title: `Application: ${app.desc.name}`,
    tabs: [{ label: "Master", href: "/" }],
    body: html`<h1>Application: ${app.desc.name}</h1>
<ul class="summary">
<li><strong>ID:</strong>${app.id}</li>
<li><strong>Name:</strong>${app.desc.name}</li>
<li><strong>User:</strong>${app.desc.user}</li>
<li><strong>Cores:</strong>${
      Option.match(app.desc.maxCores, { onNone: () => "Unlimited", onSome: String })
    } (${app.coresGranted} Granted)</li>
<li><strong>Executor Memory:</strong>${Html.megabytes(app.desc.memoryPerExecutorMB)}</li>
<li><strong>Submit Date:</strong>${Html.time(app.submitDate)}</li>
<li><strong>State:</strong>${state(app.state)}</li>
<li><strong>Duration:</strong>${Html.duration(Option.getOrElse(app.endTime, () => now) - app.startTime)}</li>
${
      Option.isSome(app.endTime)
        ? historyLine(historyPage(options, app))
        : app.desc.appUiUrl === ""
        ? ""
        : html`<li><strong>Application Detail UI:</strong>${link(app.desc.appUiUrl, app.desc.appUiUrl)}</li>`
    }
</ul>
<h2>Executors (${app.executors.length})</h2>${executors}`
  })
}

const AppQuery = Schema.Struct({ appId: Schema.String })

const workersAlive = Metric.gauge("kindling_master_workers_alive", { description: "Workers registered and alive" })
const workersDead = Metric.gauge("kindling_master_workers_dead", { description: "Workers timed out or lost" })
const appsWaiting = Metric.gauge("kindling_master_apps_waiting", { description: "Apps waiting for executors" })
const appsRunning = Metric.gauge("kindling_master_apps_running", { description: "Apps registered and running" })
const driversActive = Metric.gauge("kindling_master_drivers_active", { description: "Drivers submitted, not ended" })
const driversWaiting = Metric.gauge("kindling_master_drivers_waiting", { description: "Drivers waiting for a worker" })
const coresFree = Metric.gauge("kindling_master_cores_free", { description: "Cores free on alive workers" })
const coresTotal = Metric.gauge("kindling_master_cores_total", { description: "Cores of alive workers" })

// The master's figures are read off its state as a scrape asks for them.
const recordMetrics = (url: string, snapshot: QueryMessages.MasterStateResponse) => {
  const tag = (gauge: Metric.Metric.Gauge<number>) => Metric.tagged(gauge, "master", url)
  const alive = snapshot.workers.filter((w) => w.state === "ALIVE")
  return Effect.all([
    Metric.set(tag(workersAlive), alive.length),
    Metric.set(tag(workersDead), snapshot.workers.filter((w) => w.state === "DEAD").length),
    Metric.set(tag(appsWaiting), snapshot.activeApps.filter((a) => a.state === "WAITING").length),
    Metric.set(tag(appsRunning), snapshot.activeApps.filter((a) => a.state === "RUNNING").length),
    Metric.set(tag(driversActive), snapshot.activeDrivers.length),
    Metric.set(tag(driversWaiting), snapshot.activeDrivers.filter((d) => Option.isNone(d.workerId)).length),
    Metric.set(tag(coresFree), alive.reduce((sum, w) => sum + w.cores - w.coresUsed, 0)),
    Metric.set(tag(coresTotal), alive.reduce((sum, w) => sum + w.cores, 0))
  ], { discard: true })
}

const loopback = /^(127\.|::1$|::ffff:127\.)/

// Spark's `POST /workers/kill/?host=…` (hosts in the query or a form body): the workers on those hosts are
// decommissioned; 200 when any matched, 404 when none did, 405 when the allow mode refuses the requester.
const decommission = (options: Options) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const mode = options.decommissionAllowMode ?? "LOCAL"
    const from = Option.getOrUndefined(request.remoteAddress) ?? ""
    if (mode === "DENY" || (mode === "LOCAL" && !loopback.test(from))) {
      return HttpServerResponse.text(
        `Decommissioning from the UI is not allowed here (kindling.master.ui.decommission.allow.mode is ${mode})`,
        { status: 405 }
      )
    }
    const url = new URL(request.url, "http://master")
    const body = yield* Effect.orElseSucceed(
      request.urlParamsBody,
      () => [] as ReadonlyArray<readonly [string, string]>
    )
    const hosts = [...url.searchParams.getAll("host"), ...body.filter(([key]) => key === "host").map(([, v]) => v)]
    const wanted = new Set(hosts.map((host) => host.toLowerCase()))
    const snapshot = yield* options.master.state
    const matched = snapshot.workers.filter((w) => w.state === "ALIVE" && wanted.has(w.host.toLowerCase()))
    if (snapshot.status !== "ALIVE" || matched.length === 0) {
      return HttpServerResponse.text(`No live worker on ${hosts.join(", ") || "no host given"}`, { status: 404 })
    }
    yield* options.master.decommissionHosts(hosts)
    return HttpServerResponse.text(`Decommissioning ${matched.length} worker(s)`, { status: 200 })
  })

/**
 * The master's routes for its web server.
 *
 * @since 0.1.0
 * @category constructors
 */
export const routes = (options: Options): WebServer.NodeRoutes<unknown> => {
  const { master } = options
  const json = Effect.gen(function*() {
    return HttpServerResponse.unsafeJson(SparkJson.masterState(yield* master.state, yield* Clock.currentTimeMillis))
  })
  const notFound = (what: string) => Html.respond(Html.page({ title: "Not found", body: html`<p>${what}</p>` }), 404)
  const kill = (path: HttpRouter.PathInput, act: (id: string) => Effect.Effect<void>) =>
    HttpRouter.post(path, WebServer.killHandler({ enabled: options.killEnabled, redirectTo: "/", kill: act }))
  const appRoute = (
    render: (
      snapshot: QueryMessages.MasterStateResponse,
      app: QueryMessages.ApplicationInfo,
      now: number
    ) => HttpServerResponse.HttpServerResponse
  ) =>
    Effect.gen(function*() {
      const { appId } = yield* HttpServerRequest.schemaSearchParams(AppQuery)
      const snapshot = yield* master.state
      const app = findApp(snapshot, appId)
      return app === undefined ? notFound(`No app ${appId}.`) : render(snapshot, app, yield* Clock.currentTimeMillis)
    })
  return {
    routes: HttpRouter.empty.pipe(
      HttpRouter.get(
        "/",
        Effect.gen(function*() {
          return Html.respond(masterPage(options, yield* master.state, yield* Clock.currentTimeMillis))
        })
      ),
      HttpRouter.get("/json", json),
      HttpRouter.get("/app/", appRoute((snapshot, app, now) => Html.respond(appPage(options, snapshot, app, now)))),
      HttpRouter.get(
        "/app/json/",
        appRoute((_, app, now) => HttpServerResponse.unsafeJson(SparkJson.applicationInfo(app, now)))
      ),
      HttpRouter.post("/workers/kill/", decommission(options)),
      kill("/app/kill/", (id) => master.killApplication(Ids.AppId.make(id))),
      kill("/driver/kill/", (id) => master.killDriver(Ids.DriverId.make(id)))
    ),
    ready: Effect.map(master.state, (snapshot) => snapshot.status === "ALIVE"),
    metrics: () => ({ prefix: "kindling_master_", tags: { master: master.url } }),
    metricsPaths: ["/metrics/master/prometheus"],
    beforeScrape: Effect.flatMap(master.state, (snapshot) => recordMetrics(master.url, snapshot))
  }
}
