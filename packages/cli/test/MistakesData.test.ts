// Issue #42's mistakes with data files, each a real `kindling submit` of a small app in local[2]
// (fixtures/mistakes/data-*.ts): what a newcomer does wrong with Parquet, JSON and writes, and what they are told —
// the exit code, and the first line of stderr naming the problem (or, for the binary column, the right bytes).
import { assert, describe, it } from "@effect/vitest"
import { Deadlines } from "@kindling/protocol/testing"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { root, temporaryDirectory } from "./fixtures/cluster.js"
import { submitMistake } from "./fixtures/mistakes.js"

const app = (name: string) => Path.join(import.meta.dirname, "fixtures", "mistakes", `data-${name}.ts`)
const pyarrowTypes = Path.join(root, "packages/driver/test/fixtures/interop/pyarrow-types")

describe("mistakes with data files", () => {
  it.live(
    "a binary Parquet column pyarrow wrote is read as its bytes, not as UTF-8 text",
    () =>
      Effect.gen(function*() {
        const result = yield* submitMistake(app("binary-parquet"), [
          Path.join(pyarrowTypes, "dictionary-v1-snappy.parquet")
        ])
        assert.strictEqual(result.code, 0, result.stderr)
        assert.strictEqual(result.stderr, "")
        // The rows as pyarrow wrote them, their bytes in hex (scripts/compat/parquet_types.py).
        const expected = Fs.readFileSync(Path.join(pyarrowTypes, "rows.jsonl"), "utf8").trim().split("\n").map(
          (line) => {
            const row = JSON.parse(line) as { id: { int: string }; binary: { bytes: string } | null }
            return `${row.id.int} ${row.binary === null ? "null" : row.binary.bytes}`
          }
        )
        assert.deepStrictEqual(result.stdout.trim().split("\n"), expected)
        // Bytes that are no UTF-8 text among them: 00 80 ff, c3 28.
        assert.isTrue(
          expected.some((line) => line.endsWith(" 0080ff")) && expected.some((line) => line.endsWith(" c328"))
        )
      }),
    Deadlines.scaled(30_000)
  )

  it.scopedLive(
    "a file of one JSON array read as JSON lines is warned of, naming the file and multiLine",
    () =>
      Effect.gen(function*() {
        const dir = yield* temporaryDirectory
        const file = Path.join(dir, "people.json")
        Fs.writeFileSync(file, JSON.stringify([{ name: "ann", age: 31 }, { name: "bob", age: 42 }], null, 2))
        const lines = yield* submitMistake(app("json-array"), [file])
        assert.strictEqual(lines.code, 0, lines.stderr)
        assert.include(lines.firstLine, `WARN  Every one of the 10 records read from ${file} is malformed`)
        assert.include(lines.firstLine, "multiLine: true")
        const read = yield* submitMistake(app("json-array"), [file, "multiLine"])
        assert.strictEqual(read.code, 0, read.stderr)
        assert.strictEqual(read.stderr, "")
        assert.strictEqual(read.stdout, "2 records\n")
      }),
    Deadlines.scaled(30_000)
  )

  it.scopedLive("an option a reader does not have is refused, naming the nearest it has", () =>
    Effect.gen(function*() {
      const dir = yield* temporaryDirectory
      const file = Path.join(dir, "people.json")
      Fs.writeFileSync(file, "[]")
      const result = yield* submitMistake(app("unknown-option"), [file])
      assert.strictEqual(result.code, 1, result.stderr)
      assert.match(
        result.firstLine,
        /^InvalidArgument: read\.json has no option multiline \(did you mean multiLine\?\)/
      )
      assert.strictEqual(result.stdout, "")
    }), Deadlines.scaled(30_000))

  it.scopedLive(
    "a record that breaks the fields inferred from a sample is named, with the fields to give",
    () =>
      Effect.gen(function*() {
        const dir = yield* temporaryDirectory
        const out = Path.join(dir, "out")
        const result = yield* submitMistake(app("inferred-write"), [out])
        assert.strictEqual(result.code, 1, result.stderr)
        assert.include(
          result.firstLine,
          `FieldMismatch: the field amount was inferred as int from a sample of the records, but a record's amount is ` +
            `2000.5: {"id":2000,"amount":2000.5}; give the fields that hold it (fields: "id INT, amount DOUBLE")`
        )
        assert.isFalse(Fs.existsSync(out))
      }),
    Deadlines.scaled(30_000)
  )

  it.scopedLive("a failed write leaves no _temporary, and no part of its own", () =>
    Effect.gen(function*() {
      const dir = yield* temporaryDirectory
      const out = Path.join(dir, "out")
      const made = yield* submitMistake(app("failed-write"), [out])
      assert.strictEqual(made.code, 1, made.stderr)
      assert.include(made.firstLine, "Error: record 3500 is bad")
      // The write made the directory: it is gone, with the parts the other partitions committed.
      assert.isFalse(Fs.existsSync(out))
      // Into a directory that was there, nothing of the failed write is left beside what was.
      Fs.mkdirSync(out)
      Fs.writeFileSync(Path.join(out, "kept.csv"), "1,one\n")
      const appended = yield* submitMistake(app("failed-write"), [out, "append"])
      assert.strictEqual(appended.code, 1, appended.stderr)
      assert.include(appended.firstLine, "Error: record 3500 is bad")
      assert.deepStrictEqual(Fs.readdirSync(out), ["kept.csv"])
    }), Deadlines.scaled(30_000))

  it.live(
    "a Parquet column of a type Kindling does not read is refused, naming it and `columns`",
    () =>
      Effect.gen(function*() {
        const result = yield* submitMistake(app("time-column"), [Path.join(pyarrowTypes, "refused", "time32.parquet")])
        assert.strictEqual(result.code, 1, result.stderr)
        assert.match(
          result.firstLine,
          /^InputNotReadable: Input path .*time32\.parquet cannot be read: the column at is/
        )
        assert.include(result.firstLine, "INT32 TIME(MILLIS)")
        assert.include(result.firstLine, "leave it out with the option columns")
      }),
    Deadlines.scaled(30_000)
  )
})
