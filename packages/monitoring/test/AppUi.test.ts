// The app UI of a local[2] app, over real HTTP: Spark's monitoring API (checked against the field names a real
// Spark app's API answers with), the pages, live updates and the app's Prometheus metrics.
import { assert, describe, it, layer } from "@effect/vitest"
import { Kindling } from "@kindling/app"
import { LocalMode } from "@kindling/driver"
import { DriverListeners } from "@kindling/monitoring"
import { Polling } from "@kindling/protocol/testing"
import { Effect, Fiber } from "effect"
import parsePrometheus from "parse-prometheus-text-format"
import { driverConfig } from "../../driver/test/fixtures/driverConfig.js"
import { get, getJson, settled } from "./fixtures/http.js"
import sparkKeys from "./fixtures/spark-api-v1-keys.json" with { type: "json" }

const app = LocalMode.layer({
  appName: "ui-test",
  threads: 2,
  driver: driverConfig(1),
  heartbeatIntervalMillis: 200,
  validateState: true,
  listeners: DriverListeners.make({
    ui: {
      host: "127.0.0.1",
      port: 0,
      maxRetries: 0,
      retention: { jobs: 1000, stages: 1000, tasks: 100_000 },
      properties: [["kindling.app.name", "ui-test"], ["kindling.master", "local[2]"]],
      killEnabled: true
    }
  })
})

// Every field we write is one Spark writes; every field Spark always writes, we write too.
const sameFields = (kind: keyof typeof sparkKeys.fields, ours: object) => {
  const spark = sparkKeys.fields[kind]
  const keys = Object.keys(ours)
  assert.deepStrictEqual(keys.filter((key) => !spark.includes(key)), [], `${kind}: fields Spark does not have`)
  const optional = sparkKeys.optional as Record<string, ReadonlyArray<string>>
  assert.deepStrictEqual(
    spark.filter((key) => !keys.includes(key) && !(optional[kind] ?? []).includes(key)),
    [],
    `${kind}: Spark's fields we lack`
  )
}

const scrape = (base: string) =>
  Effect.map(get(`${base}/metrics/prometheus`), (response) => {
    const families = parsePrometheus(response.text)
    const value = (name: string, labels: Record<string, string> = {}) =>
      Number(
        families.find((family) => family.name === name)?.metrics.find((metric) =>
          Object.entries(labels).every(([key, v]) => metric.labels?.[key] === v)
        )?.value ?? Number.NaN
      )
    return { families, value }
  })

layer(app, { timeout: 60_000, excludeTestServices: true })("the app UI of a local app", (it) => {
  it.effect("Spark's /api/v1: the app, its jobs, stages, tasks, executors, cached datasets and environment", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      const base = kc.uiWebUrl!
      const words = kc.parallelize(Array.from({ length: 2000 }, (_, i) => `w${i % 13}`), 6).cache()
      assert.strictEqual(
        yield* words.map((w): [string, number] => [w, 1]).reduceByKey((a, b) => a + b, undefined, 3).count(),
        13
      )

      yield* settled(base)
      const [application] = yield* getJson(`${base}/api/v1/applications`)
      sameFields("ApplicationInfo", application)
      sameFields("ApplicationAttemptInfo", application.attempts[0])
      assert.match(application.id, /^local-\d+$/)
      assert.strictEqual(application.name, "ui-test")
      assert.strictEqual(application.attempts[0].completed, false)
      const api = `${base}/api/v1/applications/${application.id}`

      const jobs = yield* getJson(`${api}/jobs`)
      const job = jobs.find((j: { name: string }) => j.name.startsWith("count"))
      sameFields("JobData", job)
      assert.strictEqual(job.status, "SUCCEEDED")
      assert.strictEqual(job.stageIds.length, 2)
      assert.strictEqual(job.numCompletedStages, 2)
      assert.strictEqual(job.numTasks, 9)
      assert.strictEqual(job.numCompletedTasks, 9)

      const stages = yield* getJson(`${api}/stages`)
      const mapStage = stages.find((s: { stageId: number }) => s.stageId === job.stageIds[0])
      sameFields("StageData", mapStage)
      assert.strictEqual(mapStage.status, "COMPLETE")
      assert.strictEqual(mapStage.numCompleteTasks, 6)
      assert.isAbove(mapStage.shuffleWriteBytes, 0)
      const resultStage = stages.find((s: { stageId: number }) => s.stageId === job.stageIds[1])
      assert.strictEqual(resultStage.shuffleReadBytes, mapStage.shuffleWriteBytes)

      const tasks = yield* getJson(`${api}/stages/${mapStage.stageId}/0/taskList?length=4&sortBy=-runtime`)
      assert.strictEqual(tasks.length, 4)
      sameFields("TaskData", tasks[0])
      sameFields("TaskMetrics", tasks[0].taskMetrics)
      sameFields("ShuffleReadMetrics", tasks[0].taskMetrics.shuffleReadMetrics)
      sameFields("ShuffleWriteMetrics", tasks[0].taskMetrics.shuffleWriteMetrics)
      assert.deepStrictEqual(
        tasks.map((t: { duration: number }) => t.duration),
        [...tasks.map((t: { duration: number }) => t.duration)].sort((a, b) => b - a)
      )
      assert.strictEqual(tasks[0].status, "SUCCESS")

      const [executor] = yield* getJson(`${api}/executors`)
      sameFields("ExecutorSummary", executor)
      assert.strictEqual(executor.id, "driver")
      assert.strictEqual(executor.completedTasks, 9)
      assert.strictEqual(executor.rddBlocks, 6)

      const [cached] = yield* getJson(`${api}/storage/rdd`)
      sameFields("RDDStorageInfo", cached)
      assert.strictEqual(cached.numPartitions, 6)
      assert.strictEqual(cached.numCachedPartitions, 6)
      assert.isAbove(cached.memoryUsed, 0)

      const environment = yield* getJson(`${api}/environment`)
      sameFields("ApplicationEnvironmentInfo", environment)
      assert.deepInclude(environment.sparkProperties, ["kindling.app.name", "ui-test"])

      assert.strictEqual((yield* get(`${base}/api/v1/applications/app-nope/jobs`)).status, 404)
      assert.strictEqual((yield* get(`${api}/stages/999/0/taskList`)).status, 404)
    }))

  it.effect("shuffle reads count their records; a stage served from the cache reads no shuffle, as in Spark", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      const base = kc.uiWebUrl!
      // 6 map tasks write 13 combined records each for 3 reduce tasks; the reduced pairs are cached.
      const counts = kc.parallelize(Array.from({ length: 600 }, (_, i) => `w${i % 13}`), 6)
        .map((w): [string, number] => [w, 1])
        .reduceByKey((a, b) => a + b, undefined, 3)
        .cache()
      assert.strictEqual(yield* counts.count(), 13)
      assert.strictEqual(yield* counts.count(), 13)
      const [first, second] = (yield* settled(base)).sort((a, b) => a.jobId - b.jobId).slice(-2)
      const [application] = yield* getJson(`${base}/api/v1/applications`)
      const api = `${base}/api/v1/applications/${application.id}`
      const stage = (id: number) => getJson(`${api}/stages/${id}/0`)
      const readBy = (id: number) =>
        Effect.map(
          getJson(`${api}/stages/${id}/0/taskList?length=100`),
          (tasks: Array<{ taskMetrics: { shuffleReadMetrics: { recordsRead: number } } }>) =>
            tasks.map((task) => task.taskMetrics.shuffleReadMetrics.recordsRead).reduce((a, b) => a + b, 0)
        )

      const map = yield* stage(first!.stageIds[0]!)
      const reduce = yield* stage(first!.stageIds[1]!)
      assert.isAbove(map.shuffleWriteRecords, 0)
      assert.strictEqual(reduce.shuffleReadBytes, map.shuffleWriteBytes)
      assert.strictEqual(reduce.shuffleReadRecords, map.shuffleWriteRecords)
      assert.strictEqual(yield* readBy(reduce.stageId), map.shuffleWriteRecords)
      assert.include((yield* get(`${base}/stages/stage/?id=${reduce.stageId}&attempt=0`)).text, "Shuffle Read Records")

      // The second job's map stage is skipped and its result stage reads the cached partitions: no shuffle.
      const cached = yield* stage(second!.stageIds.at(-1)!)
      assert.strictEqual(cached.status, "COMPLETE")
      assert.strictEqual(cached.shuffleReadBytes, 0)
      assert.strictEqual(cached.shuffleReadRecords, 0)
      assert.strictEqual(yield* readBy(cached.stageId), 0)
    }))

  it.effect("the pages: jobs, a job with its DAG, a stage with quantiles and paged tasks, storage, environment, executors", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      const base = kc.uiWebUrl!
      // 250 map tasks: three pages of 100.
      yield* kc.range(0, 2500, 1, 250).map((x): [number, number] => [x % 7, x]).reduceByKey(
        (a, b) => a + b,
        undefined,
        2
      ).collect()
      const [job] = yield* settled(base)

      const jobsPage = yield* get(`${base}/jobs/`)
      assert.strictEqual(jobsPage.status, 200)
      assert.include(jobsPage.type, "text/html")
      assert.include(jobsPage.text, `href="jobs/job/?id=${job.jobId}"`)
      assert.include(jobsPage.text, "data-live=\"events\"")
      assert.include(jobsPage.text, `<span class="live" hidden>live</span>`)

      const jobPage = (yield* get(`${base}/jobs/job/?id=${job.jobId}`)).text
      assert.strictEqual(jobPage.match(/<g class="cluster[^"]*" data-stage-id=/g)?.length, 2)
      assert.include(jobPage, "ShuffledDataset")

      const [mapStage] = job.stageIds
      const stagePage = (yield* get(`${base}/stages/stage/?id=${mapStage}&attempt=0&task.page=3`)).text
      assert.include(stagePage, "Page 3 of 3 (250 tasks)")
      assert.strictEqual(stagePage.match(/<tbody>[\s\S]*?<\/tbody>/g)!.at(-1)!.match(/<tr>/g)!.length, 50)
      assert.include(stagePage, "25th percentile")
      assert.include(stagePage, "Shuffle Write Size")

      for (const path of ["/stages/", "/storage/", "/environment/", "/executors/"]) {
        assert.strictEqual((yield* get(`${base}${path}`)).status, 200, path)
      }
      assert.strictEqual((yield* get(`${base}/jobs/job/?id=9999`)).status, 404)
      assert.strictEqual((yield* get(`${base}/jobs/job/?id=nope`)).status, 400)
      assert.strictEqual((yield* get(`${base}/healthz`)).text, "ok")
    }))

  it.effect("a page's events stream says when something happened", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      const base = kc.uiWebUrl!
      const controller = new AbortController()
      const response = yield* Effect.promise(() => fetch(`${base}/events`, { signal: controller.signal }))
      assert.include(response.headers.get("content-type"), "text/event-stream")
      const reader = response.body!.getReader()
      const versions: Array<number> = []
      const read = Effect.promise(async () => {
        let text = ""
        while (versions.length < 2) {
          const { done, value } = await reader.read()
          if (done) break
          text += new TextDecoder().decode(value)
          for (const match of text.matchAll(/^data: (\d+)$/gm)) versions.push(Number(match[1]))
          text = text.slice(text.lastIndexOf("\n\n") + 2)
        }
      })
      yield* kc.range(0, 10, 1, 2).count()
      yield* read.pipe(Effect.timeout("10 seconds"))
      controller.abort()
      assert.isAbove(versions[1]!, versions[0]!)
    }))

  it.effect("a running job's kill button fails its action; a kill from another site is refused", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      const base = kc.uiWebUrl!
      // Twenty tasks of 200 ms on two threads: two seconds, unless killed.
      const running = yield* Effect.fork(
        kc.range(0, 20, 1, 20).map((x) => {
          const until = Date.now() + 200
          while (Date.now() < until) {
            // busy
          }
          return x
        }).count()
      )
      const [application] = yield* getJson(`${base}/api/v1/applications`)
      const [job] = yield* Polling.eventually(
        getJson(`${base}/api/v1/applications/${application.id}/jobs?status=running`),
        (jobs: Array<{ jobId: number }>) => jobs.length === 1
      )
      const form = { method: "POST", body: new URLSearchParams({ id: String(job.jobId), terminate: "true" }) }
      const forged = yield* Effect.promise(() =>
        fetch(`${base}/jobs/job/kill/`, { ...form, headers: { origin: "http://evil.example" } })
      )
      assert.strictEqual(forged.status, 403)
      const killed = yield* Effect.promise(() =>
        fetch(`${base}/jobs/job/kill/`, { ...form, headers: { origin: base }, redirect: "manual" })
      )
      assert.strictEqual(killed.status, 303)
      const failure = yield* Effect.flip(Fiber.join(running))
      assert.strictEqual(failure._tag, "JobFailed")
      assert.include(failure.message, `Job ${job.jobId} killed via the web UI`)
      const ended = yield* settled(base)
      assert.strictEqual(ended.find((j) => j.jobId === job.jobId)?.status, "FAILED")
    }))

  it.effect("/metrics/prometheus parses as Prometheus text, and its counters move as a job runs", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      const base = kc.uiWebUrl!
      yield* kc.range(0, 10, 1, 2).count()
      yield* settled(base)
      const before = yield* scrape(base)
      const appId = (yield* getJson(`${base}/api/v1/applications`))[0].id
      const tasksBefore = before.value("kindling_app_tasks_ended_total", { app: appId, result: "succeeded" })
      yield* kc.range(0, 100, 1, 5).map((x): [number, number] => [x % 3, x]).reduceByKey((a, b) => a + b).count()
      yield* settled(base)
      const after = yield* scrape(base)
      assert.strictEqual(
        after.value("kindling_app_tasks_ended_total", { app: appId, result: "succeeded" }),
        tasksBefore + 10
      )
      assert.isAbove(
        after.value("kindling_app_shuffle_write_bytes_total", { app: appId }),
        before.value("kindling_app_shuffle_write_bytes_total", { app: appId }) || 0
      )
      const durations = after.families.find((family) => family.name === "kindling_app_task_duration_seconds")!
      assert.strictEqual(durations.type, "HISTOGRAM")
      assert.strictEqual(after.value("kindling_app_jobs_active", { app: appId }), 0)
      assert.strictEqual(after.value("kindling_app_executors_active", { app: appId }), 1)
      // Only this app's series: no Effect runtime metrics, no other node's.
      assert.deepStrictEqual(after.families.filter((family) => !family.name.startsWith("kindling_app_")), [])
    }))
})

describe("an app with its UI off", () => {
  it.effect("has no UI address", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      assert.isUndefined(kc.uiWebUrl)
    }).pipe(
      Effect.provide(
        LocalMode.layer({ appName: "no-ui", threads: 1, driver: driverConfig(1), heartbeatIntervalMillis: 10_000 })
      )
    ))
})
