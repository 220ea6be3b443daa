// The Kindling side of `pnpm test:formats-compat`: rows of every field type from a seed, and
//   expected <seed> <n>              prints them as canonical JSON lines (see formats_peer.py);
//   write <seed> <n> <dir>           writes them as Parquet (zstd pages), CSV (gzip'd) and JSON lines under dir;
//   read <format> <path> [options]   reads files some tool wrote and prints their rows as canonical JSON lines;
// and for Parquet's every type, in the canonical form of parquet_types.py (canonical.ts):
//   parquet-expected <seed> <n>      prints the rows with bytes and floats too (rows.ts's parquetRows);
//   parquet-write <seed> <n> <dir>   writes those as Parquet;
//   parquet-read <path>              reads a Parquet file and prints its rows;
//   parquet-rewrite <path> <dir>     reads a Parquet file's columns that are not nested, writes them again and
//                                    prints their names.
import { App, Kindling } from "@kindling/app"
import { Console, Effect } from "effect"
import { canonicalLine } from "./canonical.js"
import { byId, fields, parquetFields, parquetRows, rows } from "./rows.js"

// A row as every side prints it: integers and decimals as text, a double by its IEEE bits, a timestamp in
// microseconds since the epoch, a date as yyyy-MM-dd; keys sorted.
const canonical = (row: Record<string, unknown>): string => {
  const bits = (value: number) => {
    const view = new DataView(new ArrayBuffer(8))
    view.setFloat64(0, value)
    return view.getBigUint64(0).toString(16).padStart(16, "0")
  }
  const decimal = (value: unknown) => {
    if (value === null) return null
    const [whole = "0", fraction = ""] = String(value).replace(/^-/, "").split(".")
    const digits = `${BigInt(whole)}.${fraction.padEnd(4, "0")}`
    return String(value).startsWith("-") && /[1-9]/.test(digits) ? `-${digits}` : digits
  }
  const out = {
    at: row.at === null ? null : String(BigInt((row.at as Date).getTime()) * 1000n),
    count: row.count,
    day: row.day === null ? null : (row.day as Date).toISOString().slice(0, 10),
    id: String(row.id),
    name: row.name,
    ok: row.ok,
    price: decimal(row.price),
    score: row.score === null ? null : bits(row.score as number)
  }
  return JSON.stringify(out)
}

const print = (all: ReadonlyArray<Record<string, unknown>>) =>
  Console.log([...all].sort(byId).map(canonical).join("\n"))

const printCanonical = (all: ReadonlyArray<Record<string, unknown>>) =>
  Console.log([...all].sort(byId).map(canonicalLine).join("\n"))

export default App.make(([mode, ...args]) =>
  Effect.gen(function*() {
    const kc = yield* Kindling
    if (mode === "expected") return yield* print(rows(Number(args[0]), Number(args[1])))
    if (mode === "parquet-expected") return yield* printCanonical(parquetRows(Number(args[0]), Number(args[1])))
    if (mode === "parquet-write") {
      const [seed, n, dir] = args
      return yield* kc.parallelize(parquetRows(Number(seed), Number(n)), 3).write.parquet(dir!, {
        fields: parquetFields,
        rowGroupSize: 50
      })
    }
    if (mode === "parquet-read") return yield* printCanonical(yield* (yield* kc.read.parquet(args[0]!)).collect())
    if (mode === "parquet-rewrite") {
      const [path, dir] = args
      const all = yield* kc.read.parquet(path!)
      const flat = all.fields!.filter((field) => !["array", "map", "struct"].includes(field.type))
      const read = yield* kc.read.parquet(path!, { columns: flat.map((field) => field.name) })
      yield* read.write.parquet(dir!, { rowGroupSize: 50 })
      return yield* Console.log(JSON.stringify(flat.map((field) => field.name)))
    }
    if (mode === "write") {
      const [seed, n, dir] = args
      const dataset = kc.parallelize(rows(Number(seed), Number(n)), 3)
      yield* dataset.write.parquet(`${dir}/parquet`, { fields, compression: "zstd" })
      yield* dataset.write.csv(`${dir}/csv`, { fields, header: true, compression: "gzip" })
      yield* dataset.write.json(`${dir}/json`, { fields })
      return
    }
    const [format, path, escape] = args
    const read = format === "parquet"
      ? yield* kc.read.parquet(path!)
      : format === "csv"
      ? yield* kc.read.csv(path!, { fields, header: true, mode: "FAILFAST", ...(escape ? { escape } : {}) })
      : yield* kc.read.json(path!, { fields, mode: "FAILFAST" })
    yield* print((yield* read.collect()) as Array<Record<string, unknown>>)
  })
)
