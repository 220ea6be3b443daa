import { assert, describe, it } from "@effect/vitest"
import type { DataFormats } from "@kindling/protocol"
import { FastCheck as fc } from "effect"
import * as JsonLines from "../src/JsonLines.js"
import { MalformedRecord } from "../src/ParseModes.js"
import { byId, canonicalRows, interopFiles, rowFields } from "./fixtures/interopRows.js"

interface Read {
  readonly fields?: ReadonlyArray<DataFormats.Field>
  readonly mode?: DataFormats.ParseMode
  readonly corruptRecordField?: string
  readonly multiLine?: boolean
}
const read = (lines: ReadonlyArray<string>, options: Read = {}) =>
  // A batch per line: the line numbers in messages count across batches.
  Array.from(JsonLines.records(lines.map((line) => [line]), {
    _tag: "JsonLines",
    mode: options.mode ?? "PERMISSIVE",
    ...(options.fields === undefined ? {} : { fields: options.fields }),
    ...(options.corruptRecordField === undefined ? {} : { corruptRecordField: options.corruptRecordField })
  }, { path: "data.json", firstLine: () => 1, multiLine: options.multiLine ?? false }))

const f = (name: string, type: DataFormats.FieldType): DataFormats.Field => ({ name, type, nullable: true })

describe("JsonLines", () => {
  it("the JSON lines Spark wrote read as the rows they hold, and written again read back the same", () => {
    const expected = canonicalRows().sort(byId)
    const rows = interopFiles("spark-json").flatMap((text) =>
      read(text.split("\n"), { fields: rowFields, mode: "FAILFAST" })
    ) as Array<{ id: bigint }>
    assert.deepStrictEqual(rows.sort(byId), expected)
    const written = expected.map((row) => JsonLines.line(row, rowFields))
    assert.deepStrictEqual(read(written, { fields: rowFields, mode: "FAILFAST" }), expected)
  })

  it("records of any values, written as lines, read back as themselves; one multi-line array of them too", () => {
    const fields = [f("n", "long"), f("x", "double"), f("s", "string"), f("b", "boolean"), f("t", "timestamp")]
    const row = fc.record({
      n: fc.option(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })),
      x: fc.option(fc.double({ noNaN: true, noDefaultInfinity: true }).map((x) => (Object.is(x, -0) ? 0 : x))),
      s: fc.option(fc.string()),
      b: fc.option(fc.boolean()),
      t: fc.option(fc.date({ min: new Date("1900-01-01T00:00:00Z"), max: new Date("9999-12-31T00:00:00Z") }))
    })
    fc.assert(
      fc.property(fc.array(row, { maxLength: 8 }), fc.constantFrom("", " ", "\n  "), (rows, gap) => {
        const lines = rows.map((r) => JsonLines.line(r, fields))
        assert.deepStrictEqual(read(lines, { fields, mode: "FAILFAST" }), rows)
        const file = `[${gap}${lines.join(`,${gap}`)}${gap}]`.split("\n")
        assert.deepStrictEqual(read(file, { fields, mode: "FAILFAST", multiLine: true }), rows)
      })
    )
  })

  it("multiLine: one value, values one after another pretty-printed, or an array's elements", () => {
    const pretty = JSON.stringify({ a: 1, b: [1, 2] }, null, 2)
    assert.deepStrictEqual(read(pretty.split("\n"), { multiLine: true }), [{ a: 1, b: [1, 2] }])
    assert.deepStrictEqual(read(`${pretty}\n${pretty}`.split("\n"), { multiLine: true }), [
      { a: 1, b: [1, 2] },
      { a: 1, b: [1, 2] }
    ])
    assert.deepStrictEqual(read(["[", " {\"s\": \"a ] , [\"},", " 3 ,\"x\"", "]"], { multiLine: true }), [
      { s: "a ] , [" },
      3,
      "x"
    ])
    assert.deepStrictEqual(read(["[]"], { multiLine: true }), [])
  })

  it("each mode's answer to a line that is no JSON, no object, or a value that does not fit its field", () => {
    const fields = [f("n", "int")]
    const lines = ["{\"n\": 1}", "{\"n\": ", "[1]", "{\"n\": \"x\"}", "", "{\"m\": 2}"]
    assert.deepStrictEqual(read(lines, { fields, corruptRecordField: "bad" }), [
      { n: 1, bad: null },
      { n: null, bad: "{\"n\": " },
      { n: null, bad: "[1]" },
      { n: null, bad: "{\"n\": \"x\"}" },
      { n: null, bad: null }
    ])
    assert.deepStrictEqual(read(lines, { fields, mode: "DROPMALFORMED" }), [{ n: 1 }, { n: null }])
    assert.throws(() => read(lines, { fields, mode: "FAILFAST" }), MalformedRecord, "in data.json at line 2: no JSON")
    assert.throws(
      () => read(["[1]"], { fields, mode: "FAILFAST" }),
      MalformedRecord,
      "at line 1: the line is no JSON object"
    )
    // Without fields, values are records as they parse.
    assert.deepStrictEqual(read(["1", "\"s\"", "[true]", "12345678901234567890"]), [
      1,
      "s",
      [true],
      12345678901234567890n
    ])
  })

  // A record cannot hold a key __proto__ (MessagePack renames it between processes): a line with one is malformed,
  // as its record would arrive changed.
  it("a line whose object has a key __proto__, at the top or nested, plainly or escaped, is malformed", () => {
    const lines = [
      "{\"a\": 1, \"__proto__\": {\"b\": 2}}",
      "{\"a\": 2}",
      "{\"a\": [{\"\\u005f_proto__\": 1}]}",
      "{\"a\": \"__proto__\"}"
    ]
    assert.deepStrictEqual(read(lines, { corruptRecordField: "_corrupt_record" }), [
      { _corrupt_record: lines[0] },
      { a: 2 },
      { _corrupt_record: lines[2] },
      { a: "__proto__" }
    ])
    assert.deepStrictEqual(read(lines, { mode: "DROPMALFORMED" }), [{ a: 2 }, { a: "__proto__" }])
    assert.throws(
      () => read(lines, { mode: "FAILFAST" }),
      MalformedRecord,
      "in data.json at line 1: it has a key __proto__, which a record cannot hold"
    )
    assert.throws(() => read([lines[0]!], { mode: "FAILFAST", multiLine: true }), MalformedRecord, "key __proto__")
    // With fields, a key the fields do not name is left out, as any other; a nested value that has one is malformed.
    const fields = [f("a", "int"), f("m", "map")]
    const withFields = ["{\"a\": 1, \"__proto__\": 2}", "{\"a\": 3, \"m\": {\"__proto__\": 4}}"]
    assert.deepStrictEqual(read(withFields, { fields, corruptRecordField: "bad" }), [
      { a: 1, m: null, bad: null },
      { a: 3, m: null, bad: withFields[1] }
    ])
    assert.throws(
      () => read(withFields, { fields, mode: "FAILFAST" }),
      MalformedRecord,
      "at line 2: cannot read \"{\\\"__proto__\\\":4}\" as map (field \"m\"): it has a key __proto__"
    )
  })

  it("line: Spark's forms of a record's values", () => {
    const fields = [f("day", "date"), { ...f("price", "decimal"), precision: 10, scale: 2 }]
    assert.strictEqual(
      JsonLines.line({ day: new Date("2021-03-04T00:00:00Z"), price: "12.5", other: 1n }, fields),
      "{\"day\":\"2021-03-04\",\"price\":12.50,\"other\":1}"
    )
    assert.strictEqual(JsonLines.line([1, "a"]), "[1,\"a\"]")
    assert.strictEqual(JsonLines.line("text", fields), "\"text\"")
  })

  it("recordBatches: the records records gives, in batches of 1,024 at most; with multiLine, the file's in one", () => {
    const lines = Array.from({ length: 1500 }, (_, i) => (i % 7 === 3 ? "" : i % 11 === 5 ? "{oops" : `{"n":${i}}`))
    const batches = [lines.slice(0, 600), lines.slice(600)]
    for (const multiLine of [false, true]) {
      for (const mode of ["PERMISSIVE", "DROPMALFORMED"] as const) {
        const format = { _tag: "JsonLines" as const, mode, fields: [f("n", "long")], corruptRecordField: "bad" }
        const place = { path: "data.json", firstLine: () => 1, multiLine }
        const batched = Array.from(JsonLines.recordBatches(batches, format, place))
        assert.isTrue(batched.every((batch) => batch.length <= (multiLine ? Infinity : 1024)))
        assert.strictEqual(batched.length, multiLine ? 1 : 2)
        assert.deepStrictEqual(batched.flat(), Array.from(JsonLines.records(batches, format, place)))
      }
    }
  })
})
