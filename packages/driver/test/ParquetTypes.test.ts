// Every type pyarrow writes to Parquet, read by Kindling as its rows hold them, in local[2]: the fixtures under
// fixtures/interop/pyarrow-types are one table of every type (with each type's edge values and nulls) written with
// each writer's settings — dictionary and plain pages, data pages v1 and v2, the delta and byte-stream-split
// encodings, every codec, decimals as integers, Parquet 1.0's converted types and INT96 timestamps — and the rows as
// pyarrow reads them, in canonical form (scripts/compat/parquet_types.py made both; `pnpm test:formats-compat
// --fixtures` makes them again). Types Kindling does not read are refused, naming the column.
import { assert, layer } from "@effect/vitest"
import { InputNotReadable, Kindling } from "@kindling/app"
import { LocalMode } from "@kindling/driver"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { canonical } from "../../../scripts/compat/canonical.js"
import { driverConfig } from "./fixtures/driverConfig.js"

const local = LocalMode.layer({
  appName: "parquet-types",
  threads: 2,
  driver: driverConfig(1),
  heartbeatIntervalMillis: 10_000,
  validateState: true
})

const fixtures = Path.join(import.meta.dirname, "fixtures/interop/pyarrow-types")
const variants = Fs.readdirSync(fixtures).filter((name) => name.endsWith(".parquet")).sort()
// The rows as they reach the driver: records travel as MessagePack, which carries -0 as 0 (README: "Functions and
// values on executors").
const negativeZero = JSON.stringify({ float: "8000000000000000" })
const expected = Fs.readFileSync(Path.join(fixtures, "rows.jsonl"), "utf8").trim().split("\n")
  .map((line) =>
    JSON.parse(line, (_, value) => JSON.stringify(value) === negativeZero ? { int: "0" } : value) as Record<
      string,
      unknown
    >
  )

// The field each column is read as (Spark's mapping, where Kindling has the type: an unsigned 64-bit integer is a
// decimal(20,0), a 32-bit one a long; Parquet's NULL a string field of nulls; a UUID, a JSON value its text).
const types: Record<string, string> = {
  id: "long",
  int8: "int",
  int16: "int",
  int32: "int",
  int64: "long",
  uint8: "int",
  uint16: "int",
  uint32: "long",
  uint64: "decimal(20,0)",
  float16: "float",
  float32: "float",
  float64: "double",
  boolean: "boolean",
  string: "string",
  large_string: "string",
  string_view: "string",
  binary: "binary",
  large_binary: "binary",
  binary_view: "binary",
  fixed_size_binary: "binary",
  decimal32: "decimal(7,2)",
  decimal64: "decimal(15,3)",
  decimal128_small: "decimal(9,4)",
  decimal128_long: "decimal(18,0)",
  decimal128: "decimal(38,10)",
  decimal256: "decimal(38,38)",
  date32: "date",
  date64: "date",
  timestamp_s: "timestamp",
  timestamp_ms: "timestamp",
  timestamp_us: "timestamp",
  timestamp_ns: "timestamp",
  timestamp_ms_utc: "timestamp",
  timestamp_ns_utc: "timestamp",
  timestamp_us_zoned: "timestamp",
  duration_s: "long",
  duration_ns: "long",
  nothing: "string",
  dictionary_string: "string",
  dictionary_binary: "binary",
  uuid: "string",
  json: "string",
  list_int32: "array",
  large_list_string: "array",
  fixed_size_list_double: "array",
  list_binary: "array",
  list_decimal: "array",
  list_list_int64: "array",
  list_timestamp_ns: "array",
  struct: "struct",
  map_string_int64: "map",
  map_int32_binary: "map",
  list_struct: "array"
}
const nested = new Set(["array", "map", "struct"])
const flat = Object.keys(types).filter((name) => !nested.has(types[name]!))

const typeName = (field: { type: string; precision?: number; scale?: number }) =>
  field.type === "decimal" ? `decimal(${field.precision},${field.scale})` : field.type
const byId = (a: Record<string, unknown>, b: Record<string, unknown>) => ((a.id as bigint) < (b.id as bigint) ? -1 : 1)

// Rows compared a column at a time, so that a failure names the column and the first row that differs.
const assertRows = (rows: ReadonlyArray<Record<string, unknown>>, columns: ReadonlyArray<string>, what: string) => {
  assert.strictEqual(rows.length, expected.length, what)
  const sorted = [...rows].sort(byId)
  for (const column of columns) {
    const got = sorted.map((row) => canonical(row[column]))
    const want = expected.map((row) => row[column])
    const first = got.findIndex((value, i) => JSON.stringify(value) !== JSON.stringify(want[i]))
    assert.deepStrictEqual(
      got,
      want,
      `${what}: column ${column}, first at id ${first}: ${JSON.stringify(got[first])} for ${
        JSON.stringify(want[first])
      }`
    )
  }
}

layer(local, { timeout: 120_000 })("Parquet types pyarrow writes, in local[2]", (it) => {
  it.effect("every type reads as the rows pyarrow wrote, whatever the writer's settings", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      assert.isAtLeast(variants.length, 5)
      for (const variant of variants) {
        const dataset = yield* kc.read.parquet(Path.join(fixtures, variant))
        assert.deepStrictEqual(
          Object.fromEntries(dataset.fields!.map((field) => [field.name, typeName(field)])),
          types,
          variant
        )
        assertRows(yield* dataset.collect(), Object.keys(types), variant)
      }
    }))

  it.effect("a binary column's bytes are read as they are, not as UTF-8 text", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      const dataset = yield* kc.read.parquet(Path.join(fixtures, variants[0]!), { columns: ["id", "binary"] })
      const rows = (yield* dataset.collect()).sort(byId)
      // The first row of the table holds 00 80 ff (each writer's first row: ids are shuffled, so find it).
      const bytes = rows.map((row) => row.binary).filter((value) => value instanceof Uint8Array)
      assert.isTrue(bytes.some((value) => Buffer.from(value as Uint8Array).equals(Buffer.from([0x00, 0x80, 0xff]))))
      assert.isTrue(bytes.some((value) => Buffer.from(value as Uint8Array).equals(Buffer.from([0xc3, 0x28]))))
    }))

  it.effect("what Kindling read, it writes and reads back the same (pyarrow, Kindling, Kindling)", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "kindling-parquet-types-"))
      for (const variant of variants) {
        const read = yield* kc.read.parquet(Path.join(fixtures, variant), { columns: flat })
        const out = Path.join(dir, variant)
        yield* read.write.parquet(out, { rowGroupSize: 50 })
        const back = yield* kc.read.parquet(out)
        assert.deepStrictEqual(back.fields, read.fields, variant)
        assertRows(yield* back.collect(), flat, `${variant} written by Kindling`)
      }
      Fs.rmSync(dir, { recursive: true })
    }))

  it.effect("a type Kindling does not read is refused, naming the column and its type; the others read", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      const refused = Path.join(fixtures, "refused")
      const cases = [
        ["time32.parquet", "at", "TIME(MILLIS)"],
        ["time64.parquet", "at", "TIME(NANOS)"],
        ["decimal256.parquet", "amount", "decimal(50,3)"],
        ["nested-time.parquet", "times", "TIME(MICROS)"]
      ] as const
      for (const [file, column, type] of cases) {
        const error = yield* Effect.flip(kc.read.parquet(Path.join(refused, file)))
        assert.instanceOf(error, InputNotReadable, file)
        assert.include(error.message, `column ${column}`, file)
        assert.include(error.message, type, file)
        assert.include(error.message, "columns", file)
        assert.notInclude(error.message, "\n", file)
        const others = yield* kc.read.parquet(Path.join(refused, file), { columns: ["id"] })
        assert.deepStrictEqual(yield* others.collect(), [{ id: 1n }, { id: 2n }])
      }
    }))
})
