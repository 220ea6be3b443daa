// The Stages tab and a stage attempt's page: stages by state, and an attempt's DAG, summary quantiles, timeline and
// its tasks, paged and sorted here on the server.
import { Html } from "@kindling/kernel/web"
import type { AppDescription, TaskPaging } from "../AppPages.js"
import * as AppStatus from "../AppStatus.js"
import * as DagSvg from "../DagSvg.js"
import { bytesOr, durationOf, page, progressBar, state, timeline } from "./appPageChrome.js"

const { html, link } = Html

export interface StageRow {
  readonly stageId: number
  readonly attemptId: number
  readonly name: string
  readonly status: AppStatus.StageStatus
  readonly attempt: AppStatus.StageAttempt | undefined
  readonly numTasks: number
}

export const stagesTable = (rows: ReadonlyArray<StageRow>, now: number, id: string) =>
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
      { header: "Input", cell: (s) => bytesOr(s.attempt?.totals["inputBytes"]), numeric: true },
      { header: "Output", cell: (s) => bytesOr(s.attempt?.totals["outputBytes"]), numeric: true },
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

const attemptRow = (attempt: AppStatus.StageAttempt): StageRow => ({
  stageId: attempt.stageId,
  attemptId: attempt.attemptId,
  name: attempt.name,
  status: attempt.status,
  attempt,
  numTasks: attempt.numTasks
})

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
  // Nanoseconds, as Spark counts it.
  { label: "Executor CPU Time", metric: "cpuTime", format: (nanos) => Html.duration(nanos / 1e6) },
  { label: "Input Size", metric: "inputBytes", format: Html.bytes },
  { label: "Input Records", metric: "inputRecords", format: String },
  { label: "Output Size", metric: "outputBytes", format: Html.bytes },
  { label: "Output Records", metric: "outputRecords", format: String },
  { label: "Shuffle Read Size", metric: "shuffleBytesRead", format: Html.bytes },
  { label: "Shuffle Read Records", metric: "shuffleRecordsRead", format: String },
  { label: "Shuffle Remote Reads", metric: "shuffleRemoteBytesRead", format: Html.bytes },
  { label: "Shuffle Write Size", metric: "shuffleBytesWritten", format: Html.bytes },
  { label: "Shuffle Write Records", metric: "shuffleRecordsWritten", format: String },
  { label: "Spill", metric: "spilledBytes", format: Html.bytes }
]

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
<li><strong>Input:</strong>${Html.bytes(attempt.totals["inputBytes"] ?? 0)} / ${
      attempt.totals["inputRecords"] ?? 0
    } records</li>
<li><strong>Output:</strong>${Html.bytes(attempt.totals["outputBytes"] ?? 0)} / ${
      attempt.totals["outputRecords"] ?? 0
    } records</li>
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
