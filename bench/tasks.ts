// Empty-task throughput and latency: `kc.parallelize(array, 10000).count()` — 10,000 one-element tasks — on
// local-cluster[2,1,1024] (two executor processes of one core each) next to the same job in local[2] (one
// in-process executor with two task threads), each run by the built `kindling submit`. Also: the time from
// starting `kindling submit` to its first task finished in local[2], and the executors' resident memory at rest
// and under the throughput run. Targets: ≥ 10,000 tasks/s on local-cluster; the first task within 1 s.
import { emptyTasks, type Outcome } from "./emptyTasks.js"
import { format, row } from "./stats.js"

const runs = 3
const tasks = 10_000
const submit = (master: string) => emptyTasks({ master, runs, tasks })

const mib = (bytes: number) => `${format(bytes / 2 ** 20, 1)} MiB`

const main = async () => {
  const local = await submit("local[2]")
  const cluster = await submit("local-cluster[2,1,1024]")
  const best = (o: Outcome) => Math.min(...o.runMillis)
  const widths = [26, 14, 14, 16, 14, 14]
  console.log(`${format(tasks)} one-element tasks per job, best of ${runs} jobs\n`)
  console.log(row(["", "tasks/s", "µs per task", "first task", "RSS at rest", "RSS peak"], widths))
  for (const [name, o] of [["local[2]", local], ["local-cluster[2,1,1024]", cluster]] as const) {
    console.log(row([
      name,
      format(tasks / (best(o) / 1000)),
      format((best(o) * 1000) / tasks),
      `${format(o.firstTaskMillis)} ms`,
      mib(o.restRss),
      mib(o.peakRss)
    ], widths))
  }
  console.log(`\nlocal-cluster ÷ local[2] throughput: ${format(best(local) / best(cluster), 2)}`)
  console.log(`local-cluster ÷ target (10,000 tasks/s): ${format(tasks / (best(cluster) / 1000) / 10_000, 2)}`)
  console.log(`first task in local[2] ÷ target (1 s): ${format(local.firstTaskMillis / 1000, 2)}`)
  console.log("(RSS: the largest executor process; in local[2] that is the submit process itself)")
}

await main()
