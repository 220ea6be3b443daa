/**
 * The pages of an app's UI, rendered from its status: Jobs (with an event timeline), a job (its DAG and stages),
 * Stages, a stage (its DAG, summary quantiles, a timeline and its tasks, paged and sorted here on the server),
 * Storage and a persisted dataset, Environment and Executors. A live app's UI and (later) the history server's
 * replay of an event log serve the same pages.
 *
 * @since 0.1.0
 */
import { Html } from "@kindling/kernel/web"
import * as AppStatus from "./AppStatus.js"
import * as DagSvg from "./DagSvg.js"
import * as MonitoringApi from "./MonitoringApi.js"

const { html, link } = Html

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
  /** Where the UI's pages are, which their links are relative to: `/` live, `/history/<appId>/` in the history server. */
  readonly uiRoot?: string
}

/**
 * Which page of a stage's tasks to show, of how many, sorted by which column (`-` first for descending).
 *
 * @since 0.1.0
 * @category models
 */
export interface TaskPaging {
  readonly page?: number | undefined
  readonly pageSize?: number | undefined
  readonly sort?: string | undefined
}

const tabs: ReadonlyArray<Html.Tab> = [
  { label: "Jobs", href: "jobs/" },
  { label: "Stages", href: "stages/" },
  { label: "Storage", href: "storage/" },
  { label: "Environment", href: "environment/" },
  { label: "Executors", href: "executors/" }
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

const page = (app: AppDescription, activeTab: string, body: Html.Markup) =>
  Html.respond(Html.page({
    title: `${app.name} application UI`,
    base: app.uiRoot ?? "/",
    tabs,
    activeTab,
    liveFrom: "events",
    body
  }))

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

const jobsTable = (
  status: AppStatus.AppStatus,
  jobs: ReadonlyArray<AppStatus.Job>,
  now: number,
  id: string,
  killable = false
) =>
  Html.table<{ readonly j: AppStatus.Job; readonly p: ReturnType<typeof AppStatus.jobProgress> }>(
    [
      { header: "Job Id", cell: ({ j }) => link(`jobs/job/?id=${j.jobId}`, j.jobId), numeric: true },
      {
        header: "Description",
        cell: ({ j }) => [
          link(`jobs/job/?id=${j.jobId}`, j.name),
          killable && j.status === "RUNNING" ? Html.killButton("jobs/job/kill/", j.jobId, "job") : ""
        ]
      },
      { header: "Submitted", cell: ({ j }) => Html.time(j.submissionTime) },
      { header: "Duration", cell: ({ j }) => durationOf(j.submissionTime, j.completionTime, now), numeric: true },
      {
        header: "Stages: Succeeded/Total",
        cell: ({ j, p }) =>
          `${p.numCompletedStages}/${j.stageIds.length - p.numSkippedStages}${
            p.numSkippedStages > 0 ? ` (${p.numSkippedStages} skipped)` : ""
          }${p.numFailedStages > 0 ? ` (${p.numFailedStages} failed)` : ""}`
      },
      {
        header: "Tasks (for all stages): Succeeded/Total",
        cell: ({ p }) =>
          progressBar(
            p.numCompletedTasks,
            p.numActiveTasks,
            p.numTasks - p.numSkippedTasks,
            p.numFailedTasks > 0 ? ` (${p.numFailedTasks} failed)` : ""
          )
      },
      { header: "Status", cell: ({ j }) => state(j.status) }
    ],
    // Each job's progress is worked out once for its row.
    jobs.map((j) => ({ j, p: AppStatus.jobProgress(status, j) })),
    { id, empty: "No jobs." }
  )

/**
 * @since 0.1.0
 * @category pages
 */
export const jobsPage = (
  status: AppStatus.AppStatus,
  app: AppDescription,
  appId: string,
  now: number,
  killable: boolean
) => {
  const jobs = [...status.jobs.values()].reverse()
  const running = jobs.filter((j) => j.status === "RUNNING")
  const succeeded = jobs.filter((j) => j.status === "SUCCEEDED")
  const failed = jobs.filter((j) => j.status === "FAILED")
  const executorLanes = [...status.executors.values()].slice(-20).map((e) => ({
    label: `Executor ${e.executorId}`,
    spans: [{ start: e.addTime, end: e.removeTime, kind: "executor", text: e.host }]
  }))
  const jobLanes = [...status.jobs.values()].slice(-20).map((j) => ({
    label: link(`jobs/job/?id=${j.jobId}`, `Job ${j.jobId}`),
    spans: [{ start: j.submissionTime, end: j.completionTime, kind: j.status, text: j.name }]
  }))
  return page(
    app,
    "jobs/",
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
          s.attempt === undefined ? s.name : link(`stages/stage/?id=${s.stageId}&attempt=${s.attemptId}`, s.name)
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

/**
 * @since 0.1.0
 * @category pages
 */
export const stagesPage = (status: AppStatus.AppStatus, app: AppDescription, now: number) => {
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
    "stages/",
    html`<h1>Stages for All Jobs</h1>${
      sections.map(([title, rows, id]) => html`<h2>${title} (${rows.length})</h2>${stagesTable(rows, now, id)}`)
    }`
  )
}

/**
 * @since 0.1.0
 * @category pages
 */
export const jobPage = (status: AppStatus.AppStatus, app: AppDescription, job: AppStatus.Job, now: number) => {
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
    "jobs/",
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

/**
 * @since 0.1.0
 * @category pages
 */
export const stagePage = (
  status: AppStatus.AppStatus,
  app: AppDescription,
  attempt: AppStatus.StageAttempt,
  query: TaskPaging,
  now: number
) => {
  const pageSize = query.pageSize ?? 100
  const sort = query.sort ?? "index"
  const { pages, tasks } = taskPage(attempt, { page: query.page ?? 1, pageSize, sort }, now)
  const current = Math.min(Math.max(1, query.page ?? 1), pages)
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
  const base = `stages/stage/?id=${attempt.stageId}&attempt=${attempt.attemptId}&task.pageSize=${pageSize}`
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
    "stages/",
    html`<h1>Details for Stage ${attempt.stageId} (Attempt ${attempt.attemptId})</h1>
<ul class="summary">
<li><strong>Name:</strong>${attempt.name}</li>
<li><strong>Status:</strong>${state(attempt.status)}</li>
<li><strong>Tasks:</strong>${attempt.numCompleteTasks} succeeded, ${attempt.numActiveTasks} running, ${attempt.numFailedTasks} failed of ${attempt.numTasks}</li>
<li><strong>Total time across all tasks:</strong>${Html.duration(attempt.totals["duration"] ?? 0)}</li>
<li><strong>Shuffle read:</strong>${Html.bytes(attempt.totals["shuffleBytesRead"] ?? 0)}</li>
<li><strong>Shuffle write:</strong>${Html.bytes(attempt.totals["shuffleBytesWritten"] ?? 0)}</li>
<li><strong>Associated jobs:</strong>${
      attempt.jobIds.map((id, i) => [i > 0 ? ", " : "", link(`jobs/job/?id=${id}`, id)])
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

/**
 * @since 0.1.0
 * @category pages
 */
export const storagePage = (status: AppStatus.AppStatus, app: AppDescription) => {
  const rows = [...status.storage.values()].map(MonitoringApi.storage)
  return page(
    app,
    "storage/",
    html`<h1>Storage</h1><h2>Cached Datasets (${rows.length})</h2>${
      Html.table<(typeof rows)[number]>(
        [
          { header: "ID", cell: (r) => r.id, numeric: true },
          { header: "Dataset Name", cell: (r) => link(`storage/rdd/?id=${r.id}`, r.name) },
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

/**
 * @since 0.1.0
 * @category pages
 */
export const datasetPage = (status: AppStatus.AppStatus, app: AppDescription, storage: AppStatus.Storage) => {
  const blocks = [...storage.blocks].flatMap(([blockId, holders]) =>
    [...holders].map(([executorId, size]) => ({ blockId, executorId, ...size }))
  )
  const summary = MonitoringApi.storage(storage)
  return page(
    app,
    "storage/",
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

/**
 * @since 0.1.0
 * @category pages
 */
export const environmentPage = (app: AppDescription, info: MonitoringApi.AppInfo) => {
  const env = MonitoringApi.environment(info)
  const pairs = (rows: ReadonlyArray<ReadonlyArray<string>>, id: string) =>
    Html.table<ReadonlyArray<string>>(
      [{ header: "Name", cell: (r) => r[0] }, { header: "Value", cell: (r) => r[1] }],
      rows,
      { id }
    )
  return page(
    app,
    "environment/",
    html`<h1>Environment</h1>
<h2>Runtime Information</h2>${
      pairs(
        [["Node.js Version", process.version], ["Node.js Home", process.execPath], ["Kindling Version", info.version]],
        "runtime"
      )
    }
<h2>Kindling Properties</h2>${pairs(env.sparkProperties, "properties")}
<h2>System Properties</h2>${pairs(env.systemProperties, "system")}`
  )
}

/**
 * @since 0.1.0
 * @category pages
 */
export const executorsPage = (status: AppStatus.AppStatus, app: AppDescription) => {
  const rows = [...status.executors.values()].map((e) => ({ e, summary: MonitoringApi.executor(status, e) }))
  return page(
    app,
    "executors/",
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
