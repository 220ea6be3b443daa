import { assert, describe, it } from "@effect/vitest"
import type { DataFormats } from "@kindling/protocol"
import { parquetMetadata, parquetReadObjects } from "hyparquet"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as LocalFiles from "../src/LocalFiles.js"
import * as Parquet from "../src/Parquet.js"

const fields: DataFormats.Fields = [
  { name: "n", type: "long", nullable: false },
  { name: "amount", type: "double", nullable: true },
  { name: "quantity", type: "int", nullable: true },
  { name: "country", type: "string", nullable: true },
  { name: "flag", type: "boolean", nullable: true },
  { name: "note", type: "string", nullable: true }
]

// Rows whose optional columns have nulls now and then, in runs, or never (`quantity` before row 150,000, `note`
// before row 50,000): in 100,000-row groups, `note` spans several pages, some with nulls and some without.
const rowsOf = (count: number) =>
  Array.from({ length: count }, (_, i) => ({
    n: BigInt(i),
    amount: i % 7 === 3 ? null : i * 0.25,
    quantity: i >= 150_000 && i % 1000 < 10 ? null : i % 20,
    country: i % 11 === 0 ? null : `country-${i % 40}`,
    flag: i % 5 === 0 ? null : i % 2 === 0,
    note: i >= 50_000 && i % 3 === 0 ? null : `row ${i} of the test, distinct`
  }))

describe("Parquet.rows", () => {
  it("gives hyparquet's own rows for flat optional columns, nulls in some pages and none in others", async () => {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "kindling-parquet-"))
    try {
      const path = Path.join(dir, "rows.parquet")
      const writer = LocalFiles.files.openWrite(path)
      const written = rowsOf(250_000)
      Parquet.write(written, fields, { codec: "snappy", rowGroupSize: 100_000 }, writer)
      writer.close()
      const bytes = Fs.readFileSync(path)
      const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)
      const note = parquetMetadata(file).row_groups[0]!.columns[5]!.meta_data!
      assert.isAbove(Number(note.total_uncompressed_size), 2 << 20, "note's chunk has pages of 1 MiB, three or more")
      const expected = await parquetReadObjects({ file })
      const read = Array.from(Parquet.rows(LocalFiles.files, path, [0, 1, 2], fields))
      assert.strictEqual(read.length, written.length)
      assert.deepStrictEqual(read, expected)
      assert.deepStrictEqual(read[3], {
        n: 3n,
        amount: null,
        quantity: 3,
        country: "country-3",
        flag: false,
        note: "row 3 of the test, distinct"
      })
      assert.deepStrictEqual(read[150_003], {
        n: 150_003n,
        amount: 37_500.75,
        quantity: null,
        country: "country-3",
        flag: false,
        note: null
      })
      assert.deepStrictEqual(Array.from(Parquet.rows(LocalFiles.files, path, [2], fields)), expected.slice(200_000))
      // The same rows in batches of at most 1,024, each row group's last one short (100,000 and 50,000 rows).
      const batches = Array.from(Parquet.rowBatches(LocalFiles.files, path, [1, 2], fields))
      assert.deepStrictEqual(batches.map((batch) => batch.length).filter((n) => n !== 1024), [672, 848])
      assert.deepStrictEqual(batches.flat(), expected.slice(100_000))
    } finally {
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
