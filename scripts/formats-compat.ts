/**
 * `pnpm test:formats-compat`: do other tools read what Kindling writes, and does Kindling read what they write?
 * Opt-in (not part of `pnpm test`): it installs pyarrow and pyspark from PyPI when missing and needs Java 17. Rows
 * of every field type (scripts/compat/formats-app.ts makes them from a seed) are
 *
 * - written by Kindling as Parquet (zstd pages), gzip'd CSV and JSON lines, and read by pyarrow and by Spark;
 * - written by pyarrow (Parquet with snappy, gzip and zstd pages; CSV) and by Spark (Parquet, CSV, JSON lines),
 *   and read by Kindling;
 *
 * every reading compared, row by row, with the rows as written (their canonical form: scripts/compat). And
 * Parquet's every type, both ways (scripts/compat/parquet_types.py, in its canonical form):
 *
 * - pyarrow's table of every type it writes (the default suite reads it: fixtures/interop/pyarrow-types) read by
 *   Kindling, written again by Kindling, and read by pyarrow, value by value as pyarrow wrote them;
 * - Kindling's rows of every field type (bytes and floats too) written by Kindling and read by pyarrow, then written
 *   again by pyarrow and read by Kindling.
 *
 * One PASS/FAIL line per check; the exit code is the number of failed checks. With `--fixtures`, the files pyarrow
 * and Spark wrote are copied to packages/driver/test/fixtures/interop, which the default suite reads, with a Parquet
 * file of nested columns pyarrow writes for it and pyarrow's files of every type.
 */
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Url from "node:url"
import { sparkHome } from "./pyspark.js"

const root = Path.resolve(Path.dirname(Url.fileURLToPath(import.meta.url)), "..")
const work = Fs.mkdtempSync(Path.join(Os.tmpdir(), "kindling-formats-compat-"))
const app = Path.join(root, "scripts/compat/formats-app.ts")
const peer = Path.join(root, "scripts/compat/formats_peer.py")
const seed = "7"
const rows = "120"
let failures = 0

const kindling = (args: ReadonlyArray<string>) =>
  ChildProcess.spawnSync(
    process.execPath,
    [...process.execArgv, "--conditions=@kindling/source", Path.join(root, "packages/cli/src/bin.ts"), ...args],
    { cwd: root, encoding: "utf8", timeout: 300_000, maxBuffer: 1 << 26 }
  )
const submit = (...args: ReadonlyArray<string>) => kindling(["submit", "--master", "local[2]", app, ...args])
const types = Path.join(root, "scripts/compat/parquet_types.py")
const python = (...args: ReadonlyArray<string>) =>
  ChildProcess.spawnSync("python3", args[0] === types ? args : [peer, ...args], {
    encoding: "utf8",
    timeout: 300_000,
    maxBuffer: 1 << 26,
    env: { ...process.env, TZ: "UTC", PYSPARK_PYTHON: "python3" }
  })

const check = (name: string, result: ChildProcess.SpawnSyncReturns<string>, expected: string) => {
  const ok = result.status === 0 && result.stdout.trim() === expected
  if (!ok) failures++
  console.log(`${ok ? "PASS" : "FAIL"} ${name}`)
  if (!ok) {
    const got = result.stdout.trim().split("\n")
    const want = expected.split("\n")
    const first = want.findIndex((line, i) => got[i] !== line)
    console.log(`    exit ${result.status}; ${got.length} rows for ${want.length}`)
    if (first >= 0) {
      console.log(`    first difference, row ${first}:\n      want ${want[first]}\n      got  ${got[first]}`)
    }
    console.log(result.stderr.trim().split("\n").slice(-15).map((line) => `    ${line}`).join("\n"))
  }
}

const ensurePyarrow = () => {
  if (ChildProcess.spawnSync("python3", ["-c", "import pyarrow"]).status === 0) return
  console.log("Installing pyarrow from PyPI…")
  const install = (flags: ReadonlyArray<string>) =>
    ChildProcess.spawnSync("python3", ["-m", "pip", "install", "--quiet", ...flags, "pyarrow"], { stdio: "inherit" })
      .status === 0
  if (!install([])) install(["--user", "--break-system-packages"])
}

sparkHome()
ensurePyarrow()
const expectedRun = submit("expected", seed, rows)
if (expectedRun.status !== 0) throw new Error(`the expected rows could not be made:\n${expectedRun.stderr}`)
const expected = expectedRun.stdout.trim()
const rowsFile = Path.join(work, "rows.jsonl")
Fs.writeFileSync(rowsFile, expected + "\n")

// Kindling writes; pyarrow and Spark read.
const written = Path.join(work, "kindling")
const write = submit("write", seed, rows, written)
if (write.status !== 0) throw new Error(`Kindling could not write the rows:\n${write.stderr}`)
// Spark reads an empty CSV value as null, quoted or not (its nullValue is the empty string, which it compares
// after unquoting): there, the rows' empty names are nulls.
const emptyAsNull = expected.replaceAll(`"name":""`, `"name":null`)
for (const tool of ["pyarrow", "spark"]) {
  for (const format of ["parquet", "csv", "json"]) {
    const want = tool === "spark" && format === "csv" ? emptyAsNull : expected
    check(`${tool} reads Kindling's ${format}`, python(`${tool}-read`, format, Path.join(written, format)), want)
  }
}

// pyarrow and Spark write; Kindling reads.
for (const tool of ["pyarrow", "spark"]) {
  const dir = Path.join(work, tool)
  const made = python(`${tool}-write`, rowsFile, dir)
  if (made.status !== 0) {
    failures++
    console.log(`FAIL ${tool} writes the rows\n${made.stderr}`)
    continue
  }
  for (const name of Fs.readdirSync(dir).sort()) {
    const format = name.split("-")[0]!
    // Spark escapes a quote in a quoted CSV value with a backslash (its default), pyarrow doubles it.
    const escape = tool === "spark" && format === "csv" ? ["\\"] : []
    check(`Kindling reads ${tool}'s ${name}`, submit("read", format, Path.join(dir, name), ...escape), expected)
  }
}

// Parquet's every type: pyarrow's, through Kindling and back to pyarrow.
const typesDir = Path.join(work, "pyarrow-types")
const typesMade = python(types, "write", typesDir)
if (typesMade.status !== 0) throw new Error(`pyarrow could not write every type:\n${typesMade.stderr}`)
const typesRows = Fs.readFileSync(Path.join(typesDir, "rows.jsonl"), "utf8").trim().split("\n")
for (const file of Fs.readdirSync(typesDir).filter((name) => name.endsWith(".parquet")).sort()) {
  check(
    `Kindling reads pyarrow's every type (${file})`,
    submit("parquet-read", Path.join(typesDir, file)),
    // Records reach the driver as MessagePack, which carries -0 as 0.
    typesRows.join("\n").replaceAll(`{"float":"8000000000000000"}`, `{"int":"0"}`)
  )
  const rewritten = Path.join(work, "kindling-types", file)
  const rewrite = submit("parquet-rewrite", Path.join(typesDir, file), rewritten)
  if (rewrite.status !== 0) throw new Error(`Kindling could not write pyarrow's every type again:\n${rewrite.stderr}`)
  // The rewrite prints the columns it wrote: those that are not nested, which Kindling does not write yet.
  const columns = (JSON.parse(rewrite.stdout) as Array<string>).sort()
  const flatRows = typesRows.map((line) => {
    const row = JSON.parse(line) as Record<string, unknown>
    return JSON.stringify(Object.fromEntries(columns.map((name) => [name, row[name]])))
  })
  check(
    `pyarrow reads Kindling's rewrite of every type (${file})`,
    python(types, "read", rewritten),
    flatRows.join("\n")
  )
}

// Kindling's every field type: to pyarrow, and back through pyarrow's own writer.
const parquetExpected = submit("parquet-expected", seed, rows)
if (parquetExpected.status !== 0) throw new Error(`the expected rows could not be made:\n${parquetExpected.stderr}`)
const kindlingParquet = Path.join(work, "kindling-parquet")
const parquetWrite = submit("parquet-write", seed, rows, kindlingParquet)
if (parquetWrite.status !== 0) throw new Error(`Kindling could not write the rows:\n${parquetWrite.stderr}`)
check(
  "pyarrow reads Kindling's Parquet of every field type",
  python(types, "read", kindlingParquet),
  parquetExpected.stdout.trim()
)
const pyarrowParquet = Path.join(work, "pyarrow-rewrite")
const pyarrowRewrite = python(types, "rewrite", kindlingParquet, pyarrowParquet)
if (pyarrowRewrite.status !== 0) {
  throw new Error(`pyarrow could not write Kindling's rows again:\n${pyarrowRewrite.stderr}`)
}
check(
  "Kindling reads pyarrow's rewrite of its Parquet of every field type",
  submit("parquet-read", pyarrowParquet),
  parquetExpected.stdout.trim()
)

if (process.argv.includes("--fixtures")) {
  const fixtures = Path.join(root, "packages/driver/test/fixtures/interop")
  Fs.rmSync(fixtures, { recursive: true, force: true })
  Fs.mkdirSync(fixtures, { recursive: true })
  Fs.copyFileSync(rowsFile, Path.join(fixtures, "rows.jsonl"))
  for (const tool of ["pyarrow", "spark"]) {
    const dir = Path.join(work, tool)
    for (const name of Fs.readdirSync(dir)) {
      Fs.cpSync(Path.join(dir, name), Path.join(fixtures, `${tool}-${name}`), {
        recursive: true,
        // Spark's checksums and markers are not what the fixtures are about.
        filter: (source) => !Path.basename(source).startsWith(".") && Path.basename(source) !== "_SUCCESS"
      })
    }
  }
  const nested = python("pyarrow-write-nested", Path.join(fixtures, "pyarrow-nested"))
  if (nested.status !== 0) throw new Error(`pyarrow could not write the nested fixture:\n${nested.stderr}`)
  Fs.cpSync(typesDir, Path.join(fixtures, "pyarrow-types"), { recursive: true })
  console.log(`Fixtures written to ${Path.relative(root, fixtures)}`)
}
Fs.rmSync(work, { recursive: true, force: true })
process.exit(failures)
