/**
 * An app's metrics for Prometheus (`/metrics/prometheus` of its UI), recorded with Effect's `Metric` API as the
 * app's events are folded into its status: jobs, stages and tasks by state, task durations as a histogram,
 * shuffle bytes, and each executor's heap and event-loop delay from its heartbeats. Every series carries the
 * app's id as its `app` tag.
 *
 * @since 0.1.0
 */
import type { AppEvents } from "@kindling/app"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as MetricLabel from "effect/MetricLabel"
import type * as AppStatus from "./AppStatus.js"

const counter = (name: string, description: string) => Metric.counter(name, { description, incremental: true })

const jobsEnded = counter("kindling_app_jobs_ended_total", "Jobs ended, by result")
const stagesEnded = counter("kindling_app_stages_ended_total", "Stage attempts ended, by result")
const tasksEnded = counter("kindling_app_tasks_ended_total", "Tasks ended, by result")
const shuffleRead = counter("kindling_app_shuffle_read_bytes_total", "Shuffle bytes read by tasks that succeeded")
const shuffleWritten = counter(
  "kindling_app_shuffle_write_bytes_total",
  "Shuffle bytes written by tasks that succeeded"
)
const jobsActive = Metric.gauge("kindling_app_jobs_active", { description: "Jobs running" })
const stagesActive = Metric.gauge("kindling_app_stages_active", { description: "Stage attempts running" })
const tasksActive = Metric.gauge("kindling_app_tasks_active", { description: "Tasks running" })
const executorsActive = Metric.gauge("kindling_app_executors_active", { description: "Executors registered" })
const taskDuration = Metric.histogram(
  "kindling_app_task_duration_seconds",
  // 1 ms to about 4.5 hours, each bucket 4× the one before.
  MetricBoundaries.exponential({ start: 0.001, factor: 4, count: 12 }),
  "Task durations, launch to end as the driver saw them"
)
const executorHeap = Metric.gauge("kindling_app_executor_heap_used_bytes", { description: "V8 heap in use" })
const executorRss = Metric.gauge("kindling_app_executor_rss_bytes", { description: "Resident set size" })
const executorLoopDelay = Metric.gauge("kindling_app_executor_event_loop_delay_seconds", {
  description: "99th percentile of the event loop's delay since the executor's last heartbeat"
})

/**
 * @since 0.1.0
 * @category models
 */
export interface AppMetrics {
  /** Records what the event changed; call it after the event is folded into `status`. */
  readonly record: (status: AppStatus.AppStatus, event: AppEvents.AppEvent) => void
  /** Sets the gauges read off the status, before a scrape. */
  readonly sample: () => void
}

/**
 * Metrics tagged with the app's id as `appId` gives it at the time.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (appId: () => string): AppMetrics => {
  // Tags are built once per app id and label: recording happens for every task.
  let cachedFor: string | undefined
  const tagsCache = new Map<string, ReadonlyArray<MetricLabel.MetricLabel>>()
  const tags = (name?: string, value?: string) => {
    const id = appId()
    if (id !== cachedFor) {
      cachedFor = id
      tagsCache.clear()
    }
    const key = name === undefined ? "" : `${name}=${value}`
    const cached = tagsCache.get(key)
    if (cached !== undefined) return cached
    const labels = [MetricLabel.make("app", id)]
    if (name !== undefined) labels.push(MetricLabel.make(name, value!))
    tagsCache.set(key, labels)
    return labels
  }
  const sample = (status: AppStatus.AppStatus) => {
    let jobs = 0
    for (const job of status.jobs.values()) if (job.status === "RUNNING") jobs++
    let stages = 0
    let tasks = 0
    for (const stage of status.stages.values()) {
      if (stage.status === "ACTIVE") stages++
      tasks += stage.numActiveTasks
    }
    let executors = 0
    for (const executor of status.executors.values()) if (executor.removeTime === undefined) executors++
    jobsActive.unsafeUpdate(jobs, tags())
    stagesActive.unsafeUpdate(stages, tags())
    tasksActive.unsafeUpdate(tasks, tags())
    executorsActive.unsafeUpdate(executors, tags())
  }
  let lastStatus: AppStatus.AppStatus | undefined
  return {
    sample: () => {
      if (lastStatus !== undefined) sample(lastStatus)
    },
    record: (status, event) => {
      lastStatus = status
      switch (event._tag) {
        case "JobEnd":
          jobsEnded.unsafeUpdate(1, tags("result", event.succeeded ? "succeeded" : "failed"))
          break
        case "StageCompleted":
          stagesEnded.unsafeUpdate(1, tags("result", event.failureReason === undefined ? "complete" : "failed"))
          break
        case "TaskEnd": {
          const result = event.succeeded
            ? "succeeded"
            : event.reason?.startsWith("TaskKilled") === true
            ? "killed"
            : "failed"
          tasksEnded.unsafeUpdate(1, tags("result", result))
          taskDuration.unsafeUpdate((event.metrics["duration"] ?? 0) / 1000, tags())
          const read = event.metrics["shuffleBytesRead"] ?? 0
          const written = event.metrics["shuffleBytesWritten"] ?? 0
          if (read > 0) shuffleRead.unsafeUpdate(read, tags())
          if (written > 0) shuffleWritten.unsafeUpdate(written, tags())
          break
        }
        case "ExecutorMetricsUpdate": {
          const labels = tags("executor", event.executorId)
          const m = event.executorMetrics
          if (m["heapUsed"] !== undefined) executorHeap.unsafeUpdate(m["heapUsed"], labels)
          if (m["processRss"] !== undefined) executorRss.unsafeUpdate(m["processRss"], labels)
          if (m["eventLoopDelayP99"] !== undefined) {
            executorLoopDelay.unsafeUpdate(m["eventLoopDelayP99"] / 1000, labels)
          }
          break
        }
        default:
          break
      }
    }
  }
}
