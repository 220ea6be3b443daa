/**
 * Readers and writers settle the fields of their records from what the app gives and what the files say: a field
 * named `__proto__`, which a record cannot hold (the property is an object's prototype, and MessagePack renames
 * the key between processes), is refused wherever it comes from, with a typed error saying what to do. None of
 * these reads runs a job, so an app context over a driver that runs nothing is enough.
 */
import { assert, describe, it } from "@effect/vitest"
import { AppContext, InvalidArgument } from "@kindling/app"
import { LocalFiles, Parquet } from "@kindling/data"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { recordingDriver } from "./fixtures/recordingDriver.js"

const context = () =>
  AppContext.make({ appName: "readers", master: "test", defaultParallelism: () => 2, driver: recordingDriver().driver })

const fresh = () => Fs.mkdtempSync(Path.join(Os.tmpdir(), "kindling-proto-"))

// The reason an effect failed with, which must be an InvalidArgument.
const refusal = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.map(Effect.flip(effect), (error) => {
    assert.instanceOf(error, InvalidArgument)
    return (error as InvalidArgument).reason
  })

const unholdable = "a field __proto__, which a record cannot hold (a property of that name is its prototype)"

describe("a field named __proto__ is refused where fields are settled", () => {
  it.effect("a CSV header naming one: read with other fields, or the header as a record", () =>
    Effect.gen(function*() {
      const kc = context()
      const file = Path.join(fresh(), "people.csv")
      Fs.writeFileSync(file, "name,__proto__\nada,1\n")
      assert.strictEqual(
        yield* refusal(kc.read.csv(file, { header: true })),
        `read.csv: the header of ${file} names ${unholdable}: name the fields with fields, or read the header as ` +
          "a record with header: false"
      )
      assert.include(yield* refusal(kc.read.csv(file, { header: true, inferSchema: true })), unholdable)
      // The ways out it names work.
      const renamed = yield* kc.read.csv(file, { header: true, fields: "name STRING, parent STRING" })
      assert.deepStrictEqual(renamed.fields?.map((field) => field.name), ["name", "parent"])
      const plain = yield* kc.read.csv(file)
      assert.deepStrictEqual(plain.fields?.map((field) => field.name), ["_c0", "_c1"])
    }))

  it.effect("fields given as DDL text or as a list, to CSV and JSON readers and to writers", () =>
    Effect.gen(function*() {
      const kc = context()
      const file = Path.join(fresh(), "people.csv")
      Fs.writeFileSync(file, "ada,1\n")
      const given = `the fields given have ${unholdable}: give that field another name`
      const ddl = "name STRING, `__proto__` INT"
      const list = [{ name: "__proto__", type: "string", nullable: true }] as const
      assert.strictEqual(yield* refusal(kc.read.csv(file, { fields: ddl })), `read.csv: ${given}`)
      assert.strictEqual(yield* refusal(kc.read.csv(file, { fields: list })), `read.csv: ${given}`)
      assert.strictEqual(yield* refusal(kc.read.json(file, { fields: ddl })), `read.json: ${given}`)
      assert.strictEqual(yield* refusal(kc.read.json(file, { fields: list })), `read.json: ${given}`)
      // Without fields, JSON records are the values read, and a malformed one's text is kept under this name.
      assert.strictEqual(
        yield* refusal(kc.read.json(file, { columnNameOfCorruptRecord: "__proto__" })),
        `read.json: columnNameOfCorruptRecord names ${unholdable}: give it another name`
      )
      const records = kc.parallelize([{ name: "ada" }])
      for (const write of ["csv", "json", "parquet"] as const) {
        const out = Path.join(fresh(), "out")
        assert.strictEqual(yield* refusal(records.write[write](out, { fields: ddl })), `write.${write}: ${given}`)
        assert.strictEqual(yield* refusal(records.write[write](out, { fields: list })), `write.${write}: ${given}`)
      }
    }))

  it.effect("a Parquet file with a column __proto__: read its other columns", () =>
    Effect.gen(function*() {
      const kc = context()
      const file = Path.join(fresh(), "people.parquet")
      // Written by the data layer's own writer, below the app's check: a record with its own property __proto__.
      const record = JSON.parse(`{"name": "ada", "__proto__": "x"}`) as unknown
      const fields = [
        { name: "name", type: "string", nullable: true },
        { name: "__proto__", type: "string", nullable: true }
      ] as const
      const writer = LocalFiles.files.openWrite(file)
      Parquet.write([record], fields, { codec: "uncompressed", rowGroupSize: 10 }, writer)
      writer.close()
      assert.strictEqual(
        yield* refusal(kc.read.parquet(file)),
        `read.parquet: ${file} has ${unholdable}: read the other columns with columns, or write the file with ` +
          "that column named otherwise"
      )
      const other = yield* kc.read.parquet(file, { columns: ["name"] })
      assert.deepStrictEqual(other.fields?.map((field) => field.name), ["name"])
    }))
})
