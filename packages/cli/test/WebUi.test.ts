// The master's and workers' web UIs on a real cluster (processes on 127.0.0.1): Spark's /json keys, a driver
// killed from the master's page (and a forged kill refused), executor logs read in byte ranges, and metrics
// that Prometheus can read.
import { assert, describe, it } from "@effect/vitest"
import { Deadlines, Polling } from "@kindling/protocol/testing"
import { Effect } from "effect"
import * as Fs from "node:fs"
import parsePrometheus from "parse-prometheus-text-format"
import {
  activeDriver,
  app,
  eventually,
  forever,
  run,
  start,
  startMaster,
  startWorker,
  submitArgs,
  temporaryDirectory
} from "./fixtures/cluster.js"
import { uiApp, uiUrl } from "./fixtures/ui.js"

const getJson = (url: string) => Effect.promise(() => fetch(url).then((response) => response.json()))
const get = (url: string, init?: RequestInit) =>
  Effect.promise(async () => {
    const response = await fetch(url, { redirect: "manual", ...init })
    return { status: response.status, text: await response.text() }
  })

// Reference §6.3: the keys of Spark's writeMasterState and its parts, exactly.
const masterKeys = [
  "url",
  "workers",
  "aliveworkers",
  "cores",
  "coresused",
  "memory",
  "memoryused",
  "resources",
  "resourcesused",
  "activeapps",
  "completedapps",
  "activedrivers",
  "completeddrivers",
  "status"
]
const workerKeys = [
  "id",
  "host",
  "port",
  "webuiaddress",
  "cores",
  "coresused",
  "coresfree",
  "memory",
  "memoryused",
  "memoryfree",
  "resources",
  "resourcesused",
  "resourcesfree",
  "state",
  "lastheartbeat"
]
const appKeys = [
  "id",
  "starttime",
  "name",
  "cores",
  "user",
  "memoryperexecutor",
  "memoryperslave",
  "resourcesperexecutor",
  "resourcesperslave",
  "submitdate",
  "state",
  "duration"
]
const driverKeys = ["id", "starttime", "state", "cores", "memory", "resources", "submitdate", "worker", "mainclass"]
const workerStateKeys = [
  "id",
  "masterurl",
  "masterwebuiurl",
  "cores",
  "coresused",
  "memory",
  "memoryused",
  "resources",
  "resourcesused",
  "executors",
  "finishedexecutors"
]
const executorKeys = ["id", "memory", "resources", "appid", "appdesc"]
const appDescKeys = [
  "name",
  "cores",
  "memoryperexecutor",
  "resourcesperexecutor",
  "memoryperslave",
  "resourcesperslave",
  "user",
  "command"
]

const keysOf = (value: object) => Object.keys(value).sort()
const sorted = (keys: ReadonlyArray<string>) => [...keys].sort()

const metric = (text: string, name: string, labels: Record<string, string> = {}) =>
  Number(
    parsePrometheus(text).find((family) => family.name === name)?.metrics.find((m) =>
      Object.entries(labels).every(([key, value]) => m.labels?.[key] === value)
    )?.value ?? Number.NaN
  )

describe("the master's and workers' web UIs", () => {
  it.scopedLive(
    "answer Spark's /json, kill a driver from the page, serve executor logs in ranges, and export metrics",
    () =>
      Effect.gen(function*() {
        const dir = yield* temporaryDirectory
        const master = yield* startMaster()
        const masterUi = yield* uiUrl(master.node, "master")
        const workers = [
          yield* startWorker(master.url, `${dir}/worker-0`),
          yield* startWorker(master.url, `${dir}/worker-1`)
        ]
        const workerUis = yield* Effect.forEach(workers, (worker) => uiUrl(worker.node, "worker"))

        // A driver in cluster mode that runs until killed, and an app in client mode that holds its executors.
        const submitted = yield* run(
          submitArgs(master.url, "--supervise", app(dir, "forever.mjs", forever), `${dir}/pids`)
        )
        const driverId = submitted.stdout.trim()
        assert.match(driverId, /^driver-/, submitted.stderr)
        const done = `${dir}/done`
        const client = yield* start(["submit", "--master", master.url, ...uiApp.conf, uiApp.path(dir), done])
        yield* client.waitFor(/shuffled: 13 keys/, 60_000)
        yield* eventually(
          master.url,
          (state) => state.activeDrivers.find((d) => d.id === driverId && d.state === "RUNNING")
        )

        const json = yield* getJson(`${masterUi}/json`)
        assert.deepStrictEqual(keysOf(json), sorted(masterKeys))
        assert.strictEqual(json.url, master.url)
        assert.strictEqual(json.aliveworkers, 2)
        assert.strictEqual(json.status, "ALIVE")
        for (const worker of json.workers) assert.deepStrictEqual(keysOf(worker), sorted(workerKeys))
        assert.sameMembers(json.workers.map((w: { webuiaddress: string }) => w.webuiaddress), workerUis)
        assert.deepStrictEqual(keysOf(json.activeapps[0]), sorted(appKeys))
        assert.strictEqual(json.activeapps[0].state, "RUNNING")
        assert.match(json.activeapps[0].submitdate, /^\w{3} \w{3} \d{2} \d{2}:\d{2}:\d{2} UTC \d{4}$/)
        assert.deepStrictEqual(keysOf(json.activedrivers[0]), sorted(driverKeys))
        assert.typeOf(json.activedrivers[0].starttime, "string")
        assert.strictEqual(json.cores, 4)
        assert.strictEqual(
          json.coresused,
          json.workers.reduce((n: number, w: { coresused: number }) => n + w.coresused, 0)
        )

        // The worker running an executor of the app: its /json, and the executor's stderr read in pieces.
        const states = yield* Effect.forEach(workerUis, (url) => getJson(`${url}/json`))
        for (const state of states) assert.deepStrictEqual(keysOf(state), sorted(workerStateKeys))
        const index = states.findIndex((state) => state.executors.length > 0)
        const executor = states[index].executors[0]
        assert.deepStrictEqual(keysOf(executor), sorted(executorKeys))
        assert.deepStrictEqual(keysOf(executor.appdesc), sorted(appDescKeys))
        assert.strictEqual(states[index].masterwebuiurl, masterUi)
        const log = `${workerUis[index]}/log?appId=${executor.appid}&executorId=${executor.id}&logType=stderr`
        // An executor may still be starting (the job did not need it): its log is read once it has registered.
        const { text: whole } = yield* Polling.eventually(
          get(`${log}&offset=0&byteLength=1000000`),
          (response) => response.text.includes("Successfully registered with driver"),
          { timeout: "30 seconds" }
        )
        assert.strictEqual((yield* get(`${log}&offset=5&byteLength=20`)).text, whole.slice(5, 25))
        const logPage = yield* get(
          `${workerUis[index]}/logPage/?appId=${executor.appid}&executorId=${executor.id}&logType=stderr`
        )
        assert.strictEqual(logPage.status, 200)
        assert.include(logPage.text, "Successfully registered with driver")
        assert.strictEqual((yield* get(`${log.replace("stderr", "syslog")}`)).status, 400)
        assert.strictEqual((yield* get(`${log}&byteLength=99999999999`)).status, 400)
        assert.strictEqual((yield* get(`${workerUis[index]}/log?appId=nope&executorId=0&logType=stdout`)).status, 404)

        // Metrics: the master's and a worker's, as Prometheus reads them.
        const masterMetrics = (yield* get(`${masterUi}/metrics/prometheus`)).text
        assert.strictEqual(metric(masterMetrics, "kindling_master_workers_alive"), 2)
        assert.strictEqual(metric(masterMetrics, "kindling_master_apps_running"), 1)
        assert.strictEqual(metric(masterMetrics, "kindling_master_drivers_active"), 1)
        const workerMetrics = (yield* get(`${workerUis[index]}/metrics/worker/prometheus`)).text
        assert.isAtLeast(metric(workerMetrics, "kindling_worker_executors"), 1)
        assert.strictEqual((yield* get(`${masterUi}/readyz`)).status, 200)

        // A kill from another site is refused; from the master's own page it kills the driver.
        const form = { method: "POST", body: new URLSearchParams({ id: driverId, terminate: "true" }) }
        const forged = yield* get(`${masterUi}/driver/kill/`, { ...form, headers: { origin: "http://evil.example" } })
        assert.strictEqual(forged.status, 403)
        const killed = yield* get(`${masterUi}/driver/kill/`, { ...form, headers: { origin: masterUi } })
        assert.strictEqual(killed.status, 303)
        yield* eventually(
          master.url,
          (state) => state.completedDrivers.find((d) => d.id === driverId && d.state === "KILLED")
        )
        assert.isUndefined(activeDriver(driverId)(yield* eventually(master.url, (state) => state)))

        Fs.writeFileSync(done, "")
        assert.strictEqual(yield* client.exited.pipe(Effect.timeout("30 seconds")), 0, client.output())
      }),
    Deadlines.scaled(120_000)
  )
})
