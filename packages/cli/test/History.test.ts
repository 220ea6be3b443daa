// `kindling history` on real processes: an app run on a cluster with its event log on, a history server that
// picks the log up and serves the app's pages and /api/v1, and the master's page linking the finished app there.
import { assert, describe, it } from "@effect/vitest"
import { Deadlines, Polling } from "@kindling/protocol/testing"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { cluster, freePort, run, start, temporaryDirectory } from "./fixtures/cluster.js"
import { uiUrl } from "./fixtures/ui.js"

const get = (url: string) =>
  Effect.promise(async () => {
    const response = await fetch(url)
    return { status: response.status, text: await response.text() }
  })
const getJson = (url: string) => Effect.map(get(url), (response) => JSON.parse(response.text))

const source = `import { App, Kindling } from "@kindling/app"
import { Effect } from "effect"
export default App.make(() =>
  Effect.gen(function*() {
    const kc = yield* Kindling
    yield* kc.range(0, 1000, 1, 4).map((n) => [n % 7, n]).reduceByKey((a, b) => a + b, undefined, 2).collect()
  })
)
`

describe("kindling history", () => {
  it.scopedLive(
    "serves a cluster app's log, and the master links the finished app to it",
    () =>
      Effect.gen(function*() {
        const logs = yield* temporaryDirectory
        const historyPort = yield* freePort
        const historyUrl = `http://127.0.0.1:${historyPort}`
        const { dir, master } = yield* cluster(1, ["--conf", `kindling.history.ui.url=${historyUrl}`])
        const history = yield* start([
          "history",
          "--host",
          "127.0.0.1",
          "--port",
          String(historyPort),
          "--conf",
          "kindling.history.fs.update.interval=1s",
          logs
        ])
        yield* history.waitFor(/Kindling history server at/)
        const masterUi = yield* uiUrl(master.node, "master")

        const appPath = Path.join(dir, "logged-app.ts")
        Fs.writeFileSync(appPath, source)
        const submitted = yield* run([
          "submit",
          "--master",
          master.url,
          "--conf",
          "kindling.eventLog.enabled=true",
          "--conf",
          `kindling.eventLog.dir=file:${logs}`,
          "--conf",
          "kindling.ui.enabled=false",
          appPath
        ])
        assert.strictEqual(submitted.code, 0, submitted.stderr)
        const [logName] = Fs.readdirSync(logs)
        assert.match(logName!, /^app-\d{14}-\d{4}$/)

        const [app] = yield* Polling.eventually(
          getJson(`${historyUrl}/api/v1/applications`),
          (apps: Array<{ id: string; name: string; attempts: Array<{ completed: boolean }> }>) =>
            apps.length === 1 && apps[0]!.attempts[0]!.completed,
          { timeout: "20 seconds" }
        )
        assert.strictEqual(app.id, logName)
        assert.strictEqual(app.name, "logged-app.ts")
        const jobs = yield* getJson(`${historyUrl}/api/v1/applications/${app.id}/jobs`)
        assert.deepStrictEqual(jobs.map((job: { status: string; numTasks: number }) => [job.status, job.numTasks]), [[
          "SUCCEEDED",
          6
        ]])
        const executors = yield* getJson(`${historyUrl}/api/v1/applications/${app.id}/allexecutors`)
        assert.strictEqual(executors.length, 1)
        const list = yield* get(historyUrl)
        assert.include(list.text, "Completed Applications (1)")
        assert.include(list.text, `/history/${app.id}/jobs/`)
        const page = yield* get(`${historyUrl}/history/${app.id}/stages/`)
        assert.strictEqual(page.status, 200)
        assert.include(page.text, "Completed Stages (2)")
        // A finished app's pages are a record: nothing updates them, and no badge says they are live.
        assert.notInclude(page.text, "data-live")
        assert.notMatch(page.text, /class="live"/)

        // The master lists the app as completed, its name linking to its history page.
        const masterPage = yield* Polling.eventually(
          get(masterUi),
          (response) => response.text.includes(`${historyUrl}/history/${app.id}/jobs/`),
          { timeout: "20 seconds" }
        )
        assert.include(masterPage.text, "logged-app.ts")
      }),
    Deadlines.scaled(120_000)
  )

  it.scopedLive(
    "lists the log of an app killed mid-run as incomplete, up to its last whole event",
    () =>
      Effect.gen(function*() {
        const logs = yield* temporaryDirectory
        const dir = yield* temporaryDirectory
        const appPath = Path.join(dir, "stuck-app.ts")
        Fs.writeFileSync(
          appPath,
          source.replace(
            ".collect()\n",
            ".collect()\n    yield* Effect.log(\"first job done\")\n    yield* Effect.never\n"
          )
        )
        const driver = yield* start([
          "submit",
          "--master",
          "local[2]",
          "--conf",
          "kindling.eventLog.enabled=true",
          "--conf",
          `kindling.eventLog.dir=${logs}`,
          "--conf",
          "kindling.ui.enabled=false",
          appPath
        ])
        yield* driver.waitFor(/first job done/, 60_000)
        // Its log has the job's end once the writer has caught up; then the driver dies without a word.
        const [logName] = yield* Polling.eventually(
          Effect.sync(() => Fs.readdirSync(logs)),
          (names) =>
            names.length === 1 && Fs.readFileSync(Path.join(logs, names[0]!), "utf8").includes("SparkListenerJobEnd"),
          { timeout: "10 seconds" }
        )
        assert.match(logName!, /^local-\d+\.inprogress$/)
        yield* driver.kill("SIGKILL")
        yield* driver.exited

        const history = yield* start(["history", "--host", "127.0.0.1", "--port", "0", logs])
        const [, url] = yield* history.waitFor(/The history server is at (http:\/\/\S+)/)
        const [app] = yield* getJson(`${url}/api/v1/applications`)
        assert.strictEqual(`${app.id}.inprogress`, logName)
        assert.isFalse(app.attempts[0].completed)
        const jobs = yield* getJson(`${url}/api/v1/applications/${app.id}/jobs`)
        assert.deepStrictEqual(jobs.map((job: { status: string }) => job.status), ["SUCCEEDED"])
        assert.include((yield* get(url!)).text, "Incomplete Applications (1)")
        // Its pages follow its log as it grows, and say it is incomplete rather than live.
        const page = (yield* get(`${url}/history/${app.id}/jobs/`)).text
        assert.include(page, `data-live="events"`)
        assert.include(page, `<span class="live" hidden>incomplete</span>`)
      }),
    Deadlines.scaled(120_000)
  )

  it.live("refuses a log folder that does not exist", () =>
    Effect.gen(function*() {
      const result = yield* run(["history", "--port", "0", "/nonexistent/kindling-events"])
      assert.strictEqual(result.code, 1)
      assert.include(result.stderr, "The event log folder /nonexistent/kindling-events does not exist")
    }), Deadlines.scaled(60_000))
})
