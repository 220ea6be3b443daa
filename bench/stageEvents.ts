// What a bench feeds an app UI or an event log: the events of a big stage, as a driver would emit them.
import type { AppEvents } from "@kindling/app"

// The events of one job of one stage of `n` tasks, each 5–50 ms, over 8 executors.
export const stageEvents = (n: number) => {
  const events: Array<AppEvents.AppEvent> = []
  const executors = 8
  for (let e = 0; e < executors; e++) {
    events.push({ _tag: "ExecutorAdded", executorId: String(e), host: `host-${e}`, cores: 4, time: 0 })
  }
  const stage = { stageId: 0, name: "count (job 0)", numTasks: n, parentIds: [], datasets: [] }
  events.push({ _tag: "JobStart", jobId: 0, stageIds: [0], stages: [stage], pool: "default", time: 1 })
  events.push({
    _tag: "StageSubmitted",
    stageId: 0,
    stageAttempt: 0,
    name: stage.name,
    tasks: n,
    parentIds: [],
    time: 1
  })
  for (let i = 0; i < n; i++) {
    const start = 1 + i
    const executorId = String(i % executors)
    events.push({
      _tag: "TaskStart",
      stageId: 0,
      stageAttempt: 0,
      taskId: i,
      index: i,
      executorId,
      locality: "ANY",
      time: start
    })
    const duration = 5 + ((i * 7919) % 46)
    events.push({
      _tag: "TaskEnd",
      stageId: 0,
      stageAttempt: 0,
      taskId: i,
      succeeded: true,
      metrics: { duration, shuffleBytesRead: 1000 + (i % 100), shuffleBytesWritten: 2000 + (i % 50) },
      time: start + duration
    })
  }
  events.push({ _tag: "StageCompleted", stageId: 0, stageAttempt: 0, time: n + 100 })
  events.push({ _tag: "JobEnd", jobId: 0, succeeded: true, time: n + 100 })
  return events
}
