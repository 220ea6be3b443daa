// Reading and aggregating 1 GB of CSV and the same rows as Parquet: `kindling submit --master local[2]
// bench/apps/formats-aggregate.ts` (the built CLI; the job's time, the app reports it, and the whole run's) next to
// a plain single-process Node program doing the same work in this process — a line splitter for the CSV,
// hyparquet's reader for the Parquet — and, with `--peers`, pyarrow (its datasets, multi-threaded) and Spark
// (local[2]) on the same files. Per country: the rows, and the sums of amount and quantity; every side's totals
// must agree. Reports seconds, MB/s and MB/s per core (input bytes over time over the cores each side uses).
//
// The dataset is generated once (seeded) into the temporary directory and kept: 8 CSV files of 128 MiB, and the
// same rows written by Kindling as 8 Parquet files (snappy pages, row groups of 100,000 rows).
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { format } from "./stats.js"
import { results, submit } from "./submit.js"

const dir = Path.join(Os.tmpdir(), "kindling-bench-formats-v1")
const csvDir = Path.join(dir, "csv")
const parquetDir = Path.join(dir, "parquet")
const files = 8
const fileBytes = 128 * 1024 * 1024
const countries = Array.from({ length: 40 }, (_, i) => `country-${String.fromCharCode(65 + (i % 26))}${i}`)

// Seeded rows, about 60 bytes each: id, country, amount (2 decimals), quantity, day.
const generate = () => {
  Fs.mkdirSync(csvDir, { recursive: true })
  let state = 12345
  const next = () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0
    return state / 2 ** 32
  }
  let id = 0
  for (let f = 0; f < files; f++) {
    const path = Path.join(csvDir, `part-${String(f).padStart(5, "0")}.csv`)
    const fd = Fs.openSync(path, "w")
    let written = 0
    let chunk = "id,country,amount,quantity,day\n"
    while (written < fileBytes) {
      for (let i = 0; i < 20_000; i++) {
        const day = new Date(Date.UTC(2024, 0, 1) + Math.floor(next() * 730) * 86_400_000).toISOString().slice(0, 10)
        chunk += `${id++},${countries[Math.floor(next() * countries.length)]},${(next() * 1000).toFixed(2)},${
          1 + Math.floor(next() * 20)
        },${day}\n`
      }
      Fs.writeSync(fd, chunk)
      written += Buffer.byteLength(chunk)
      chunk = ""
    }
    Fs.closeSync(fd)
  }
}

const bytesIn = (path: string) =>
  Fs.readdirSync(path).filter((name) => !name.startsWith("_") && !name.startsWith("."))
    .reduce((sum, name) => sum + Fs.statSync(Path.join(path, name)).size, 0)

type Totals = Map<string, readonly [number, number, number]>

const describe = (totals: Totals) =>
  [...totals].sort(([a], [b]) => (a < b ? -1 : 1)).map(([c, [n, a, q]]) => `${c} ${n} ${a.toFixed(2)} ${q}`).join("\n")

// The plain program: each CSV file read in 16 MiB pieces, cut into lines and fields by hand.
const plainCsv = (): Totals => {
  const totals = new Map<string, [number, number, number]>()
  const buffer = Buffer.allocUnsafe(16 * 1024 * 1024)
  for (const name of Fs.readdirSync(csvDir).sort()) {
    const fd = Fs.openSync(Path.join(csvDir, name), "r")
    let carry = ""
    let header = true
    for (;;) {
      const read = Fs.readSync(fd, buffer, 0, buffer.length, null)
      if (read === 0) break
      const text = carry + buffer.toString("utf8", 0, read)
      const lines = text.split("\n")
      carry = lines.pop()!
      for (const line of lines) {
        if (header) {
          header = false
          continue
        }
        const [, country, amount, quantity] = line.split(",")
        const total = totals.get(country!) ?? [0, 0, 0]
        total[0]++
        total[1] += Number(amount)
        total[2] += Number(quantity)
        totals.set(country!, total)
      }
    }
    Fs.closeSync(fd)
  }
  return totals
}

// The plain program over Parquet: hyparquet reads each file's three columns.
const plainParquet = async (): Promise<Totals> => {
  const { asyncBufferFromFile, parquetReadObjects } = await import("hyparquet")
  const totals = new Map<string, [number, number, number]>()
  for (const name of Fs.readdirSync(parquetDir).filter((n) => n.endsWith(".parquet")).sort()) {
    const file = await asyncBufferFromFile(Path.join(parquetDir, name))
    const rows = await parquetReadObjects({ file, columns: ["country", "amount", "quantity"] })
    for (const row of rows) {
      const total = totals.get(row.country) ?? [0, 0, 0]
      total[0]++
      total[1] += row.amount
      total[2] += row.quantity
      totals.set(row.country, total)
    }
  }
  return totals
}

const kindling = async (form: "csv" | "parquet", path: string) => {
  const ran = await submit("local[2]", "bench/apps/formats-aggregate.ts", [form, path])
  const [[seconds]] = results(ran.stdout) as [[number, number]]
  const totals: Totals = new Map(
    ran.stdout.split("\n").filter((line) => line.startsWith("total ")).map((line) => {
      const [, country, n, amount, quantity] = line.split(" ")
      return [country!, [Number(n), Number(amount), Number(quantity)]] as const
    })
  )
  return { seconds: seconds!, wall: ran.millis / 1000, totals }
}

// pyarrow and Spark, with --peers: the same aggregation, its seconds and totals printed as JSON.
const peer = (tool: "pyarrow" | "spark", form: "csv" | "parquet", path: string) => {
  const script = tool === "pyarrow"
    ? `
import json, sys, time, pyarrow.dataset as ds, pyarrow.csv as pc
start = time.time()
if sys.argv[1] == "csv":
    data = ds.dataset(sys.argv[2], format="csv")
else:
    data = ds.dataset(sys.argv[2], format="parquet")
table = data.to_table(columns=["country", "amount", "quantity"])
grouped = table.group_by("country").aggregate([("amount", "count"), ("amount", "sum"), ("quantity", "sum")])
seconds = time.time() - start
print(json.dumps({"seconds": seconds, "rows": grouped.to_pylist()}))
`
    : `
import json, sys, time
from pyspark.sql import SparkSession, functions as F
spark = SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false").getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
start = time.time()
if sys.argv[1] == "csv":
    frame = spark.read.schema("id LONG, country STRING, amount DOUBLE, quantity INT, day DATE").option("header", True).csv(sys.argv[2])
else:
    frame = spark.read.parquet(sys.argv[2])
rows = frame.groupBy("country").agg(F.count("amount").alias("amount_count"), F.sum("amount").alias("amount_sum"), F.sum("quantity").alias("quantity_sum")).collect()
seconds = time.time() - start
print(json.dumps({"seconds": seconds, "rows": [r.asDict() for r in rows]}))
spark.stop()
`
  const ran = ChildProcess.spawnSync("python3", ["-c", script, form, path], {
    encoding: "utf8",
    maxBuffer: 1 << 26,
    env: { ...process.env, PYSPARK_PYTHON: "python3" }
  })
  if (ran.status !== 0) throw new Error(`${tool} failed:\n${ran.stderr.slice(-3000)}`)
  const out = JSON.parse(ran.stdout.trim().split("\n").at(-1)!) as {
    seconds: number
    rows: Array<{ country: string; amount_count: number; amount_sum: number; quantity_sum: number }>
  }
  const totals: Totals = new Map(out.rows.map((r) => [r.country, [r.amount_count, r.amount_sum, r.quantity_sum]]))
  return { seconds: out.seconds, totals }
}

const main = async () => {
  if (!Fs.existsSync(Path.join(dir, "ready"))) {
    console.log(`generating ${files} × 128 MiB of CSV in ${dir} (once)…`)
    Fs.rmSync(dir, { recursive: true, force: true })
    generate()
    await submit("local[2]", "bench/apps/formats-convert.ts", [csvDir, parquetDir])
    Fs.writeFileSync(Path.join(dir, "ready"), "")
  }
  const peers = process.argv.includes("--peers")
  const mb = (bytes: number) => bytes / 1e6
  for (const form of ["csv", "parquet"] as const) {
    const path = form === "csv" ? csvDir : parquetDir
    const bytes = bytesIn(path)
    console.log(
      `\n${form}: ${format(mb(bytes), 0)} MB in ${Fs.readdirSync(path).filter((n) => !n.startsWith("_")).length} files`
    )
    const started = performance.now()
    const plain = form === "csv" ? plainCsv() : await plainParquet()
    const plainSeconds = (performance.now() - started) / 1000
    const ours = await kindling(form, path)
    const line = (name: string, seconds: number, cores: number, note = "") =>
      console.log(
        `  ${name.padEnd(34)} ${format(seconds, 2).padStart(7)} s  ${
          format(mb(bytes) / seconds, 0).padStart(5)
        } MB/s  ${format(mb(bytes) / seconds / cores, 0).padStart(5)} MB/s per core${note}`
      )
    line("single-process Node (1 core)", plainSeconds, 1)
    line("Kindling local[2], the job", ours.seconds, 2, `  (whole run ${format(ours.wall, 2)} s)`)
    const same = (theirs: Totals) =>
      [...plain].every(([country, [n, a, q]]) => {
        const other = theirs.get(country)
        return other !== undefined && other[0] === n && Math.abs(other[1] - a) < 1e-6 * Math.abs(a) + 0.01 &&
          other[2] === q
      }) && theirs.size === plain.size
    let agree = same(ours.totals)
    if (peers) {
      for (const tool of ["pyarrow", "spark"] as const) {
        const result = peer(tool, form, path)
        line(`${tool}${tool === "spark" ? " local[2]" : " (2 threads)"}`, result.seconds, 2)
        agree &&= same(result.totals)
      }
    }
    console.log(
      `  Kindling ÷ single process (per core): ${
        format((plainSeconds / ours.seconds) / 2, 2)
      } of its throughput per core; totals ${agree ? "agree" : "DIFFER"}`
    )
    if (!agree) {
      console.log(describe(plain))
      process.exitCode = 1
    }
  }
}

await main()
