// The Jobs tab and a job's page: the app's jobs by state with their timeline, and a job's DAG and stages.
import { Html } from "@kindling/kernel/web"
import type { AppDescription } from "../AppPages.js"
import * as AppStatus from "../AppStatus.js"
import * as DagSvg from "../DagSvg.js"
import { durationOf, page, progressBar, state, timeline } from "./appPageChrome.js"
import { type StageRow, stagesTable } from "./appStagePages.js"

const { html, link } = Html

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
        // As Spark's: the app's description of the job when it gave one, its call site under it.
        cell: ({ j }) => [
          j.description === undefined ? "" : html`<span>${j.description}</span><br>`,
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
  // An executor's lane runs from its addition to its removal; a decommissioned one's last part is marked so.
  const executorLanes = [...status.executors.values()].slice(-20).map((e) => ({
    label: `Executor ${e.executorId}`,
    spans: e.decommissioned === undefined
      ? [{ start: e.addTime, end: e.removeTime, kind: "executor", text: e.host }]
      : [
        { start: e.addTime, end: e.decommissioned.time, kind: "executor", text: e.host },
        {
          start: e.decommissioned.time,
          end: e.removeTime,
          kind: "decommissioning",
          text: `decommissioning: ${e.decommissioned.reason}`
        }
      ]
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
