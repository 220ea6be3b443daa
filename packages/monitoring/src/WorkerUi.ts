/**
 * The worker's web UI (Spark's `WorkerWebUI`): what it runs and ran, each executor's and driver's stdout and
 * stderr read in byte ranges (`/logPage/` and the raw `/log`, as Spark's), Spark's `/json`, and the worker's
 * metrics — all read from the worker's state snapshot.
 *
 * @since 0.1.0
 */
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Html, type WebServer } from "@kindling/kernel/web"
import { type QueryMessages, SparkJson } from "@kindling/protocol"
import type { Worker } from "@kindling/worker"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"

const { html, link } = Html

/** Spark's log page shows the last 100 KiB unless asked for another range. */
const defaultBytes = 100 * 1024
/** The most one request reads: a range is read into memory, and a worker must not run out of it for a page. */
const maxBytes = 16 * 1024 * 1024

const LogQuery = Schema.Struct({
  appId: Schema.optional(Schema.String),
  executorId: Schema.optional(Schema.String),
  driverId: Schema.optional(Schema.String),
  logType: Schema.Literal("stdout", "stderr"),
  offset: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.nonNegative())),
  byteLength: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, maxBytes)))
})
type LogQuery = typeof LogQuery.Type

interface LogRange {
  readonly text: string
  readonly start: number
  readonly end: number
  readonly length: number
}

// The runner's directory, found among those the worker knows: a log is never read from a path built from the
// request.
const runnerDir = (state: QueryMessages.WorkerStateResponse, query: LogQuery): string | undefined => {
  if (query.driverId !== undefined) {
    return [...state.drivers, ...state.finishedDrivers].find((d) => d.driverId === query.driverId)?.workDir
  }
  return [...state.executors, ...state.finishedExecutors].find((e) =>
    e.appId === query.appId && String(e.execId) === query.executorId
  )?.workDir
}

// `byteLength` bytes from `offset` (by default the end of the file), as Spark's `Utils.offsetBytes`.
const readRange = (file: string, offset: number | undefined, byteLength: number) =>
  Effect.tryPromise(async () => {
    const handle = await Fs.open(file, "r")
    try {
      const { size } = await handle.stat()
      const start = Math.min(size, Math.max(0, offset ?? size - byteLength))
      const end = Math.min(size, start + byteLength)
      const buffer = Buffer.alloc(end - start)
      await handle.read(buffer, 0, buffer.length, start)
      return { text: buffer.toString("utf8"), start, end, length: size } satisfies LogRange
    } finally {
      await handle.close()
    }
  })

const logRange = (worker: Worker.Worker, query: LogQuery) =>
  Effect.gen(function*() {
    const dir = runnerDir(yield* worker.state, query)
    if (dir === undefined) return Option.none<LogRange>()
    return yield* readRange(Path.join(dir, query.logType), query.offset, query.byteLength ?? defaultBytes).pipe(
      Effect.map(Option.some),
      // No file yet (the process has not started) reads as empty.
      Effect.orElseSucceed(() => Option.some<LogRange>({ text: "", start: 0, end: 0, length: 0 }))
    )
  })

const owner = (query: LogQuery) =>
  query.driverId !== undefined ? `driver ${query.driverId}` : `app ${query.appId}, executor ${query.executorId}`

const logPage = (query: LogQuery, range: LogRange) => {
  const byteLength = query.byteLength ?? defaultBytes
  const ids = query.driverId !== undefined
    ? `driverId=${query.driverId}`
    : `appId=${query.appId}&executorId=${query.executorId}`
  const at = (offset: number) => `/logPage/?${ids}&logType=${query.logType}&offset=${offset}&byteLength=${byteLength}`
  const title = `${query.logType} log page for ${owner(query)}`
  return Html.page({
    title,
    tabs: [{ label: "Worker", href: "/" }],
    body: html`<h1>${title}</h1>
<div class="pager">
${range.start > 0 ? link(at(Math.max(0, range.start - byteLength)), "◀ Earlier") : html`<span>◀ Earlier</span>`}
<span>Showing ${range.end - range.start} bytes: ${range.start} – ${range.end} of ${range.length}</span>
${range.end < range.length ? link(at(range.end), "Later ▶") : html`<span>Later ▶</span>`}
${link(`/log?${ids}&logType=${query.logType}&offset=${range.start}&byteLength=${byteLength}`, "raw")}
</div>
<pre class="log">${range.text}</pre>`
  })
}

const state = (cell: string) => html`<span class="state-${cell}">${cell}</span>`

const logLinks = (query: string) => [
  link(`/logPage/?${query}&logType=stdout`, "stdout"),
  " ",
  link(`/logPage/?${query}&logType=stderr`, "stderr")
]

const executorsTable = (executors: ReadonlyArray<QueryMessages.ExecutorRunnerInfo>, id: string) =>
  Html.table<QueryMessages.ExecutorRunnerInfo>(
    [
      { header: "Executor ID", cell: (e) => e.execId, numeric: true },
      { header: "Application", cell: (e) => [e.appDesc.name, " (", e.appId, ")"] },
      { header: "State", cell: (e) => state(e.state) },
      { header: "Cores", cell: (e) => e.cores, numeric: true },
      { header: "Memory", cell: (e) => Html.megabytes(e.memory), numeric: true },
      { header: "Logs", cell: (e) => logLinks(`appId=${e.appId}&executorId=${e.execId}`) }
    ],
    executors,
    { id }
  )

const driversTable = (drivers: ReadonlyArray<QueryMessages.DriverRunnerInfo>, id: string) =>
  Html.table<QueryMessages.DriverRunnerInfo>(
    [
      { header: "Submission ID", cell: (d) => d.driverId },
      { header: "Main Class", cell: (d) => SparkJson.mainClass(d.desc) },
      { header: "State", cell: (d) => state(d.state) },
      { header: "Cores", cell: (d) => d.desc.cores, numeric: true },
      { header: "Memory", cell: (d) => Html.megabytes(d.desc.mem), numeric: true },
      { header: "Logs", cell: (d) => logLinks(`driverId=${d.driverId}`) },
      { header: "Notes", cell: (d) => Option.match(d.exception, { onNone: () => "", onSome: (e) => e.message }) }
    ],
    drivers,
    { id }
  )

const workerPage = (s: QueryMessages.WorkerStateResponse) => {
  const title = `Worker ${s.workerId}`
  const master = Option.getOrElse(s.masterUrl, () => "")
  const masterUi = Option.getOrElse(s.masterWebUiUrl, () => "")
  return Html.page({
    title,
    tabs: masterUi === "" ? [] : [{ label: "Back to Master", href: masterUi }],
    body: html`<h1>${title}</h1>
<ul class="summary">
<li><strong>ID:</strong>${s.workerId}</li>
<li><strong>Master URL:</strong>${master === "" ? "(not registered)" : master}</li>
<li><strong>Cores:</strong>${s.cores} (${s.coresUsed} Used)</li>
<li><strong>Memory:</strong>${Html.megabytes(s.memory)} (${Html.megabytes(s.memoryUsed)} Used)</li>
</ul>
<h2>Running Executors (${s.executors.length})</h2>${executorsTable(s.executors, "running-executors")}
<h2>Running Drivers (${s.drivers.length})</h2>${driversTable(s.drivers, "running-drivers")}
<h2>Finished Executors (${s.finishedExecutors.length})</h2>${executorsTable(s.finishedExecutors, "finished-executors")}
<h2>Finished Drivers (${s.finishedDrivers.length})</h2>${driversTable(s.finishedDrivers, "finished-drivers")}`
  })
}

const coresUsed = Metric.gauge("kindling_worker_cores_used", { description: "Cores given to executors and drivers" })
const coresFree = Metric.gauge("kindling_worker_cores_free", { description: "Cores not given out" })
const memoryUsed = Metric.gauge("kindling_worker_memory_used_mb", { description: "Memory given out, in MB" })
const memoryFree = Metric.gauge("kindling_worker_memory_free_mb", { description: "Memory not given out, in MB" })
const executors = Metric.gauge("kindling_worker_executors", { description: "Executors running" })
const drivers = Metric.gauge("kindling_worker_drivers", { description: "Drivers running" })

const recordMetrics = (s: QueryMessages.WorkerStateResponse) => {
  const tag = (gauge: Metric.Metric.Gauge<number>) => Metric.tagged(gauge, "worker", s.workerId)
  return Effect.all([
    Metric.set(tag(coresUsed), s.coresUsed),
    Metric.set(tag(coresFree), s.cores - s.coresUsed),
    Metric.set(tag(memoryUsed), s.memoryUsed),
    Metric.set(tag(memoryFree), s.memory - s.memoryUsed),
    Metric.set(tag(executors), s.executors.length),
    Metric.set(tag(drivers), s.drivers.length)
  ], { discard: true })
}

/**
 * The worker's routes for its web server.
 *
 * @since 0.1.0
 * @category constructors
 */
export const routes = (worker: Worker.Worker): WebServer.NodeRoutes<unknown> => {
  const json = Effect.map(worker.state, (s) => HttpServerResponse.unsafeJson(SparkJson.workerState(s)))
  const withLog = (respond: (query: LogQuery, range: LogRange) => HttpServerResponse.HttpServerResponse) =>
    Effect.gen(function*() {
      const query = yield* HttpServerRequest.schemaSearchParams(LogQuery).pipe(Effect.either)
      if (query._tag === "Left") {
        return HttpServerResponse.text(
          "Give logType (stdout or stderr) and driverId, or appId and executorId; offset and byteLength are bytes " +
            `(byteLength at most ${maxBytes})`,
          { status: 400 }
        )
      }
      const range = yield* logRange(worker, query.right)
      return Option.match(range, {
        onNone: () => HttpServerResponse.text(`This worker has no ${owner(query.right)}`, { status: 404 }),
        onSome: (found) => respond(query.right, found)
      })
    })
  return {
    routes: HttpRouter.empty.pipe(
      HttpRouter.get("/", Effect.map(worker.state, (s) => Html.respond(workerPage(s)))),
      HttpRouter.get("/json", json),
      HttpRouter.get("/logPage/", withLog((query, range) => Html.respond(logPage(query, range)))),
      HttpRouter.get("/log", withLog((_, range) => HttpServerResponse.text(range.text)))
    ),
    ready: Effect.map(worker.state, (s) => Option.isSome(s.masterUrl)),
    metrics: () => ({ prefix: "kindling_worker_", tags: { worker: worker.id } }),
    metricsPaths: ["/metrics/worker/prometheus"],
    beforeScrape: Effect.flatMap(worker.state, recordMetrics)
  }
}
