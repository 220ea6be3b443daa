// Spark programs ported as a Spark user writes them — functions that call the module's helpers, an imported parser
// module, local values and local helpers, classes with methods — submitted unchanged with `kindling submit` to
// local[2] and to local-cluster (executors as processes), with the answers a plain computation gives. Their
// jobs are named by their call sites, and a function that throws names the line of the app's source.
import { assert, describe, it } from "@effect/vitest"
import { Deadlines } from "@kindling/protocol/testing"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { app, run, temporaryDirectory } from "./fixtures/cluster.js"

const parser = `// The log format, in a module of its own.
export interface Entry {
  readonly level: string
  readonly service: string
  readonly millis: number
}
const fields = (line: string) => line.trim().split(/\\s+/)
const toNumber = (text: string | undefined) => Number(text ?? "0")
export function parseLine(line: string): Entry {
  const [level = "", service = "", millis] = fields(line)
  if (millis === "oops") throw new Error(\`unreadable line: \${line}\`)
  return { level, service, millis: toNumber(millis) }
}
`

const logs = `import { App, Kindling } from "@kindling/app"
import { Console, Effect } from "effect"
import { type Entry, parseLine } from "./parser.js"

const isError = (entry: Entry) => entry.level === "ERROR"
const isSlowError = (entry: Entry) => isError(entry) && entry.millis > 100

export default App.make(([input, minimum]) =>
  Effect.gen(function*() {
    const kc = yield* Kindling
    const least = Number(minimum)
    const tag = (service: string) => service.toUpperCase()
    const entries = kc.textFile(input!, 3).map(parseLine)
    const slow = yield* entries.filter(isSlowError).count()
    const latencies = yield* entries
      .filter((entry) => entry.millis >= least)
      .map((entry) => [tag(entry.service), [1, entry.millis]] as const)
      .reduceByKey(([n, a], [m, b]) => [n + m, a + b] as const)
      .collect()
    const means = latencies.map(([service, [n, total]]) => \`\${service}=\${(total / n).toFixed(2)}\`).sort()
    const [, counts] = yield* entries.map((entry) => entry.millis).histogram([0, 100, 200, 250])
    yield* Console.log(\`slow \${slow}; \${means.join(" ")}; histogram \${counts.join(",")}\`)
  }))
`

const kmeans = `import { App, Kindling } from "@kindling/app"
import { Console, Effect } from "effect"

class Point {
  constructor(readonly x: number, readonly y: number) {}
  distance(other: Point) {
    return Math.hypot(this.x - other.x, this.y - other.y)
  }
  plus(other: Point) {
    return new Point(this.x + other.x, this.y + other.y)
  }
  scaled(by: number) {
    return new Point(this.x * by, this.y * by)
  }
}
App.registerClass(Point)

const closest = (point: Point, centers: ReadonlyArray<Point>) => {
  let best = 0
  for (let i = 1; i < centers.length; i++) {
    if (point.distance(centers[i]!) < point.distance(centers[best]!)) best = i
  }
  return best
}

export default App.make(([n, iterations]) =>
  Effect.gen(function*() {
    const kc = yield* Kindling
    const points = kc.range(0, Number(n), 1, 4).map((i) => new Point((i * 37) % 101, (i * 53) % 97)).cache()
    let centers = [new Point(0, 0), new Point(50, 50), new Point(100, 0)]
    for (let round = 0; round < Number(iterations); round++) {
      const sums = yield* points
        .map((point) => [closest(point, centers), [point, 1]] as const)
        .reduceByKey(([a, m], [b, k]) => [a.plus(b), m + k] as const)
        .collectAsMap()
      centers = centers.map((center, i) => {
        const sum = sums.get(i)
        return sum === undefined ? center : sum[0].scaled(1 / sum[1])
      })
    }
    yield* Console.log(\`centers \${centers.map((c) => \`\${c.x.toFixed(3)},\${c.y.toFixed(3)}\`).join(" ")}\`)
  }))
`

// The same computations over plain arrays.
const expectedLogs = (lines: ReadonlyArray<string>, least: number) => {
  const entries = lines.map((line) => {
    const [level = "", service = "", millis] = line.trim().split(/\s+/)
    return { level, service, millis: Number(millis ?? "0") }
  })
  const slow = entries.filter((e) => e.level === "ERROR" && e.millis > 100).length
  const groups = new Map<string, Array<number>>()
  for (const e of entries.filter((e) => e.millis >= least)) {
    groups.set(e.service.toUpperCase(), [...(groups.get(e.service.toUpperCase()) ?? []), e.millis])
  }
  const means = [...groups].map(([service, all]) =>
    `${service}=${(all.reduce((a, b) => a + b, 0) / all.length).toFixed(2)}`
  ).sort()
  const bounds = [0, 100, 200, 250]
  const counts = bounds.slice(1).map((upper, i) =>
    entries.filter((e) => e.millis >= bounds[i]! && (e.millis < upper || (i === 2 && e.millis === upper))).length
  )
  return `slow ${slow}; ${means.join(" ")}; histogram ${counts.join(",")}`
}

const expectedCenters = (n: number, iterations: number) => {
  const points = Array.from({ length: n }, (_, i) => [(i * 37) % 101, (i * 53) % 97] as const)
  let centers: Array<readonly [number, number]> = [[0, 0], [50, 50], [100, 0]]
  const distance = (a: readonly [number, number], b: readonly [number, number]) => Math.hypot(a[0] - b[0], a[1] - b[1])
  for (let round = 0; round < iterations; round++) {
    const sums = new Map<number, [number, number, number]>()
    for (const point of points) {
      let best = 0
      for (let i = 1; i < centers.length; i++) {
        if (distance(point, centers[i]!) < distance(point, centers[best]!)) best = i
      }
      const sum = sums.get(best) ?? [0, 0, 0]
      sums.set(best, [sum[0] + point[0], sum[1] + point[1], sum[2] + 1])
    }
    centers = centers.map((center, i) => {
      const sum = sums.get(i)
      return sum === undefined ? center : [sum[0] / sum[2], sum[1] / sum[2]] as const
    })
  }
  return `centers ${centers.map(([x, y]) => `${x.toFixed(3)},${y.toFixed(3)}`).join(" ")}`
}

// examples/latency.ts over plain arrays: its lines are generated from their numbers.
const expectedLatencies = (n: number, least: number) => {
  const names = ["auth", "db", "queue", "web"]
  const entries = Array.from({ length: n }, (_, i) => ({ service: names[(i * 7) % 4]!, millis: (i * 31) % 250 }))
  const lines = names.map((service) => {
    const all = entries.filter((e) => e.service === service && e.millis >= least).map((e) => e.millis)
    const mean = all.reduce((a, b) => a + b, 0) / all.length
    return `${service.toUpperCase().padEnd(5)} ${mean.toFixed(1)} ms over ${all.length} requests\n`
  })
  return `${lines.join("")}${entries.filter((e) => e.millis > 200).length} requests over 200 ms\n`
}

const services = ["db", "web", "auth", "queue"]
const levels = ["ERROR", "INFO", "WARN"]
const logLines = Array.from(
  { length: 300 },
  (_, i) => `${levels[i % 3]} ${services[(i * 7) % 4]} ${(i * 31) % 250}`
)

const programs = (dir: string) => {
  app(dir, "parser.ts", parser)
  const input = Path.join(dir, "logs.txt")
  Fs.writeFileSync(input, logLines.join("\n") + "\n")
  return { logs: app(dir, "logs.ts", logs), kmeans: app(dir, "kmeans.ts", kmeans), input }
}

describe("ported Spark programs", () => {
  for (const master of ["local[2]", "local-cluster[2,1,1024]"]) {
    it.scopedLive(`run unchanged on ${master}, with the answers of a plain computation`, () =>
      Effect.gen(function*() {
        const dir = yield* temporaryDirectory
        const files = programs(dir)
        const logsRun = yield* run(["submit", "--master", master, files.logs, files.input, "40"])
        assert.strictEqual(logsRun.code, 0, logsRun.stderr)
        assert.strictEqual(logsRun.stdout.trim(), expectedLogs(logLines, 40))
        // Jobs and stages are named where the app's code called them.
        assert.include(logsRun.stderr, "Got job 0 (count at logs.ts:14)")
        assert.include(logsRun.stderr, "ShuffleMapStage 1 (map at logs.ts:17)")
        assert.include(logsRun.stderr, "ResultStage 2 (collect at logs.ts:19)")
        const kmeansRun = yield* run(["submit", "--master", master, files.kmeans, "400", "4"])
        assert.strictEqual(kmeansRun.code, 0, kmeansRun.stderr)
        assert.strictEqual(kmeansRun.stdout.trim(), expectedCenters(400, 4))
        // The README's worked example: an imported parser, a class with methods through a shuffle, local values.
        const example = yield* run(["submit", "--master", master, "examples/latency.ts", "5000", "20"])
        assert.strictEqual(example.code, 0, example.stderr)
        assert.strictEqual(example.stdout, expectedLatencies(5000, 20))
      }), Deadlines.scaled(120_000))
  }

  it.scopedLive(
    "a function that throws on an executor names the line of the app's own source",
    () =>
      Effect.gen(function*() {
        const dir = yield* temporaryDirectory
        const files = programs(dir)
        Fs.appendFileSync(files.input, "ERROR db oops\n")
        const failed = yield* run(["submit", "--master", "local-cluster[1,1,1024]", files.logs, files.input, "40"])
        assert.strictEqual(failed.code, 1)
        assert.include(failed.stderr, "Error: unreadable line: ERROR db oops")
        assert.match(failed.stderr, new RegExp(`at parseLine \\(${dir}/parser\\.ts:11:\\d+\\)`))
      }),
    Deadlines.scaled(120_000)
  )
})
