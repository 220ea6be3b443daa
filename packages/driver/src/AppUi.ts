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
import { Html, WebServer } from "@kindling/kernel"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { AppEvent } from "./AppEvents.js"
import * as AppMetrics from "./AppMetrics.js"
import * as AppStatus from "./AppStatus.js"
import * as DagSvg from "./DagSvg.js"
import type { Driver } from "./Driver.js"
import * as MonitoringApi from "./MonitoringApi.js"

const { html, link } = Html

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
}

/**
 * What the UI knows of the app besides its events.
 *
 * @since 0.1.0
 * @category models
 */
export interface AppDescription {
  readonly name: string
  readonly master: string
  readonly user: string
  readonly startTime: number
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

const version = "0.1.0"

// How long the fold lets events gather before it takes them: what the pages may lag behind the app.
const batchMillis = 100

const tabs: ReadonlyArray<Html.Tab> = [
  { label: "Jobs", href: "/jobs/" },
  { label: "Stages", href: "/stages/" },
  { label: "Storage", href: "/storage/" },
  { label: "Environment", href: "/environment/" },
  { label: "Executors", href: "/executors/" }
]

const state = (cell: string) => html`<span class="state-${cell}">${cell}</span>`

const progressBar = (done: number, running: number, total: number, extra = "") => {
  const share = (n: number) => (total === 0 ? 0 : Math.min(100, (100 * n) / total))
  return html`<div class="bar"><div class="done" style="width:${
    share(done).toFixed(2)
  }%"></div><div class="running" style="left:${share(done).toFixed(2)}%;width:${
    share(running).toFixed(2)
  }%"></div><span>${done}/${total}${running > 0 ? ` (${running} running)` : ""}${extra}</span></div>`
}

const durationOf = (start: number | undefined, end: number | undefined, now: number) =>
  start === undefined ? "" : Html.duration((end ?? now) - start)

/**
 * Starts the UI on its port, fed by `events` (subscribed before the app's first job); it stops with the scope.
 *
 * @since 0.1.0
 * @category constructors
 */
export const start = (
  options: Options,
  app: AppDescription,
  events: Queue.Dequeue<AppEvent>,
  cancelJob: (jobId: number, reason: string) => Effect.Effect<void> = () => Effect.void
): Effect.Effect<AppUi, WebServer.WebPortUnavailable, Scope.Scope> =>
  Effect.gen(function*() {
    const server = yield* WebServer.bind({
      name: "app UI",
      host: options.host,
      port: options.port,
      maxRetries: options.maxRetries
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
      version,
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
 * Starts the UI unless `options` is undefined, subscribing to the driver's events first. A UI that cannot
 * listen (every port tried is taken) is reported and the app goes on without it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const startIfEnabled = (
  options: Options | undefined,
  app: AppDescription,
  driver: Pick<Driver, "listen" | "cancelJob">
): Effect.Effect<AppUi | undefined, never, Scope.Scope> =>
  options === undefined ?
    Effect.succeed(undefined) :
    Effect.flatMap(driver.listen, (events) =>
      start(options, app, events, driver.cancelJob).pipe(
        Effect.catchAll((error) =>
          Effect.as(Effect.logWarning(`${error.message}; the app runs without its UI`), undefined)
        )
      ))

const KillForm = Schema.Struct({ id: Schema.NumberFromString, terminate: Schema.optional(Schema.String) })

// A running job's kill button: its action fails, as Spark's "killed via the Web UI".
interface Kill {
  readonly enabled: boolean
  readonly cancelJob: (jobId: number, reason: string) => Effect.Effect<void>
}

const killJob = ({ cancelJob, enabled }: Kill) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    if (!enabled) return HttpServerResponse.text("Killing is disabled (kindling.ui.killEnabled)", { status: 405 })
    if (!WebServer.isSameOrigin(request.headers)) {
      return HttpServerResponse.text("Refused: the request does not come from this UI's pages", { status: 403 })
    }
    const form = yield* Effect.either(HttpServerRequest.schemaBodyUrlParams(KillForm))
    if (form._tag === "Left") return HttpServerResponse.text("Give the job's id", { status: 400 })
    if (form.right.terminate === "true") yield* cancelJob(form.right.id, `Job ${form.right.id} killed via the web UI`)
    return HttpServerResponse.redirect("/jobs/", { status: 303 })
  })

// ---- pages --------------------------------------------------------------------------------------------------

const page = (app: AppDescription, activeTab: string, body: Html.Markup) =>
  Html.respond(Html.page({ title: `${app.name} application UI`, tabs, activeTab, liveFrom: "/events", body }))

const timeline = (
  lanes: ReadonlyArray<
    {
      readonly label: Html.Content
      readonly spans: ReadonlyArray<{ start: number; end: number | undefined; kind: string; text: string }>
    }
  >,
  now: number
) => {
  const all = lanes.flatMap((lane) => lane.spans)
  if (all.length === 0) return html`<p class="empty">Nothing yet.</p>`
  const from = Math.min(...all.map((s) => s.start))
  const to = Math.max(now, ...all.map((s) => s.end ?? now))
  const span = Math.max(1, to - from)
  const pct = (t: number) => ((100 * (t - from)) / span).toFixed(2)
  return html`<table class="timeline-table"><tbody>${
    lanes.map((lane) =>
      html`<tr><td style="width:12em">${lane.label}</td><td><div class="timeline"><div class="lane">${
        lane.spans.map((s) =>
          html`<div class="span ${s.kind}" title="${s.text}" style="left:${pct(s.start)}%;width:max(3px,${
            (Number(pct(s.end ?? now)) - Number(pct(s.start))).toFixed(2)
          }%)">${s.text}</div>`
        )
      }</div></div></td></tr>`
    )
  }</tbody></table><p class="empty">${Html.time(from)} – ${Html.time(to)}</p>`
}

const killButton = (jobId: number) =>
  html`<form class="inline" method="post" action="/jobs/job/kill/" data-confirm="Kill job ${jobId}?"><input type="hidden" name="id" value="${jobId}"><input type="hidden" name="terminate" value="true"><button class="kill" type="submit">kill</button></form>`

const jobsTable = (
  status: AppStatus.AppStatus,
  jobs: ReadonlyArray<AppStatus.Job>,
  now: number,
  id: string,
  killable = false
) =>
  Html.table<AppStatus.Job>(
    [
      { header: "Job Id", cell: (j) => link(`/jobs/job/?id=${j.jobId}`, j.jobId), numeric: true },
      {
        header: "Description",
        cell: (
          j
        ) => [link(`/jobs/job/?id=${j.jobId}`, j.name), killable && j.status === "RUNNING" ? killButton(j.jobId) : ""]
      },
      { header: "Submitted", cell: (j) => Html.time(j.submissionTime) },
      { header: "Duration", cell: (j) => durationOf(j.submissionTime, j.completionTime, now), numeric: true },
      {
        header: "Stages: Succeeded/Total",
        cell: (j) => {
          const p = AppStatus.jobProgress(status, j)
          return `${p.numCompletedStages}/${j.stageIds.length - p.numSkippedStages}${
            p.numSkippedStages > 0 ? ` (${p.numSkippedStages} skipped)` : ""
          }${p.numFailedStages > 0 ? ` (${p.numFailedStages} failed)` : ""}`
        }
      },
      {
        header: "Tasks (for all stages): Succeeded/Total",
        cell: (j) => {
          const p = AppStatus.jobProgress(status, j)
          return progressBar(
            p.numCompletedTasks,
            p.numActiveTasks,
            p.numTasks - p.numSkippedTasks,
            p.numFailedTasks > 0 ? ` (${p.numFailedTasks} failed)` : ""
          )
        }
      },
      { header: "Status", cell: (j) => state(j.status) }
    ],
    jobs,
    { id, empty: "No jobs." }
  )

const jobsPage = (status: AppStatus.AppStatus, app: AppDescription, appId: string, now: number, killable: boolean) => {
  const jobs = [...status.jobs.values()].reverse()
  const running = jobs.filter((j) => j.status === "RUNNING")
  const succeeded = jobs.filter((j) => j.status === "SUCCEEDED")
  const failed = jobs.filter((j) => j.status === "FAILED")
  const executorLanes = [...status.executors.values()].slice(-20).map((e) => ({
    label: `Executor ${e.executorId}`,
    spans: [{ start: e.addTime, end: e.removeTime, kind: "executor", text: e.host }]
  }))
  const jobLanes = [...status.jobs.values()].slice(-20).map((j) => ({
    label: link(`/jobs/job/?id=${j.jobId}`, `Job ${j.jobId}`),
    spans: [{ start: j.submissionTime, end: j.completionTime, kind: j.status, text: j.name }]
  }))
  return page(
    app,
    "/jobs/",
    html`<h1>Spark Jobs</h1>
<ul class="summary">
<li><strong>App:</strong>${app.name} (${appId})</li>
<li><strong>Master:</strong>${app.master}</li>
<li><strong>User:</strong>${app.user}</li>
<li><strong>Started:</strong>${Html.time(app.startTime)}</li>
<li><strong>Total Uptime:</strong>${Html.duration(now - app.startTime)}</li>
<li><strong>Active Jobs:</strong>${running.length}</li>
<li><strong>Completed Jobs:</strong>${succeeded.length}</li>
<li><strong>Failed Jobs:</strong>${failed.length}</li>
</ul>
<h2>Event Timeline</h2>${timeline([...executorLanes, ...jobLanes], now)}
<h2>Active Jobs (${running.length})</h2>${jobsTable(status, running, now, "active-jobs", killable)}
<h2>Completed Jobs (${succeeded.length})</h2>${jobsTable(status, succeeded, now, "completed-jobs")}
<h2>Failed Jobs (${failed.length})</h2>${jobsTable(status, failed, now, "failed-jobs")}`
  )
}

interface StageRow {
  readonly stageId: number
  readonly attemptId: number
  readonly name: string
  readonly status: AppStatus.StageStatus
  readonly attempt: AppStatus.StageAttempt | undefined
  readonly numTasks: number
}

const stagesTable = (rows: ReadonlyArray<StageRow>, now: number, id: string) =>
  Html.table<StageRow>(
    [
      { header: "Stage Id", cell: (s) => s.stageId, numeric: true },
      {
        header: "Description",
        cell: (s) =>
          s.attempt === undefined ? s.name : link(`/stages/stage/?id=${s.stageId}&attempt=${s.attemptId}`, s.name)
      },
      { header: "Attempt", cell: (s) => s.attemptId, numeric: true },
      { header: "Submitted", cell: (s) => s.attempt === undefined ? "" : Html.time(s.attempt.submissionTime) },
      {
        header: "Duration",
        cell: (s) =>
          s.attempt === undefined
            ? ""
            : durationOf(s.attempt.firstTaskLaunchedTime ?? s.attempt.submissionTime, s.attempt.completionTime, now),
        numeric: true
      },
      {
        header: "Tasks: Succeeded/Total",
        cell: (s) =>
          s.attempt === undefined
            ? progressBar(0, 0, s.numTasks)
            : progressBar(
              s.attempt.numCompleteTasks,
              s.attempt.numActiveTasks,
              s.attempt.numTasks,
              s.attempt.numFailedTasks > 0 ? ` (${s.attempt.numFailedTasks} failed)` : ""
            )
      },
      { header: "Shuffle Read", cell: (s) => bytesOr(s.attempt?.totals["shuffleBytesRead"]), numeric: true },
      { header: "Shuffle Write", cell: (s) => bytesOr(s.attempt?.totals["shuffleBytesWritten"]), numeric: true },
      {
        header: "Status",
        cell: (
          s
        ) => [
          state(s.status),
          s.attempt?.failureReason === undefined ? "" : html`<br><small>${s.attempt.failureReason}</small>`
        ]
      }
    ],
    rows,
    { id, empty: "No stages." }
  )

const bytesOr = (n: number | undefined) => (n === undefined || n === 0 ? "" : Html.bytes(n))

const attemptRow = (attempt: AppStatus.StageAttempt): StageRow => ({
  stageId: attempt.stageId,
  attemptId: attempt.attemptId,
  name: attempt.name,
  status: attempt.status,
  attempt,
  numTasks: attempt.numTasks
})

const stagesPage = (status: AppStatus.AppStatus, app: AppDescription, now: number) => {
  const attempts = [...status.stages.values()].reverse().map(attemptRow)
  const runningJobs = [...status.jobs.values()].filter((j) => j.status === "RUNNING")
  const pending: Array<StageRow> = []
  const skipped: Array<StageRow> = []
  for (const info of status.stageInfos.values()) {
    if (AppStatus.attemptsOf(status, info.stageId).length > 0) continue
    const row = { stageId: info.stageId, attemptId: 0, name: info.name, attempt: undefined, numTasks: info.numTasks }
    if (info.jobIds.some((jobId) => runningJobs.some((j) => j.jobId === jobId))) {
      pending.push({ ...row, status: "PENDING" })
    } else skipped.push({ ...row, status: "SKIPPED" })
  }
  const by = (s: AppStatus.StageStatus) => attempts.filter((row) => row.status === s)
  const sections: Array<[string, ReadonlyArray<StageRow>, string]> = [
    ["Active Stages", by("ACTIVE"), "active-stages"],
    ["Pending Stages", pending, "pending-stages"],
    ["Completed Stages", by("COMPLETE"), "completed-stages"],
    ["Skipped Stages", skipped.reverse(), "skipped-stages"],
    ["Failed Stages", by("FAILED"), "failed-stages"]
  ]
  return page(
    app,
    "/stages/",
    html`<h1>Stages for All Jobs</h1>${
      sections.map(([title, rows, id]) => html`<h2>${title} (${rows.length})</h2>${stagesTable(rows, now, id)}`)
    }`
  )
}

const jobPage = (status: AppStatus.AppStatus, app: AppDescription, job: AppStatus.Job, now: number) => {
  const rows: Array<StageRow> = job.stages.map((info) => {
    const attempt = AppStatus.attemptsOf(status, info.stageId).filter((a) => a.submissionTime >= job.submissionTime).at(
      -1
    )
    return {
      stageId: info.stageId,
      attemptId: attempt?.attemptId ?? 0,
      name: info.name,
      status: AppStatus.stageStatusFor(status, job, info.stageId),
      attempt,
      numTasks: info.numTasks
    }
  }).reverse()
  const drawn = job.stages.map((info) => ({ info, status: AppStatus.stageStatusFor(status, job, info.stageId) }))
  return page(
    app,
    "/jobs/",
    html`<h1>Details for Job ${job.jobId}</h1>
<ul class="summary">
<li><strong>Status:</strong>${state(job.status)}</li>
<li><strong>Submitted:</strong>${Html.time(job.submissionTime)}</li>
<li><strong>Duration:</strong>${durationOf(job.submissionTime, job.completionTime, now)}</li>
<li><strong>Scheduling pool:</strong>${job.pool}</li>
<li><strong>Stages:</strong>${job.stageIds.length}</li>
</ul>
<h2>DAG Visualization</h2>${DagSvg.render(drawn)}
<h2>Stages (${rows.length})</h2>${stagesTable(rows, now, "job-stages")}`
  )
}

// The task table's columns: a header, how a task sorts under it, and its cell.
const taskColumns: ReadonlyArray<
  Html.Column<AppStatus.Task> & {
    readonly key: string
    readonly sort: (t: AppStatus.Task, now: number) => number | string
  }
> = [
  { key: "index", header: "Index", sort: (t) => t.index, cell: (t) => t.index, numeric: true },
  { key: "id", header: "Task ID", sort: (t) => t.taskId, cell: (t) => t.taskId, numeric: true },
  { key: "attempt", header: "Attempt", sort: (t) => t.attempt, cell: (t) => t.attempt, numeric: true },
  { key: "status", header: "Status", sort: (t) => t.status, cell: (t) => state(t.status) },
  { key: "locality", header: "Locality Level", sort: (t) => t.locality, cell: (t) => t.locality },
  { key: "executor", header: "Executor ID", sort: (t) => t.executorId, cell: (t) => t.executorId },
  { key: "host", header: "Host", sort: (t) => t.host, cell: (t) => t.host },
  { key: "launch", header: "Launch Time", sort: (t) => t.launchTime, cell: (t) => Html.time(t.launchTime) },
  {
    key: "duration",
    header: "Duration",
    sort: (t, now) => (t.finishTime ?? now) - t.launchTime,
    cell: (t) =>
      t.finishTime === undefined ? "running" : Html.duration(t.metrics["duration"] ?? t.finishTime - t.launchTime),
    numeric: true
  },
  {
    key: "shuffleRead",
    header: "Shuffle Read",
    sort: (t) => t.metrics["shuffleBytesRead"] ?? 0,
    cell: (t) => bytesOr(t.metrics["shuffleBytesRead"]),
    numeric: true
  },
  {
    key: "shuffleWrite",
    header: "Shuffle Write",
    sort: (t) => t.metrics["shuffleBytesWritten"] ?? 0,
    cell: (t) => bytesOr(t.metrics["shuffleBytesWritten"]),
    numeric: true
  },
  {
    key: "spill",
    header: "Spill",
    sort: (t) => t.metrics["spilledBytes"] ?? 0,
    cell: (t) => bytesOr(t.metrics["spilledBytes"]),
    numeric: true
  },
  { key: "error", header: "Errors", sort: (t) => t.errorMessage ?? "", cell: (t) => t.errorMessage ?? "" }
]

/**
 * A page of a stage attempt's tasks, sorted by a column (`taskColumns` key, `-` first for descending).
 *
 * @since 0.1.0
 */
export const taskPage = (
  attempt: AppStatus.StageAttempt,
  options: { readonly page: number; readonly pageSize: number; readonly sort: string },
  now: number
): { readonly tasks: ReadonlyArray<AppStatus.Task>; readonly pages: number } => {
  const descending = options.sort.startsWith("-")
  const column = taskColumns.find((c) => c.key === options.sort.replace(/^-/, "")) ?? taskColumns[0]!
  const pages = Math.max(1, Math.ceil(attempt.tasks.length / options.pageSize))
  const pageIndex = Math.min(Math.max(1, options.page), pages) - 1
  // Launch order is task id order: the default sorts need no sort at all.
  let tasks: ReadonlyArray<AppStatus.Task> = attempt.tasks
  if (column.key !== "id") {
    const keyed = attempt.tasks.map((task) => [column.sort(task, now), task] as const)
    keyed.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1].taskId - b[1].taskId))
    tasks = keyed.map(([, task]) => task)
  }
  if (descending) tasks = [...tasks].reverse()
  return { tasks: tasks.slice(pageIndex * options.pageSize, (pageIndex + 1) * options.pageSize), pages }
}

const summaryMetrics: ReadonlyArray<
  { readonly label: string; readonly metric: string; readonly format: (n: number) => string }
> = [
  { label: "Duration", metric: "duration", format: Html.duration },
  { label: "Shuffle Read Size", metric: "shuffleBytesRead", format: Html.bytes },
  { label: "Shuffle Remote Reads", metric: "shuffleRemoteBytesRead", format: Html.bytes },
  { label: "Shuffle Write Size", metric: "shuffleBytesWritten", format: Html.bytes },
  { label: "Shuffle Write Records", metric: "shuffleRecordsWritten", format: String },
  { label: "Spill", metric: "spilledBytes", format: Html.bytes }
]

const stagePage = (
  status: AppStatus.AppStatus,
  app: AppDescription,
  attempt: AppStatus.StageAttempt,
  query: typeof StageQuery.Type,
  now: number
) => {
  const pageSize = query["task.pageSize"] ?? 100
  const sort = query["task.sort"] ?? "index"
  const { pages, tasks } = taskPage(attempt, { page: query["task.page"] ?? 1, pageSize, sort }, now)
  const current = Math.min(Math.max(1, query["task.page"] ?? 1), pages)
  const succeeded = attempt.tasks.filter((t) => t.status === "SUCCESS")
  const summary = summaryMetrics.filter((m) => m.metric === "duration" || (attempt.totals[m.metric] ?? 0) > 0)
  const quantiles = Html.table<(typeof summaryMetrics)[number]>(
    [
      { header: "Metric", cell: (m) => m.label },
      ...["Min", "25th percentile", "Median", "75th percentile", "Max"].map((header, i) => ({
        header,
        numeric: true,
        cell: (m: (typeof summaryMetrics)[number]) =>
          m.format(AppStatus.quantiles(succeeded.map((t) => t.metrics[m.metric] ?? 0))[i]!)
      }))
    ],
    succeeded.length === 0 ? [] : summary,
    { id: "summary-metrics", empty: "No task has succeeded yet." }
  )
  const info = status.stageInfos.get(attempt.stageId)
  const base = `/stages/stage/?id=${attempt.stageId}&attempt=${attempt.attemptId}&task.pageSize=${pageSize}`
  const sortLink = (key: string, header: string) =>
    link(
      `${base}&task.sort=${sort === key ? `-${key}` : key}`,
      `${header}${sort === key ? " ▲" : sort === `-${key}` ? " ▼" : ""}`
    )
  const table = tasks.length === 0 ?
    html`<p class="empty">No tasks.</p>` :
    html`<table id="tasks"><thead><tr>${
      taskColumns.map((c) =>
        html`<th${c.numeric === true ? Html.trusted(" class=\"num\"") : ""}>${sortLink(c.key, c.header)}</th>`
      )
    }</tr></thead><tbody>${
      tasks.map((t) =>
        html`<tr>${
          taskColumns.map((c) => html`<td${c.numeric === true ? Html.trusted(" class=\"num\"") : ""}>${c.cell(t)}</td>`)
        }</tr>`
      )
    }</tbody></table>`
  const pager = html`<div class="pager">${
    current > 1 ? link(`${base}&task.sort=${sort}&task.page=${current - 1}`, "◀ Previous") : ""
  }<span>Page ${current} of ${pages} (${attempt.tasks.length} tasks)</span>${
    current < pages ? link(`${base}&task.sort=${sort}&task.page=${current + 1}`, "Next ▶") : ""
  }</div>`
  const byExecutor = new Map<string, Array<AppStatus.Task>>()
  for (const task of attempt.tasks.slice(0, 1000)) {
    const lane = byExecutor.get(task.executorId) ?? []
    lane.push(task)
    byExecutor.set(task.executorId, lane)
  }
  const lanes = [...byExecutor].map(([executorId, laneTasks]) => ({
    label: `Executor ${executorId}`,
    spans: laneTasks.map((t) => ({
      start: t.launchTime,
      end: t.finishTime,
      kind: t.status === "SUCCESS" ? "SUCCEEDED" : t.status,
      text: `task ${t.index}`
    }))
  }))
  return page(
    app,
    "/stages/",
    html`<h1>Details for Stage ${attempt.stageId} (Attempt ${attempt.attemptId})</h1>
<ul class="summary">
<li><strong>Name:</strong>${attempt.name}</li>
<li><strong>Status:</strong>${state(attempt.status)}</li>
<li><strong>Tasks:</strong>${attempt.numCompleteTasks} succeeded, ${attempt.numActiveTasks} running, ${attempt.numFailedTasks} failed of ${attempt.numTasks}</li>
<li><strong>Total time across all tasks:</strong>${Html.duration(attempt.totals["duration"] ?? 0)}</li>
<li><strong>Shuffle read:</strong>${Html.bytes(attempt.totals["shuffleBytesRead"] ?? 0)}</li>
<li><strong>Shuffle write:</strong>${Html.bytes(attempt.totals["shuffleBytesWritten"] ?? 0)}</li>
<li><strong>Associated jobs:</strong>${
      attempt.jobIds.map((id, i) => [i > 0 ? ", " : "", link(`/jobs/job/?id=${id}`, id)])
    }</li>
${attempt.failureReason === undefined ? "" : html`<li><strong>Failure reason:</strong>${attempt.failureReason}</li>`}
</ul>
${info === undefined ? "" : html`<h2>DAG Visualization</h2>${DagSvg.render([{ info, status: attempt.status }])}`}
<h2>Summary Metrics for ${succeeded.length} Completed Tasks</h2>${quantiles}
<h2>Event Timeline${attempt.tasks.length > 1000 ? " (first 1000 tasks)" : ""}</h2>${
      timeline(lanes, attempt.completionTime ?? now)
    }
<h2>Tasks (${attempt.tasks.length})</h2>${pager}${table}${pager}`
  )
}

const storagePage = (status: AppStatus.AppStatus, app: AppDescription) => {
  const rows = [...status.storage.values()].map(MonitoringApi.storage)
  return page(
    app,
    "/storage/",
    html`<h1>Storage</h1><h2>Cached Datasets (${rows.length})</h2>${
      Html.table<(typeof rows)[number]>(
        [
          { header: "ID", cell: (r) => r.id, numeric: true },
          { header: "Dataset Name", cell: (r) => link(`/storage/rdd/?id=${r.id}`, r.name) },
          { header: "Storage Level", cell: (r) => r.storageLevel },
          { header: "Cached Partitions", cell: (r) => r.numCachedPartitions, numeric: true },
          {
            header: "Fraction Cached",
            cell: (r) => r.numPartitions === 0 ? "" : `${Math.round((100 * r.numCachedPartitions) / r.numPartitions)}%`,
            numeric: true
          },
          { header: "Size in Memory", cell: (r) => Html.bytes(r.memoryUsed), numeric: true },
          { header: "Size on Disk", cell: (r) => Html.bytes(r.diskUsed), numeric: true }
        ],
        rows,
        { id: "storage", empty: "No dataset is persisted." }
      )
    }`
  )
}

const datasetPage = (status: AppStatus.AppStatus, app: AppDescription, storage: AppStatus.Storage) => {
  const blocks = [...storage.blocks].flatMap(([blockId, holders]) =>
    [...holders].map(([executorId, size]) => ({ blockId, executorId, ...size }))
  )
  const summary = MonitoringApi.storage(storage)
  return page(
    app,
    "/storage/",
    html`<h1>Dataset Storage Info for ${storage.name}</h1>
<ul class="summary"><li><strong>Storage Level:</strong>${storage.storageLevel}</li><li><strong>Cached Partitions:</strong>${summary.numCachedPartitions} of ${summary.numPartitions}</li><li><strong>Memory Size:</strong>${
      Html.bytes(summary.memoryUsed)
    }</li><li><strong>Disk Size:</strong>${Html.bytes(summary.diskUsed)}</li></ul>
<h2>${blocks.length} Partitions</h2>${
      Html.table<(typeof blocks)[number]>(
        [
          { header: "Block Name", cell: (b) => b.blockId },
          { header: "Size in Memory", cell: (b) => Html.bytes(b.memSize), numeric: true },
          { header: "Size on Disk", cell: (b) => Html.bytes(b.diskSize), numeric: true },
          { header: "Executor", cell: (b) => `${b.executorId} (${status.executors.get(b.executorId)?.host ?? ""})` }
        ],
        blocks,
        { id: "blocks" }
      )
    }`
  )
}

const environmentPage = (app: AppDescription, info: MonitoringApi.AppInfo) => {
  const env = MonitoringApi.environment(info)
  const pairs = (rows: ReadonlyArray<ReadonlyArray<string>>, id: string) =>
    Html.table<ReadonlyArray<string>>(
      [{ header: "Name", cell: (r) => r[0] }, { header: "Value", cell: (r) => r[1] }],
      rows,
      { id }
    )
  return page(
    app,
    "/environment/",
    html`<h1>Environment</h1>
<h2>Runtime Information</h2>${
      pairs(
        [["Node.js Version", process.version], ["Node.js Home", process.execPath], ["Kindling Version", version]],
        "runtime"
      )
    }
<h2>Kindling Properties</h2>${pairs(env.sparkProperties, "properties")}
<h2>System Properties</h2>${pairs(env.systemProperties, "system")}`
  )
}

const executorsPage = (status: AppStatus.AppStatus, app: AppDescription) => {
  const rows = [...status.executors.values()].map((e) => ({ e, summary: MonitoringApi.executor(status, e) }))
  return page(
    app,
    "/executors/",
    html`<h1>Executors</h1>${
      Html.table<(typeof rows)[number]>(
        [
          { header: "Executor ID", cell: (r) => r.e.executorId },
          { header: "Address", cell: (r) => r.e.host },
          { header: "Status", cell: (r) => state(r.summary.isActive ? "ACTIVE" : "DEAD") },
          { header: "RDD Blocks", cell: (r) => r.summary.rddBlocks, numeric: true },
          { header: "Storage Memory", cell: (r) => Html.bytes(r.summary.memoryUsed), numeric: true },
          { header: "Heap Used", cell: (r) => Html.bytes(r.e.memory["heapUsed"] ?? 0), numeric: true },
          { header: "Cores", cell: (r) => r.e.totalCores, numeric: true },
          { header: "Active Tasks", cell: (r) => r.e.activeTasks, numeric: true },
          { header: "Failed Tasks", cell: (r) => r.e.failedTasks, numeric: true },
          { header: "Complete Tasks", cell: (r) => r.e.completedTasks, numeric: true },
          { header: "Task Time", cell: (r) => Html.duration(r.e.totalDuration), numeric: true },
          { header: "Shuffle Read", cell: (r) => Html.bytes(r.e.shuffleRead), numeric: true },
          { header: "Shuffle Write", cell: (r) => Html.bytes(r.e.shuffleWrite), numeric: true },
          {
            header: "Logs",
            cell: (r) => Object.entries(r.e.logUrls).map(([logType, url], i) => [i > 0 ? " " : "", link(url, logType)])
          },
          { header: "Removed", cell: (r) => r.e.removeReason ?? "" }
        ],
        rows,
        { id: "executors", empty: "No executors yet." }
      )
    }`
  )
}

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

const routes = (
  status: AppStatus.AppStatus,
  app: AppDescription,
  info: () => MonitoringApi.AppInfo,
  changes: Stream.Stream<number>,
  kill: Kill
): HttpRouter.HttpRouter<unknown, never> => {
  const now = Clock.currentTimeMillis
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
    HttpRouter.get("/jobs/", Effect.map(now, (t) => jobsPage(status, app, info().id, t, kill.enabled))),
    HttpRouter.post("/jobs/job/kill/", killJob(kill)),
    HttpRouter.get(
      "/jobs/job/",
      query(IdQuery, ({ id }, t) => {
        const job = status.jobs.get(id)
        return job === undefined ? notFound(`No job ${id}`) : jobPage(status, app, job, t)
      })
    ),
    HttpRouter.get("/stages/", Effect.map(now, (t) => stagesPage(status, app, t))),
    HttpRouter.get(
      "/stages/stage/",
      query(StageQuery, (q, t) => {
        const attempt = status.stages.get(AppStatus.stageKey(q.id, q.attempt ?? 0))
        return attempt === undefined
          ? notFound(`No attempt ${q.attempt ?? 0} of stage ${q.id}`)
          : stagePage(status, app, attempt, q, t)
      })
    ),
    HttpRouter.get("/storage/", Effect.sync(() => storagePage(status, app))),
    HttpRouter.get(
      "/storage/rdd/",
      query(IdQuery, ({ id }) => {
        const storage = status.storage.get(id)
        return storage === undefined ? notFound(`Dataset ${id} is not persisted`) : datasetPage(status, app, storage)
      })
    ),
    HttpRouter.get("/environment/", Effect.sync(() => environmentPage(app, info()))),
    HttpRouter.get("/executors/", Effect.sync(() => executorsPage(status, app))),
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
            const sorted = taskPage(attempt, {
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
