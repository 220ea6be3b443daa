// `pnpm bench curves [shuffles|tasks|master|history …]` (all four by default): how cost grows with the work, each
// curve printed as a table and drawn as an SVG under docs/perf/ (shown in the README):
//
// (a) shuffles.svg, shuffle-spill.svg, shuffle-memory.svg: groupByKey (skewed keys), sortByKey and reduceByKey of
//     0.25, 0.5, 1 and 2 GiB on local-cluster[2,1,256] (executors of 256 MiB, below every shuffle's size): time,
//     bytes spilled, and the executors' peak resident memory against their configured memory;
// (b) tasks.svg: jobs of 1k, 10k and 100k one-element tasks on local-cluster[2,1,1024]: tasks per second and the
//     driver's heap per task;
// (c) master-schedule.svg: the master's schedule pass with 100, 1,000 and 10,000 workers and as many waiting apps;
// (d) finished-apps.svg: the master's heap and the history server's resident memory after up to 10,000 finished
//     apps (the master keeps kindling.deploy.retainedApplications, 200, of them; the history server lists them all
//     and keeps the replays of kindling.history.retainedApplications, 50).
import * as Fs from "node:fs"
import * as Path from "node:path"
import { type Series, svg } from "./chart.js"
import { shuffle, shuffleOperations, type ShufflePoint, taskCounts } from "./curves/cluster.js"
import { historyMemory } from "./curves/history.js"
import { memoryAfterFinishedApps, schedulePass } from "./curves/master.js"
import { format, row } from "./stats.js"
import { root } from "./submit.js"

const out = Path.join(root, "docs/perf")
const mib = (bytes: number) => bytes / 2 ** 20
const draw = (name: string, chart: Parameters<typeof svg>[0]) => {
  Fs.mkdirSync(out, { recursive: true })
  Fs.writeFileSync(Path.join(out, name), svg(chart))
  console.log(`→ docs/perf/${name}\n`)
}

const curves: Record<string, () => Promise<void>> = {
  shuffles: async () => {
    const sizes = [0.25, 0.5, 1, 2]
    const executorMb = 256
    console.log(`(a) shuffles on local-cluster[2,1,${executorMb}]\n`)
    const widths = [14, 8, 10, 16, 12, 16]
    console.log(row(["", "GiB", "seconds", "shuffle written", "spilled", "peak RSS"], widths))
    const measured = new Map<string, Array<ShufflePoint>>()
    for (const operation of shuffleOperations) {
      const points: Array<ShufflePoint> = []
      for (const gib of sizes) {
        const point = await shuffle(operation, gib, executorMb)
        points.push(point)
        console.log(row([
          operation,
          String(gib),
          format(point.seconds, 1),
          `${format(mib(point.shuffleWritten))} MiB`,
          `${format(mib(point.spilled))} MiB`,
          `${format(mib(point.peakRss))} MiB`
        ], widths))
      }
      measured.set(operation, points)
    }
    const series = (value: (p: ShufflePoint) => number): Array<Series> =>
      [...measured].map(([name, points]) => ({ name, points: points.map((p) => [p.gib, value(p)] as const) }))
    const x = { label: "data shuffled (GiB of records)" }
    draw("shuffles.svg", {
      title: "Shuffle time, local-cluster[2,1,256]",
      x,
      y: { label: "seconds" },
      series: series((p) => p.seconds)
    })
    draw("shuffle-spill.svg", {
      title: "Bytes spilled by the shuffle's tasks",
      x,
      y: { label: "MiB spilled" },
      series: series((p) => mib(p.spilled))
    })
    draw("shuffle-memory.svg", {
      title: "Peak resident memory of an executor",
      x,
      y: { label: "MiB" },
      series: series((p) => mib(p.peakRss)),
      limit: { label: `executor memory ${executorMb} MiB`, value: executorMb }
    })
  },
  tasks: async () => {
    console.log("(b) jobs of many one-element tasks on local-cluster[2,1,1024]\n")
    const points = await taskCounts([1_000, 10_000, 100_000])
    const widths = [10, 12, 22]
    console.log(row(["tasks", "tasks/s", "driver heap per task"], widths))
    for (const p of points) {
      console.log(row([format(p.tasks), format(p.perSecond), `${format(p.heapPerTask)} B`], widths))
    }
    draw("tasks.svg", {
      title: "Launch rate by job size, local-cluster[2,1,1024]",
      x: { label: "tasks in the job", log: true },
      y: { label: "tasks per second" },
      series: [{ name: "tasks/s", points: points.map((p) => [p.tasks, p.perSecond] as const) }]
    })
    draw("tasks-heap.svg", {
      title: "Driver heap per task while the job runs",
      x: { label: "tasks in the job", log: true },
      y: { label: "bytes per task" },
      series: [{ name: "heap growth ÷ tasks", points: points.map((p) => [p.tasks, p.heapPerTask] as const) }]
    })
  },
  master: async () => {
    console.log("(c) the master's schedule pass: N busy workers of 4 cores, N apps waiting for cores, a worker joins\n")
    const widths = [10, 16, 22]
    console.log(row(["N", "pass (median)", "registering them all"], widths))
    const points: Array<readonly [number, number]> = []
    for (const n of [100, 1_000, 10_000]) {
      const { passMillis, buildMillis } = schedulePass(n)
      points.push([n, passMillis])
      console.log(row([format(n), `${format(passMillis, 3)} ms`, `${format(buildMillis / 1000, 1)} s`], widths))
    }
    draw("master-schedule.svg", {
      title: "The master's schedule pass",
      x: { label: "workers and waiting apps (each)", log: true },
      y: { label: "milliseconds per pass", log: true },
      series: [{ name: "one pass", points }]
    })
  },
  history: async () => {
    console.log("(d) memory after finished apps\n")
    const master = memoryAfterFinishedApps(10_000, 1_000, 200)
    const history = await historyMemory([0, 1_000, 2_500, 5_000, 10_000])
    const widths = [14, 22, 26]
    console.log(row(["finished apps", "master heap (state)", "history server RSS"], widths))
    for (const count of [...new Set([...master, ...history].map(([n]) => n))].sort((a, b) => a - b)) {
      const m = master.find(([n]) => n === count)
      const h = history.find(([n]) => n === count)
      console.log(row([
        format(count),
        m ? `${format(mib(m[1]), 1)} MiB` : "",
        h ? `${format(mib(h[1]), 1)} MiB` : ""
      ], widths))
    }
    draw("finished-apps.svg", {
      title: "Memory after finished apps",
      x: { label: "finished apps" },
      y: { label: "MiB" },
      series: [
        { name: "master state (heap)", points: master.map(([n, bytes]) => [n, mib(bytes)] as const) },
        { name: "history server (RSS)", points: history.map(([n, bytes]) => [n, mib(bytes)] as const) }
      ]
    })
  }
}

const chosen = process.argv.slice(3)
for (const name of chosen.length === 0 ? Object.keys(curves) : chosen) {
  const curve = curves[name]
  if (curve === undefined) {
    console.error(`usage: pnpm bench curves [${Object.keys(curves).join("|")} …]`)
    process.exit(2)
  }
  await curve()
}
