// The app UI's status, folded from events: jobs and their stages (skipped ones too), stage attempts with their
// tasks, executors, persisted datasets, and what it forgets.
import { assert, describe, it } from "@effect/vitest"
import type { AppEvents } from "@kindling/app"
import { AppStatus } from "@kindling/monitoring"
import { FastCheck as fc } from "effect"

type Event = AppEvents.AppEvent

const stageInfo = (stageId: number, numTasks: number, parentIds: Array<number> = []) => ({
  stageId,
  name: stageId === 0 ? "reduceByKey (shuffle 0)" : `count (job ${stageId})`,
  numTasks,
  parentIds,
  datasets: [{ id: stageId, name: "MapPartitionsDataset", operation: "map", parentIds: [], numPartitions: numTasks }]
})

const task = (stageId: number, taskId: number, index: number, time: number, stageAttempt = 0): Event => ({
  _tag: "TaskStart",
  stageId,
  stageAttempt,
  taskId,
  index,
  executorId: "1",
  locality: "ANY",
  time
})

const ended = (stageId: number, taskId: number, succeeded: boolean, duration: number, reason?: string): Event => ({
  _tag: "TaskEnd",
  stageId,
  stageAttempt: 0,
  taskId,
  succeeded,
  ...(reason === undefined ? {} : { reason }),
  metrics: { duration, shuffleBytesWritten: succeeded ? 100 : 0 },
  time: 0
})

const fold = (events: ReadonlyArray<Event>, retention = AppStatus.defaultRetention) => {
  const status = AppStatus.make(retention)
  for (const event of events) AppStatus.apply(status, event)
  return status
}

// Job 0: a map stage of 2 tasks (one fails once) and a result stage of 1; job 1 reuses the shuffle (skipped).
const twoJobs: ReadonlyArray<Event> = [
  { _tag: "ExecutorAdded", executorId: "1", host: "h1", cores: 2, time: 0 },
  {
    _tag: "JobStart",
    jobId: 0,
    stageIds: [0, 1],
    stages: [stageInfo(0, 2), stageInfo(1, 1, [0])],
    pool: "default",
    time: 1
  },
  {
    _tag: "StageSubmitted",
    stageId: 0,
    stageAttempt: 0,
    name: "reduceByKey (shuffle 0)",
    tasks: 2,
    parentIds: [],
    time: 1
  },
  task(0, 0, 0, 2),
  task(0, 1, 1, 2),
  ended(0, 0, true, 10),
  ended(0, 1, false, 5, "Error: boom"),
  task(0, 2, 1, 8),
  ended(0, 2, true, 20),
  { _tag: "StageCompleted", stageId: 0, stageAttempt: 0, time: 30 },
  { _tag: "StageSubmitted", stageId: 1, stageAttempt: 0, name: "count (job 1)", tasks: 1, parentIds: [0], time: 30 },
  task(1, 3, 0, 31),
  ended(1, 3, true, 4),
  { _tag: "StageCompleted", stageId: 1, stageAttempt: 0, time: 35 },
  { _tag: "JobEnd", jobId: 0, succeeded: true, time: 35 },
  {
    _tag: "JobStart",
    jobId: 1,
    stageIds: [2, 3],
    stages: [stageInfo(2, 2), stageInfo(3, 1, [2])],
    pool: "default",
    time: 40
  },
  { _tag: "StageSubmitted", stageId: 3, stageAttempt: 0, name: "count (job 3)", tasks: 1, parentIds: [2], time: 40 },
  task(3, 4, 0, 41)
]

describe("AppStatus", () => {
  it("counts a job's tasks and stages over its stages' attempts, a failed task and a skipped stage included", () => {
    const status = fold(twoJobs)
    const first = AppStatus.jobProgress(status, status.jobs.get(0)!)
    assert.deepStrictEqual(first, {
      numTasks: 3,
      numActiveTasks: 0,
      numCompletedTasks: 3,
      numSkippedTasks: 0,
      numFailedTasks: 1,
      numKilledTasks: 0,
      numActiveStages: 0,
      numCompletedStages: 2,
      numSkippedStages: 0,
      numFailedStages: 0
    })
    // Still running: its unrun map stage is pending, not yet skipped.
    const second = status.jobs.get(1)!
    assert.strictEqual(AppStatus.stageStatusFor(status, second, 2), "PENDING")
    assert.strictEqual(AppStatus.jobProgress(status, second).numActiveTasks, 1)
    AppStatus.apply(status, ended(3, 4, true, 3))
    AppStatus.apply(status, { _tag: "JobEnd", jobId: 1, succeeded: true, time: 50 })
    assert.strictEqual(AppStatus.stageStatusFor(status, second, 2), "SKIPPED")
    assert.include(AppStatus.jobProgress(status, second), {
      numSkippedStages: 1,
      numSkippedTasks: 2,
      numCompletedTasks: 1
    })
  })

  it("keeps a stage attempt's tasks in launch order with their attempts, results and metrics", () => {
    const stage = fold(twoJobs).stages.get(AppStatus.stageKey(0, 0))!
    assert.deepStrictEqual(stage.tasks.map((t) => [t.taskId, t.index, t.attempt, t.status]), [
      [0, 0, 0, "SUCCESS"],
      [1, 1, 0, "FAILED"],
      [2, 1, 1, "SUCCESS"]
    ])
    assert.strictEqual(stage.tasks[1]!.errorMessage, "Error: boom")
    assert.strictEqual(stage.tasks[0]!.host, "h1")
    assert.deepStrictEqual([stage.numCompleteTasks, stage.numFailedTasks, stage.numActiveTasks], [2, 1, 0])
    assert.strictEqual(stage.totals["shuffleBytesWritten"], 200)
    assert.strictEqual(stage.totals["duration"], 35)
  })

  it("tracks the executors' tasks, and the persisted partitions until they are dropped or their executor goes", () => {
    const status = fold([
      ...twoJobs,
      {
        _tag: "BlockUpdated",
        executorId: "1",
        blockId: "rdd_0_0",
        storageLevel: "MEMORY_ONLY",
        memSize: 10,
        diskSize: 0,
        time: 60
      },
      {
        _tag: "BlockUpdated",
        executorId: "1",
        blockId: "rdd_0_1",
        storageLevel: "MEMORY_ONLY",
        memSize: 12,
        diskSize: 0,
        time: 60
      },
      {
        _tag: "BlockUpdated",
        executorId: "2",
        blockId: "rdd_1_0",
        storageLevel: "DISK_ONLY",
        memSize: 0,
        diskSize: 7,
        time: 60
      }
    ])
    const executor = status.executors.get("1")!
    assert.deepStrictEqual([executor.completedTasks, executor.failedTasks, executor.activeTasks], [3, 1, 1])
    assert.strictEqual(status.storage.get(0)!.blocks.size, 2)
    assert.strictEqual(status.storage.get(0)!.name, "MapPartitionsDataset at map")
    AppStatus.apply(status, { _tag: "ExecutorRemoved", executorId: "1", reason: "killed", time: 70 })
    assert.strictEqual(status.storage.get(0)!.blocks.size, 0)
    assert.strictEqual(status.executors.get("1")!.removeReason, "killed")
    AppStatus.apply(status, { _tag: "DatasetUnpersisted", datasetId: 1, time: 80 })
    assert.isFalse(status.storage.has(1))
  })

  it("forgets the oldest finished jobs, stages and tasks past its limits, never running ones", () => {
    const events: Array<Event> = []
    for (let jobId = 0; jobId < 5; jobId++) {
      events.push(
        { _tag: "JobStart", jobId, stageIds: [jobId], stages: [stageInfo(jobId, 30)], pool: "default", time: jobId },
        { _tag: "StageSubmitted", stageId: jobId, stageAttempt: 0, name: "s", tasks: 30, parentIds: [], time: jobId }
      )
      for (let i = 0; i < 30; i++) {
        events.push(task(jobId, jobId * 100 + i, i, jobId))
        if (i < 29 || jobId < 4) events.push(ended(jobId, jobId * 100 + i, true, 1))
      }
      if (jobId < 4) {
        events.push({ _tag: "StageCompleted", stageId: jobId, stageAttempt: 0, time: jobId })
        events.push({ _tag: "JobEnd", jobId, succeeded: true, time: jobId })
      }
    }
    const status = fold(events, { jobs: 2, stages: 2, tasks: 10 })
    assert.deepStrictEqual([...status.jobs.keys()], [3, 4])
    assert.deepStrictEqual([...status.stageInfos.keys()], [3, 4])
    assert.deepStrictEqual([...status.datasets.keys()], [3, 4])
    assert.deepStrictEqual([...status.stages.keys()], ["3.0", "4.0"])
    const running = status.stages.get("4.0")!
    assert.isAtMost(running.tasks.length, 11)
    assert.isTrue(running.tasks.some((t) => t.status === "RUNNING"))
    assert.strictEqual(running.numCompleteTasks, 29)
  })

  // Found by the model (seed -574245226): the job's progress was summed from its stage attempts' records, so a
  // partition done by a failed attempt stopped counting once that attempt was forgotten past the stage limit.
  it("a job's completed partitions outlive its stage attempts' records", () => {
    const status = fold([
      { _tag: "JobStart", jobId: 0, stageIds: [0], stages: [stageInfo(0, 2)], pool: "default", time: 0 },
      { _tag: "StageSubmitted", stageId: 0, stageAttempt: 0, name: "s", tasks: 2, parentIds: [], time: 0 },
      task(0, 1, 0, 0),
      ended(0, 1, true, 1),
      { _tag: "StageCompleted", stageId: 0, stageAttempt: 0, failureReason: "lost", time: 1 },
      { _tag: "StageSubmitted", stageId: 0, stageAttempt: 1, name: "s", tasks: 1, parentIds: [], time: 2 }
    ], { jobs: 1, stages: 1, tasks: 1 })
    assert.deepStrictEqual([...status.stages.keys()], ["0.1"])
    assert.strictEqual(AppStatus.jobProgress(status, status.jobs.get(0)!).numCompletedTasks, 1)
  })

  it("quantiles: min, quartiles and max by nearest rank", () => {
    assert.deepStrictEqual(AppStatus.quantiles([5, 1, 4, 2, 3]), [1, 2, 3, 4, 5])
    assert.deepStrictEqual(AppStatus.quantiles([7]), [7, 7, 7, 7, 7])
    assert.deepStrictEqual(AppStatus.quantiles([]), [0, 0, 0, 0, 0])
  })

  it("model: over any history of jobs, stage attempts, tasks and executors, the counts are the events' counts", () => {
    // A small driver: each step's choice is read as the next event a real driver could send, and the model
    // counts what the status must show.
    type Running = {
      taskId: number
      index: number
      executorId: string
      stageId: number
      attempt: number
      key: string
      jobId: number
    }
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(7), fc.nat(1000)), { maxLength: 200 }),
        fc.record({
          jobs: fc.integer({ min: 1, max: 4 }),
          stages: fc.integer({ min: 1, max: 4 }),
          tasks: fc.integer({ min: 1, max: 30 })
        }),
        (steps, retention) => {
          const status = AppStatus.make(retention)
          const executors: Array<string> = []
          const running: Array<Running> = []
          // Per stage attempt and per executor: tasks running, succeeded, failed and killed.
          const stageCounts = new Map<string, [number, number, number, number]>()
          const executorCounts = new Map<string, [number, number, number]>()
          const jobs: Array<{ jobId: number; stageId: number; attempt: number; done: Set<number>; tasks: number }> = []
          const endedJobs = new Set<number>()
          // The stage attempts that ended (a speculative copy of one of their tasks may still run).
          const over = new Set<string>()
          // The partitions each stage attempt completed.
          const attemptDone = new Map<string, Set<number>>()
          let nextJob = 0
          let nextTask = 0
          let time = 0
          const send = (event: Event) => AppStatus.apply(status, event)
          for (const [kind, pick] of steps) {
            time++
            const live = jobs.filter((j) => !endedJobs.has(j.jobId))
            if (kind === 0 || executors.length === 0) {
              const executorId = `${executors.length + 1}`
              executors.push(executorId)
              executorCounts.set(executorId, [0, 0, 0])
              send({ _tag: "ExecutorAdded", executorId, host: `h${executorId}`, cores: 2, time })
            } else if (kind === 1 || live.length === 0) {
              const jobId = nextJob++
              const stageId = jobId
              const tasks = 1 + (pick % 4)
              jobs.push({ jobId, stageId, attempt: 0, done: new Set(), tasks })
              stageCounts.set(`${stageId}.0`, [0, 0, 0, 0])
              send({
                _tag: "JobStart",
                jobId,
                stageIds: [stageId],
                stages: [stageInfo(stageId, tasks)],
                pool: "default",
                time
              })
              send({ _tag: "StageSubmitted", stageId, stageAttempt: 0, name: "s", tasks, parentIds: [], time })
            } else if (kind <= 3) {
              const job = live[pick % live.length]!
              const missing = [...Array(job.tasks).keys()].filter((i) => !job.done.has(i))
              const index = missing[pick % missing.length]!
              const executorId = executors[pick % executors.length]!
              const key = `${job.stageId}.${job.attempt}`
              running.push({
                taskId: nextTask,
                index,
                executorId,
                stageId: job.stageId,
                attempt: job.attempt,
                key,
                jobId: job.jobId
              })
              stageCounts.get(key)![0]++
              executorCounts.get(executorId)![0]++
              send({
                _tag: "TaskStart",
                stageId: job.stageId,
                stageAttempt: job.attempt,
                taskId: nextTask++,
                index,
                executorId,
                locality: "ANY",
                time
              })
            } else if (kind <= 5 && running.length > 0) {
              const [ending] = running.splice(pick % running.length, 1)
              const outcome = pick % 3 // 0: succeeded, 1: failed, 2: killed
              const { attempt, stageId } = ending!
              const counts = stageCounts.get(ending!.key)!
              counts[0]--
              counts[1 + outcome]++
              const executor = executorCounts.get(ending!.executorId)!
              executor[0]--
              executor[outcome === 0 ? 1 : 2]++
              const job = jobs.find((j) => j.jobId === ending!.jobId)!
              if (outcome === 0) {
                job.done.add(ending!.index)
                attemptDone.set(ending!.key, (attemptDone.get(ending!.key) ?? new Set()).add(ending!.index))
              }
              send({
                _tag: "TaskEnd",
                stageId,
                stageAttempt: attempt,
                taskId: ending!.taskId,
                succeeded: outcome === 0,
                ...(outcome === 0 ? {} : { reason: outcome === 1 ? "Error: boom" : "TaskKilled (stage cancelled)" }),
                metrics: { duration: 1 },
                time
              })
            } else if (kind === 6) {
              // A job whose stage has every partition ends; another fails its attempt, which runs again.
              const job = live[pick % live.length]!
              const key = `${job.stageId}.${job.attempt}`
              if (job.done.size === job.tasks) {
                over.add(key)
                send({ _tag: "StageCompleted", stageId: job.stageId, stageAttempt: job.attempt, time })
                send({ _tag: "JobEnd", jobId: job.jobId, succeeded: true, time })
                endedJobs.add(job.jobId)
              } else if (!running.some((r) => r.key === key)) {
                over.add(key)
                send({
                  _tag: "StageCompleted",
                  stageId: job.stageId,
                  stageAttempt: job.attempt,
                  failureReason: "lost",
                  time
                })
                job.attempt++
                stageCounts.set(`${job.stageId}.${job.attempt}`, [0, 0, 0, 0])
                send({
                  _tag: "StageSubmitted",
                  stageId: job.stageId,
                  stageAttempt: job.attempt,
                  name: "s",
                  tasks: job.tasks,
                  parentIds: [],
                  time
                })
              }
            }
            for (const [key, [active, complete, failed, killed]] of stageCounts) {
              const stage = status.stages.get(key)
              // A stage is forgotten only once it is over — with a copy of a task still running, maybe, as Spark's
              // listener forgets it.
              if (stage === undefined) {
                assert.isTrue(over.has(key), key)
                continue
              }
              assert.deepStrictEqual(
                [stage.numActiveTasks, stage.numCompleteTasks, stage.numFailedTasks, stage.numKilledTasks],
                [active, complete, failed, killed],
                key
              )
              assert.strictEqual(stage.tasks.filter((t) => t.status === "RUNNING").length, active, key)
            }
            for (const [executorId, [active, completed, failed]] of executorCounts) {
              const executor = status.executors.get(executorId)!
              assert.deepStrictEqual([executor.activeTasks, executor.completedTasks, executor.failedTasks], [
                active,
                completed,
                failed
              ])
            }
            for (const job of live) {
              const known = status.jobs.get(job.jobId)
              assert.isDefined(known, `running job ${job.jobId} forgotten`)
              if (endedJobs.has(job.jobId)) continue
              const progress = AppStatus.jobProgress(status, known!)
              assert.strictEqual(
                progress.numActiveTasks,
                running.filter((r) => r.key === `${job.stageId}.${job.attempt}`).length
              )
              const completed = [...attemptDone].filter(([key]) => key.startsWith(`${job.stageId}.`))
                .reduce((sum, [, done]) => sum + done.size, 0)
              assert.strictEqual(progress.numCompletedTasks, Math.min(job.tasks, completed))
            }
            const finished = [...status.jobs.values()].filter((j) => j.status !== "RUNNING")
            assert.isAtMost(finished.length, retention.jobs)
          }
        }
      )
    )
  })
})
