// Event logs in Spark's format: a real Spark log reads with Kindling's schemas; a local app's log reads line by
// line with them, and the history server replays it into the same /api/v1 answers the live app UI gave; gzip and
// rolling logs read the same as plain ones; a log cut short reads up to its last whole line, as incomplete; and
// the history server follows a growing log.
import { afterAll, assert, describe, it } from "@effect/vitest"
import { type AppEvents, Kindling } from "@kindling/app"
import { LocalMode } from "@kindling/driver"
import { Html } from "@kindling/kernel/web"
import {
  DriverListeners,
  EventLogCodec,
  EventLogReader,
  EventLogWriter,
  HistoryServer,
  SparkEvents
} from "@kindling/monitoring"
import { Deadlines } from "@kindling/protocol/testing"
import { Effect, Either, Logger, Schema } from "effect"
import * as fc from "effect/FastCheck"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Url from "node:url"
import * as Zlib from "node:zlib"
import { driverConfig } from "../../driver/test/fixtures/driverConfig.js"
import { get, getJson, settled } from "./fixtures/http.js"

const retention = { jobs: 1000, stages: 1000, tasks: 100_000 }
const sparkLog = Url.fileURLToPath(new URL("./fixtures/spark-4.3.0-event-log.jsonl", import.meta.url))
// The folders the tests make, removed once they have all run.
const made: Array<string> = []
const temporary = (prefix: string) => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), prefix))
  made.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of made) Fs.rmSync(dir, { recursive: true, force: true })
})
const lines = (text: string) => text.split("\n").filter((line) => line !== "")
const decode = Schema.decodeUnknownEither(SparkEvents.SparkEvent)

// What a history server shows of a log, as the monitoring API says it.
const served = (dir: string, retainedApplications = 50) =>
  Effect.gen(function*() {
    const server = yield* HistoryServer.start({
      dir,
      host: "127.0.0.1",
      port: 0,
      maxRetries: 0,
      updateIntervalMillis: 60_000,
      retention,
      retainedApplications
    })
    const apps = yield* getJson(`${server.url}/api/v1/applications`)
    return {
      server,
      apps,
      api: (appId: string, path: string) => getJson(`${server.url}/api/v1/applications/${appId}/${path}`)
    }
  })

describe("Spark's event-log format", () => {
  it("every event of a real Spark 4.3 log that Kindling reads decodes with its schemas, and replays", () => {
    const events = lines(Fs.readFileSync(sparkLog, "utf8")).map((line) => JSON.parse(line) as { Event: string })
    const known = events.filter((event) => SparkEvents.knownEvents.has(event.Event))
    for (const event of known) {
      const decoded = decode(event)
      assert.isTrue(Either.isRight(decoded), `${event.Event}: ${Either.isLeft(decoded) ? decoded.left.message : ""}`)
    }
    assert.includeMembers([...new Set(known.map((event) => event.Event))], [
      "SparkListenerApplicationStart",
      "SparkListenerJobStart",
      "SparkListenerStageSubmitted",
      "SparkListenerTaskStart",
      "SparkListenerTaskEnd",
      "SparkListenerStageCompleted",
      "SparkListenerJobEnd",
      "SparkListenerExecutorAdded",
      "SparkListenerApplicationEnd"
    ])
    // The Python job behind it: a reduceByKey (two stages), a count of the cached input, a job that fails.
    const log = EventLogReader.read(sparkLog, retention)
    assert.strictEqual(log.badLines, 0)
    assert.isTrue(log.complete)
    assert.strictEqual(log.replay.name, "oracle")
    assert.deepStrictEqual([...log.status.jobs.values()].map((job) => job.status), ["SUCCEEDED", "SUCCEEDED", "FAILED"])
    assert.strictEqual(log.status.stages.size, 4)
    const failed = [...log.status.stages.values()].find((stage) => stage.status === "FAILED")
    assert.match(failed?.failureReason ?? "", /ZeroDivisionError|PYTHON_EXCEPTION/)
  })
})

describe("reading a log", () => {
  const whole = lines(Fs.readFileSync(sparkLog, "utf8"))
  const reference = EventLogReader.read(sparkLog, retention)
  const junk = fc.oneof(
    fc.string(),
    fc.json(),
    fc.record({ Event: fc.constantFrom(...SparkEvents.knownEvents), "Job ID": fc.anything() }).map((e) =>
      JSON.stringify(e)
    )
  ).filter((line) => !line.includes("\n"))

  // Lines that are not JSON, or events of a known kind in the wrong shape, are counted and skipped; the log's
  // good events fold as they would alone.
  it.prop("never fails on lines of junk, and folds the good events around them", [
    fc.array(fc.tuple(fc.nat(whole.length), junk), { maxLength: 20 })
  ], ([insertions]) => {
    const mixed = [...whole]
    for (const [at, line] of [...insertions].sort(([a], [b]) => b - a)) mixed.splice(at, 0, line)
    const dir = temporary("kindling-junk-")
    Fs.writeFileSync(Path.join(dir, "local-1"), `${mixed.join("\n")}\n`)
    const log = EventLogReader.read(Path.join(dir, "local-1"), retention)
    Fs.rmSync(dir, { recursive: true })
    const junkLines = insertions.filter(([, line]) => {
      if (line.trim() === "") return false
      try {
        const json = JSON.parse(line)
        return SparkEvents.knownEvents.has(json?.Event) && Either.isLeft(decode(json))
      } catch {
        return true
      }
    }).length
    assert.strictEqual(log.badLines, junkLines)
    assert.deepStrictEqual(
      [...log.status.jobs.values()].map((job) => job.status),
      [...reference.status.jobs.values()].map((job) => job.status)
    )
    assert.strictEqual(log.status.stages.size, reference.status.stages.size)
  }, { fastCheck: { numRuns: 50 } })
})

describe("a local app's event log", () => {
  it.live("that cannot be written is said, and the app goes on without it", () =>
    Effect.gen(function*() {
      const notAFolder = Path.join(temporary("kindling-not-a-folder-"), "file")
      Fs.writeFileSync(notAFolder, "")
      const said: Array<string> = []
      const listening = Logger.replace(
        Logger.defaultLogger,
        Logger.make(({ message }) => said.push(Array.isArray(message) ? message.join(" ") : String(message)))
      )
      const app = LocalMode.layer({
        appName: "unlogged",
        threads: 2,
        driver: driverConfig(1),
        heartbeatIntervalMillis: 200,
        listeners: DriverListeners.make({ eventLog: { dir: notAFolder, compress: false, properties: [] } })
      })
      const counted = yield* Effect.flatMap(Kindling, (kc) => kc.parallelize([1, 2, 3], 3).count()).pipe(
        Effect.provide(app),
        Effect.provide(listening)
      )
      assert.strictEqual(counted, 3)
      assert.isTrue(
        said.some((line) => line.includes(`Cannot start the event log in ${notAFolder}`) && line.includes("goes on")),
        said.join("\n")
      )
      assert.strictEqual(Fs.readFileSync(notAFolder, "utf8"), "")
    }), Deadlines.scaled(30_000))

  it.live(
    "reads line by line with Spark's schemas, and the history server answers /api/v1 as the live UI did",
    () =>
      Effect.gen(function*() {
        const dir = temporary("kindling-events-")
        const app = LocalMode.layer({
          appName: "logged",
          threads: 2,
          driver: driverConfig(1),
          heartbeatIntervalMillis: 200,
          listeners: DriverListeners.make({
            ui: {
              host: "127.0.0.1",
              port: 0,
              maxRetries: 0,
              retention,
              properties: [["kindling.app.name", "logged"]],
              killEnabled: false
            },
            eventLog: { dir, compress: false, properties: [["kindling.app.name", "logged"]] }
          })
        })
        const live = yield* Effect.gen(function*() {
          const kc = yield* Kindling
          const words = kc.parallelize(Array.from({ length: 600 }, (_, i) => `w${i % 11}`), 4).cache()
          yield* words.map((w): [string, number] => [w, 1]).reduceByKey((a, b) => a + b, undefined, 3).collect()
          yield* words.count()
          const failing = kc.parallelize([1, 2, 3, 4], 2).map((n) => {
            if (n === 4) throw new Error("four is right out")
            return n
          })
          yield* Effect.either(failing.collect())
          yield* settled(kc.uiWebUrl!)
          const [application] = yield* getJson(`${kc.uiWebUrl}/api/v1/applications`)
          const api = (path: string) => getJson(`${kc.uiWebUrl}/api/v1/applications/${application.id}/${path}`)
          return {
            appId: application.id as string,
            jobs: yield* api("jobs"),
            stages: yield* api("stages"),
            tasks: yield* api("stages/0/0/taskList?length=100"),
            storage: yield* api("storage/rdd")
          }
        }).pipe(Effect.provide(app))

        // The app has ended: its log is complete, and each line is one of Spark's events, in Spark's shape.
        assert.deepStrictEqual(Fs.readdirSync(dir), [live.appId])
        const written = lines(Fs.readFileSync(Path.join(dir, live.appId), "utf8"))
        for (const line of written) assert.isTrue(Either.isRight(decode(JSON.parse(line))), line)
        const kinds = written.map((line) => (JSON.parse(line) as { Event: string }).Event)
        assert.strictEqual(kinds[0], "SparkListenerLogStart")
        assert.strictEqual(kinds.at(-1), "SparkListenerApplicationEnd")
        assert.strictEqual(kinds.filter((kind) => kind === "SparkListenerJobStart").length, 3)

        const history = yield* served(dir)
        assert.strictEqual(history.apps.length, 1)
        assert.strictEqual(history.apps[0].id, live.appId)
        assert.isTrue(history.apps[0].attempts[0].completed)
        assert.deepStrictEqual(yield* history.api(live.appId, "jobs"), live.jobs)
        assert.deepStrictEqual(yield* history.api(live.appId, "stages"), live.stages)
        assert.deepStrictEqual(yield* history.api(live.appId, "stages/0/0/taskList?length=100"), live.tasks)
        // The log goes on to the app's end, when its executor went and its cached partitions with it.
        assert.deepStrictEqual(
          yield* history.api(live.appId, "storage/rdd"),
          live.storage.map((dataset: object) => ({ ...dataset, numCachedPartitions: 0, memoryUsed: 0, diskUsed: 0 }))
        )
        const [executor] = yield* history.api(live.appId, "allexecutors")
        assert.strictEqual(executor.id, "driver")
        assert.strictEqual(executor.hostPort, "localhost")
        assert.isFalse(executor.isActive)
        assert.deepStrictEqual(
          live.jobs.map((job: { status: string }) => job.status),
          ["FAILED", "SUCCEEDED", "SUCCEEDED"]
        )

        // Its pages, under the history server's path for it. A finished app's clock stopped at its end: its uptime is
        // its duration, however long after it is looked at.
        yield* Effect.sleep("400 millis")
        const jobsPage = yield* get(`${history.server.url}/history/${live.appId}/jobs/`)
        assert.strictEqual(jobsPage.status, 200)
        assert.include(
          jobsPage.text,
          `<strong>Total Uptime:</strong>${Html.duration(history.apps[0].attempts[0].duration)}`
        )
        assert.include(jobsPage.text, `<base href="/history/${live.appId}/">`)
        assert.include(jobsPage.text, "Failed Jobs (1)")
        const stagePage = yield* get(`${history.server.url}/history/${live.appId}/stages/stage/?id=0&attempt=0`)
        assert.strictEqual(stagePage.status, 200)
        const list = yield* get(history.server.url)
        assert.include(list.text, live.appId)
        assert.include(list.text, "Completed Applications (1)")
        assert.strictEqual((yield* get(`${history.server.url}/history/app-none/jobs/`)).status, 404)
        assert.strictEqual((yield* get(`${history.server.url}/api/v1/applications/app-none/jobs`)).status, 404)

        // The same events written gzip'd and rolling (small files) read back the same.
        const events = replayed(Path.join(dir, live.appId))
        for (
          const options of [{ compress: true }, { compress: false, rollingMaxFileSize: 2048 }, {
            compress: true,
            rollingMaxFileSize: 2048
          }]
        ) {
          const other = temporary("kindling-events-")
          yield* rewrite(events, other, live.appId, options)
          const names = Fs.readdirSync(other)
          if (options.rollingMaxFileSize !== undefined) {
            assert.deepStrictEqual(names, [`eventlog_v2_${live.appId}`])
            const files = Fs.readdirSync(Path.join(other, names[0]!))
            assert.include(files, `appstatus_${live.appId}`)
            assert.isAbove(files.filter((name) => name.startsWith("events_")).length, 2)
          } else {
            assert.deepStrictEqual(names, [`${live.appId}.gz`])
          }
          const again = yield* served(other)
          assert.strictEqual(again.apps[0].id, live.appId, JSON.stringify(options))
          assert.deepStrictEqual(yield* again.api(live.appId, "jobs"), live.jobs)
          assert.deepStrictEqual(yield* again.api(live.appId, "stages"), live.stages)
        }
      }).pipe(Effect.scoped),
    Deadlines.scaled(60_000)
  )
})

// A log's events as the app emitted them, and its description.
const replayed = (path: string) => {
  const replay = EventLogCodec.makeReplay()
  const events: Array<AppEvents.AppEvent> = []
  for (const line of lines(Fs.readFileSync(path, "utf8"))) {
    const decoded = decode(JSON.parse(line))
    if (Either.isRight(decoded)) events.push(...EventLogCodec.replay(replay, decoded.right))
  }
  return { replay, events }
}

// Writes the same events again, with other options, as the app's writer would.
const rewrite = (
  { events, replay }: ReturnType<typeof replayed>,
  dir: string,
  appId: string,
  options: { readonly compress: boolean; readonly rollingMaxFileSize?: number }
) =>
  Effect.gen(function*() {
    const log = yield* EventLogWriter.start(
      { dir, properties: replay.properties, ...options },
      { name: replay.name, user: replay.user, startTime: replay.startTime, version: replay.version }
    )
    // Some before the app has its id, the rest after, in batches as the driver makes them.
    log.add(events.slice(0, 5))
    log.setAppId(appId)
    for (let i = 5; i < events.length; i += 7) log.add(events.slice(i, i + 7))
  }).pipe(Effect.scoped)

describe("a log cut short", () => {
  const whole = lines(Fs.readFileSync(sparkLog, "utf8"))
  // Cut in the middle of a line past the second job's start: what a crash leaves.
  const cutAt = whole.slice(0, whole.findIndex((line) => line.includes("\"Job ID\":1,")) + 3).join("\n").length + 40
  const text = `${whole.join("\n")}\n`.slice(0, cutAt)

  it("reads up to its last whole line, as incomplete, plain or gzip'd", () => {
    for (
      const [name, bytes] of [["local-1.inprogress", Buffer.from(text)], [
        "local-2.gz.inprogress",
        Zlib.gzipSync(text)
      ]] as const
    ) {
      const dir = temporary("kindling-cut-")
      // A gzip stream cut short too: its last bytes missing.
      Fs.writeFileSync(Path.join(dir, name), name.includes(".gz") ? bytes.subarray(0, bytes.length - 6) : bytes)
      const log = EventLogReader.read(Path.join(dir, name), retention)
      assert.isFalse(log.complete, name)
      assert.strictEqual(log.badLines, 0, name)
      assert.strictEqual(log.status.jobs.size, 2, name)
      assert.strictEqual(log.status.jobs.get(1)?.status, "RUNNING", name)
    }
  })

  it.live(
    "the history server lists it as incomplete, and follows it as it grows and ends",
    () =>
      Effect.gen(function*() {
        const dir = temporary("kindling-growing-")
        Fs.writeFileSync(Path.join(dir, "local-1796383708124.inprogress"), text)
        const history = yield* served(dir)
        assert.isFalse(history.apps[0].attempts[0].completed)
        assert.strictEqual((yield* history.api("local-1796383708124", "jobs")).length, 2)
        assert.include((yield* get(history.server.url)).text, "Incomplete Applications (1)")
        // The rest of the log arrives, and its app ends it.
        Fs.appendFileSync(Path.join(dir, "local-1796383708124.inprogress"), `${whole.join("\n")}\n`.slice(cutAt))
        Fs.renameSync(Path.join(dir, "local-1796383708124.inprogress"), Path.join(dir, "local-1796383708124"))
        yield* history.server.refresh
        const [app] = yield* getJson(`${history.server.url}/api/v1/applications?status=completed`)
        assert.strictEqual(app.id, "local-1796383708124")
        const jobs = yield* history.api("local-1796383708124", "jobs")
        assert.deepStrictEqual(jobs.map((job: { status: string }) => job.status), ["FAILED", "SUCCEEDED", "SUCCEEDED"])
      }).pipe(Effect.scoped),
    Deadlines.scaled(30_000)
  )

  it.live(
    "the history server keeps kindling.history.retainedApplications finished apps in memory, and reads the others " +
      "again when asked",
    () =>
      Effect.gen(function*() {
        const dir = temporary("kindling-retained-")
        const ids = ["local-1", "local-2", "local-3"]
        const log = Fs.readFileSync(sparkLog, "utf8")
        for (const id of ids) Fs.writeFileSync(Path.join(dir, id), log.replaceAll("local-1796383708124", id))
        const history = yield* served(dir, 1)
        assert.deepStrictEqual(history.apps.map((app: { id: string }) => app.id).sort(), ids)
        assert.strictEqual(history.server.replaysInMemory(), 1)
        const expected = yield* history.api("local-1", "jobs")
        assert.strictEqual(expected.length, 3)
        // Each app's pages answer the same whether its log was still in memory or had to be read again.
        for (const id of [...ids, ...ids]) {
          assert.deepStrictEqual(yield* history.api(id, "jobs"), expected, id)
          assert.strictEqual(history.server.replaysInMemory(), 1)
        }
        assert.include((yield* get(history.server.url)).text, "Completed Applications (3)")
      }).pipe(Effect.scoped),
    Deadlines.scaled(30_000)
  )
})
