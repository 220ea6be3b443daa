// `pnpm bench spark [ROUNDS]`: Kindling and real Spark side by side on this machine, in local[2] (two cores each),
// one of each in turn for ROUNDS rounds (3 by default) so that both meet the same machine weather. Opt-in: it
// installs pyspark from PyPI when it is missing and needs Java 17. Spark runs each job with its DataFrame API and
// with its RDD API as a PySpark user writes it (bench/spark/jobs.py). The jobs:
//
// - start: `submit` of an app of one one-task job, from the command to the process's exit;
// - empty: jobs of 10,000 one-element tasks inside a running app, the best of three per app;
// - wordcount: examples/wordcount.ts over the generated 100 MB corpus, a whole run, outputs compared;
// - shuffle: 1 GiB of (skewed key, payload) records made on the executors and sorted by key into 16 partitions
//   (bench/apps/shuffle.ts), the job's time inside the app.
//
// Printed per job and system: the median and the spread (fastest–slowest) of the rounds, and Kindling's median
// over each of Spark's.
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Corpus from "../scripts/corpus.js"
import { pysparkVersion, sparkHome } from "../scripts/pyspark.js"
import { emptyTasks } from "./emptyTasks.js"
import { format, row } from "./stats.js"
import { results, root, run, submit } from "./submit.js"

const rounds = Number(process.argv[3] ?? 3)
const master = "local[2]"
const work = Fs.mkdtempSync(Path.join(Os.tmpdir(), "kindling-bench-spark-"))
const shuffle = { records: 2 ** 30 / 128, payloadBytes: 120, partitions: 16, keys: 1_000_000 }

const kindling = (app: string, args: ReadonlyArray<string>) => submit(master, app, args, { cwd: work })

const spark = (home: string, job: string, api: string, args: ReadonlyArray<string>) =>
  run(Path.join(home, "bin/spark-submit"), [
    "--master",
    master,
    Path.join(root, "bench/spark/jobs.py"),
    job,
    api,
    ...args
  ], {
    cwd: work,
    env: { SPARK_HOME: home, PYSPARK_PYTHON: "python3", PYSPARK_DRIVER_PYTHON: "python3" }
  })

// The job times an app printed.
const times = (stdout: string) => results(stdout).map(([millis]) => millis!)

// The part files of an output directory, in order, as one text.
const concatenated = (dir: string) =>
  Fs.readdirSync(dir).filter((name) => name.startsWith("part-")).sort()
    .map((name) => Fs.readFileSync(Path.join(dir, name), "utf8")).join("")

type System = "Kindling" | "Spark DataFrame" | "Spark RDD"
const systems: ReadonlyArray<System> = ["Kindling", "Spark DataFrame", "Spark RDD"]
const api = (system: System) => (system === "Spark DataFrame" ? "dataframe" : "rdd")

interface Job {
  readonly name: string
  readonly measure: (system: System, home: string, round: number) => Promise<number>
}

const jobs = (corpus: string): ReadonlyArray<Job> => [
  {
    name: "start (one-task app, whole run)",
    measure: async (system, home) =>
      system === "Kindling"
        ? (await kindling("bench/apps/one-task.ts", [])).millis
        : (await spark(home, "start", api(system), [])).millis
  },
  {
    name: "10,000 empty tasks (best job of 3)",
    measure: async (system, home) =>
      Math.min(
        ...(system === "Kindling"
          ? (await emptyTasks({ master, runs: 3, tasks: 10_000 })).runMillis
          : times((await spark(home, "empty", api(system), ["3", "10000"])).stdout))
      )
  },
  {
    name: "word count 100 MB (whole run)",
    measure: async (system, home, round) => {
      const output = Path.join(
        work,
        `wordcount-${api(system)}-${system === "Kindling" ? "kindling" : "spark"}-${round}`
      )
      const ran = system === "Kindling"
        ? await kindling("examples/wordcount.ts", [corpus, output])
        : await spark(home, "wordcount", api(system), [corpus, output])
      const counted = concatenated(output)
      const first = Path.join(work, "wordcount-first.txt")
      if (!Fs.existsSync(first)) Fs.writeFileSync(first, counted)
      else if (Fs.readFileSync(first, "utf8") !== counted) throw new Error(`${system}'s word counts differ`)
      Fs.rmSync(output, { recursive: true, force: true })
      return ran.millis
    }
  },
  {
    name: "sort 1 GiB by key (the job)",
    measure: async (system, home) => {
      const args = [shuffle.records, shuffle.payloadBytes, shuffle.partitions, shuffle.keys].map(String)
      const ran = system === "Kindling"
        ? await kindling("bench/apps/shuffle.ts", ["sortByKey", ...args])
        : await spark(home, "shuffle", api(system), args)
      return times(ran.stdout)[0]!
    }
  }
]

const seconds = (millis: number) => `${format(millis / 1000, 2)} s`
const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

const main = async () => {
  const home = sparkHome()
  const corpus = Corpus.ensure(100 * 1024 * 1024)
  console.log(`Kindling and Spark ${pysparkVersion} (${home}), ${master}, ${rounds} rounds, alternating\n`)
  const widths = [36, 16, 22, 12]
  console.log(row(["", "system", "median (spread)", "Kindling ÷"], widths))
  for (const job of jobs(corpus)) {
    const measured = new Map<System, Array<number>>(systems.map((system) => [system, []]))
    for (let round = 0; round < rounds; round++) {
      for (const system of systems) measured.get(system)!.push(await job.measure(system, home, round))
    }
    const ours = median(measured.get("Kindling")!)
    for (const system of systems) {
      const values = measured.get(system)!
      console.log(row([
        system === "Kindling" ? job.name : "",
        system,
        `${seconds(median(values))} (${seconds(Math.min(...values))}–${seconds(Math.max(...values))})`,
        system === "Kindling" ? "" : format(ours / median(values), 2)
      ], widths))
    }
  }
  Fs.rmSync(work, { recursive: true, force: true })
}

await main()
