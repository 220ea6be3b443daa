import { assert, describe, it } from "@effect/vitest"
import type { DataFormats } from "@kindling/protocol"
import { FastCheck as fc } from "effect"
import * as FieldValues from "../src/FieldValues.js"
import { canonicalRows, interopFiles, rowFields } from "./fixtures/interopRows.js"

type Field = DataFormats.Field
type FieldType = DataFormats.FieldType

const field = (type: FieldType, more: Partial<Field> = {}): Field => ({ name: "v", type, nullable: true, ...more })
const unparsable = (read: () => unknown, text: string) => {
  try {
    read()
  } catch (error) {
    assert.instanceOf(error, FieldValues.Unparsable)
    assert.strictEqual((error as FieldValues.Unparsable).text, text)
    return (error as FieldValues.Unparsable).message
  }
  return assert.fail(`${JSON.stringify(text)} was read`)
}

// A JSON tree with integers past 2^53 and doubles of 17 digits, the values JSON.parse would round or keep.
const jsonTree = fc.letrec((tie) => ({
  leaf: fc.oneof(
    fc.string(),
    fc.boolean(),
    fc.constant(null),
    fc.integer(),
    fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }),
    fc.double({ noNaN: true, noDefaultInfinity: true }).filter((x) => !Number.isInteger(x) || Number.isSafeInteger(x))
  ),
  node: fc.oneof({ depthSize: "small" }, tie("leaf"), tie("array"), tie("object")),
  array: fc.array(tie("node"), { maxLength: 4 }),
  object: fc.dictionary(fc.string(), tie("node"), { maxKeys: 4 })
})).node
// What JSON.parse makes of the tree, but for integers it would round: those stay bigints.
const parsedTree = (value: unknown): unknown =>
  typeof value === "bigint"
    ? (Number.isSafeInteger(Number(value)) ? Number(value) : value)
    : Array.isArray(value)
    ? value.map(parsedTree)
    : typeof value === "object" && value !== null
    ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, parsedTree(v)]))
    : value

describe("FieldValues", () => {
  describe("against Spark's and pyarrow's answers", () => {
    it("Spark's JSON lines of the interop rows read, field by field, as the canonical rows", () => {
      const expected = new Map(canonicalRows().map((row) => [row.id, row]))
      let rows = 0
      for (const line of interopFiles("spark-json").flatMap((text) => text.split("\n")).filter((l) => l !== "")) {
        // Raw: the ids (past 2^53) and prices (16 digits and more) keep their digits until their fields say.
        const json = FieldValues.parseJson(line, true) as Record<string, unknown>
        const row = Object.fromEntries(rowFields.map((f) => [f.name, FieldValues.fromJson(f, json[f.name])]))
        assert.deepStrictEqual(row, { ...expected.get(row.id as bigint) }, line)
        rows++
      }
      assert.strictEqual(rows, expected.size)
    })

    it("the canonical values of the interop rows, written as text, read back as themselves", () => {
      for (const row of canonicalRows()) {
        for (const f of rowFields) {
          const value = row[f.name as keyof typeof row]
          if (value !== null) assert.deepStrictEqual(FieldValues.fromText(f, FieldValues.toText(value, f.type)), value)
        }
      }
    })
  })

  describe("text to value", () => {
    it("a number of digits, a point and a sign reads as Number reads it, -0 included", () => {
      // Texts of the shape read by character codes, and of lengths on either side of its 15 digits.
      const digits = fc.string({ unit: fc.constantFrom("0", "1", "5", "9"), maxLength: 18 })
      const text = fc.tuple(fc.constantFrom("", "-", "+"), digits, fc.constantFrom("", "."), digits)
        .map(([sign, whole, point, fraction]) => `${sign}${whole}${point}${fraction}`)
      fc.assert(
        fc.property(text, (text) => {
          const expected = /\d/.test(text) ? Number(text) : undefined
          const read = (type: FieldType) => {
            try {
              return FieldValues.fromText(field(type), text)
            } catch (error) {
              assert.instanceOf(error, FieldValues.Unparsable)
              return undefined
            }
          }
          assert.isTrue(Object.is(read("double"), expected), `${text}: ${read("double")} for ${expected}`)
          const integral = expected !== undefined && /^[+-]?\d+$/.test(text) && Math.abs(expected) < 2 ** 31
          assert.isTrue(Object.is(read("int"), integral ? expected : undefined), text)
        }),
        { numRuns: 2000 }
      )
    })

    it("a value surrounded by white space, Unicode's too, reads as the value; a string keeps its spaces", () => {
      for (const space of [" ", "\t", "\u00a0", "\ufeff", "\u2028"]) {
        const padded = (text: string) => [`${space}${text}`, `${text}${space}`, `${space}${text}${space}`]
        for (const text of padded("12")) {
          assert.strictEqual(FieldValues.fromText(field("int"), text), 12)
          assert.strictEqual(FieldValues.textReader(field("double"))(text), 12)
          assert.strictEqual(FieldValues.textReader(field("string"))(text), text)
        }
        for (const text of padded("true")) assert.strictEqual(FieldValues.fromText(field("boolean"), text), true)
      }
      for (const text of ["", " ", "+", "-", "1.0", "1e3", "\u00a0"]) {
        unparsable(() => FieldValues.textReader(field("int"))(text), text)
      }
    })

    it("every type's values written as text read back as themselves", () => {
      const roundTrip = (type: FieldType, value: unknown, more: Partial<Field> = {}) =>
        assert.deepStrictEqual(FieldValues.fromText(field(type, more), FieldValues.toText(value, type)), value)
      fc.assert(
        fc.property(
          fc.integer(),
          fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
          fc.double(),
          fc.float(),
          fc.boolean(),
          fc.date({ min: new Date("1900-01-01T00:00:00Z"), max: new Date("9999-12-31T23:59:59.999Z") }),
          fc.uint8Array({ maxLength: 20 }),
          (int, long, double, float, bool, time, bytes) => {
            roundTrip("int", int)
            roundTrip("long", long)
            roundTrip("double", double)
            roundTrip("float", float)
            roundTrip("boolean", bool)
            roundTrip("timestamp", time)
            roundTrip("date", new Date(Math.floor(time.getTime() / 86_400_000) * 86_400_000))
            roundTrip("binary", bytes)
          }
        )
      )
    })

    it("a date of any year 0001-9999 reads as that day of the proleptic Gregorian calendar", () => {
      fc.assert(
        fc.property(fc.date({ min: new Date("0001-01-01T00:00:00Z"), max: new Date("9999-12-31T00:00:00Z") }), (t) => {
          const day = new Date(Math.floor(t.getTime() / 86_400_000) * 86_400_000)
          const text = day.toISOString().slice(0, 10)
          assert.deepStrictEqual(FieldValues.fromText(field("date"), text), day, text)
        })
      )
    })

    it("a timestamp of any year 0001-9999 reads as that instant, the years below 100 too (no 19xx)", () => {
      fc.assert(
        fc.property(
          fc.date({ min: new Date("0001-01-01T00:00:00Z"), max: new Date("9999-12-31T23:59:59.999Z") }),
          (t) => {
            const text = t.toISOString()
            assert.deepStrictEqual(FieldValues.fromText(field("timestamp"), text), t, text)
          }
        )
      )
      assert.deepStrictEqual(
        FieldValues.fromText(field("timestamp"), "0050-01-01T00:00:00Z"),
        new Date("0050-01-01T00:00:00Z")
      )
      // A day that is not one, or a time past its day, is no timestamp (Date.UTC rolled them over into others).
      for (const text of ["2021-02-29T00:00:00Z", "2021-13-01T00:00:00Z", "2021-01-01T24:00:00Z"]) {
        unparsable(() => FieldValues.fromText(field("timestamp"), text), text)
      }
    })

    it("a day alone where a timestamp is expected is its midnight, as Spark's CSV and JSON readers fall back to", () => {
      assert.deepStrictEqual(
        FieldValues.fromText(field("timestamp"), "2021-01-01"),
        new Date("2021-01-01T00:00:00Z")
      )
    })

    it("a decimal's text is its unscaled integer at its scale, and back", () => {
      fc.assert(
        fc.property(fc.bigInt({ min: -(10n ** 38n) + 1n, max: 10n ** 38n - 1n }), fc.nat({ max: 38 }), (u, scale) => {
          const text = FieldValues.decimalFromUnscaled(u, scale)
          assert.strictEqual(FieldValues.unscaledDecimal(text, 38, scale), u)
          assert.strictEqual(FieldValues.fromText(field("decimal", { precision: 38, scale }), text), text)
          // The precision counts the unscaled integer's digits.
          const digits = (u < 0n ? -u : u).toString().length
          assert.strictEqual(FieldValues.unscaledDecimal(text, digits, scale), u)
          if (u !== 0n) assert.isUndefined(FieldValues.unscaledDecimal(text, digits - 1, scale))
        })
      )
      assert.strictEqual(FieldValues.decimalFromUnscaled(-1250n, 2), "-12.50")
      assert.strictEqual(FieldValues.decimalFromUnscaled(5n, 3), "0.005")
      assert.strictEqual(FieldValues.decimalFromUnscaled(42n, 0), "42")
    })

    it("decimals round half up at their scale, and take exponents; more digits than the precision do not fit", () => {
      const price = field("decimal", { precision: 5, scale: 2 })
      assert.strictEqual(FieldValues.fromText(price, "1.005"), "1.01")
      assert.strictEqual(FieldValues.fromText(price, "-1.005"), "-1.01")
      assert.strictEqual(FieldValues.fromText(price, "1.004"), "1.00")
      assert.strictEqual(FieldValues.fromText(price, " 12.5 "), "12.50")
      assert.strictEqual(FieldValues.fromText(price, "1.5e2"), "150.00")
      assert.strictEqual(FieldValues.fromText(price, "150E-2"), "1.50")
      assert.strictEqual(FieldValues.fromText(price, ".5"), "0.50")
      assert.strictEqual(FieldValues.fromText(price, "+999.994"), "999.99")
      assert.strictEqual(FieldValues.fromText(field("decimal"), "7"), "7")
      for (const text of ["1000", "999.995", ".", "", "1.2.3", "e5", "abc"]) {
        unparsable(() => FieldValues.fromText(price, text), text)
      }
    })

    // A CSV's nested value is its JSON: one with a key __proto__ a record cannot hold (it would be renamed
    // between processes), so it is Unparsable, saying why; a value __proto__ is only text.
    it("a nested value with a key __proto__, at any depth, is unparsable", () => {
      for (
        const [type, text] of [
          ["map", "{\"__proto__\": 1}"],
          ["struct", "{\"a\": {\"__proto__\": {}}}"],
          ["array", "[1, {\"\\u005f_proto__\": 2}]"]
        ] as const
      ) {
        const message = unparsable(() => FieldValues.fromText(field(type), text), text)
        assert.include(message, "it has a key __proto__, which a record cannot hold", text)
      }
      assert.deepStrictEqual(FieldValues.fromText(field("map"), "{\"a\": \"__proto__\"}"), { a: "__proto__" })
    })

    it("integers: ints within 32 bits and longs within 64, in decimal digits only", () => {
      const int = field("int")
      const long = field("long")
      assert.strictEqual(FieldValues.fromText(int, " -2147483648 "), -2147483648)
      assert.strictEqual(FieldValues.fromText(int, "+2147483647"), 2147483647)
      assert.strictEqual(FieldValues.fromText(long, "-9223372036854775808"), -(2n ** 63n))
      assert.strictEqual(FieldValues.fromText(long, "999999999999999999"), 999999999999999999n)
      assert.strictEqual(FieldValues.fromText(long, "0009223372036854775807"), 2n ** 63n - 1n)
      for (const text of ["2147483648", "-2147483649", "1.0", "1e3", "0x10", "0b1", "1_000", "", "Infinity", "- 1"]) {
        unparsable(() => FieldValues.fromText(int, text), text)
      }
      for (const text of ["9223372036854775808", "-9223372036854775809", "1.5", "0x10", ""]) {
        unparsable(() => FieldValues.fromText(long, text), text)
      }
    })

    it("doubles and floats: Spark's number words, no hexadecimal, binary, octal or empty text", () => {
      const double = field("double")
      assert.isNaN(FieldValues.fromText(double, "NaN"))
      assert.strictEqual(FieldValues.fromText(double, "Inf"), Infinity)
      assert.strictEqual(FieldValues.fromText(double, "+Infinity"), Infinity)
      assert.strictEqual(FieldValues.fromText(double, "-Inf"), -Infinity)
      assert.strictEqual(FieldValues.fromText(double, "-.5"), -0.5)
      assert.strictEqual(FieldValues.fromText(double, "+1e3"), 1000)
      assert.strictEqual(FieldValues.fromText(double, "0.25"), 0.25)
      assert.isTrue(Object.is(FieldValues.fromText(double, "-0.0"), -0))
      assert.strictEqual(FieldValues.fromText(field("float"), "0.1"), Math.fround(0.1))
      for (const text of ["0x1F", "0b11", "0o7", "1_0", "", "nan", "+", "-", "abc", "+-1"]) {
        unparsable(() => FieldValues.fromText(double, text), text)
      }
      unparsable(() => FieldValues.fromText(field("float"), "0x1"), "0x1")
    })

    it("dates and timestamps: real days only, zones and fractions as written, no zone is UTC", () => {
      const day = field("date")
      const at = field("timestamp")
      assert.deepStrictEqual(FieldValues.fromText(day, "2020-02-29"), new Date("2020-02-29T00:00:00Z"))
      assert.deepStrictEqual(FieldValues.fromText(day, "2000-02-29"), new Date("2000-02-29T00:00:00Z"))
      assert.deepStrictEqual(FieldValues.fromText(day, "2021-12-31T00:00:00Z"), new Date("2021-12-31T00:00:00Z"))
      for (
        const text of [
          "2021-02-29",
          "1900-02-29",
          "2021-13-01",
          "2021-00-10",
          "2021-04-31",
          "2021-01-00",
          "2021-1-01",
          "2021/01/01",
          "2021-01-0a",
          "2021-12-31T01:00:00Z",
          "x"
        ]
      ) {
        unparsable(() => FieldValues.fromText(day, text), text)
      }
      assert.deepStrictEqual(FieldValues.fromText(at, "2021-03-04 05:06"), new Date("2021-03-04T05:06:00Z"))
      assert.deepStrictEqual(FieldValues.fromText(at, "2021-03-04T05:06:07.5"), new Date("2021-03-04T05:06:07.500Z"))
      assert.deepStrictEqual(
        FieldValues.fromText(at, "2021-03-04T05:06:07.123456789Z"),
        new Date("2021-03-04T05:06:07.123Z")
      )
      assert.deepStrictEqual(FieldValues.fromText(at, "2021-03-04T05:06:07+05:30"), new Date("2021-03-03T23:36:07Z"))
      assert.deepStrictEqual(FieldValues.fromText(at, "2021-03-04T05:06:07-0200"), new Date("2021-03-04T07:06:07Z"))
      for (const text of ["2021-03-4", "2021-03-04T5:06", "2021-03-04T05:06:07.1234567890", "2021-03-04T05:06+5"]) {
        unparsable(() => FieldValues.fromText(at, text), text)
      }
    })

    it("booleans in any case, strings as they are, base64 bytes, nested values as their JSON", () => {
      assert.strictEqual(FieldValues.fromText(field("boolean"), " TRUE "), true)
      assert.strictEqual(FieldValues.fromText(field("boolean"), "False"), false)
      unparsable(() => FieldValues.fromText(field("boolean"), "yes"), "yes")
      assert.strictEqual(FieldValues.fromText(field("string"), " as is "), " as is ")
      assert.deepStrictEqual(FieldValues.fromText(field("binary"), "AAEC/w=="), new Uint8Array([0, 1, 2, 255]))
      unparsable(() => FieldValues.fromText(field("binary"), "not base64!"), "not base64!")
      assert.deepStrictEqual(FieldValues.fromText(field("array"), "[1,\"a\"]"), [1, "a"])
      assert.deepStrictEqual(FieldValues.fromText(field("map"), "{\"a\":1}"), { a: 1 })
      assert.deepStrictEqual(FieldValues.fromText(field("struct"), "{}"), {})
      for (const [type, text] of [["array", "{}"], ["map", "[1]"], ["struct", "null"], ["array", "[1"]] as const) {
        unparsable(() => FieldValues.fromText(field(type), text), text)
      }
    })

    it("an unparsable value's message names its text, type and field", () => {
      const message = unparsable(
        () => FieldValues.fromText(field("decimal", { name: "price", precision: 4, scale: 1 }), "12345"),
        "12345"
      )
      assert.strictEqual(message, "cannot read \"12345\" as decimal(4,1) (field \"price\")")
    })
  })

  describe("JSON", () => {
    it("parseJson reads any JSON as JSON.parse does, but keeps the digits of integers past 2^53", () => {
      fc.assert(
        fc.property(jsonTree, (tree) => {
          const text = FieldValues.jsonText(tree)
          assert.deepStrictEqual(FieldValues.parseJson(text, false), parsedTree(tree))
        })
      )
    })

    it("parseJson with raw numbers keeps each long number's text, which Number reads as JSON.parse does", () => {
      const numbers = (value: unknown): unknown =>
        value instanceof FieldValues.RawNumber
          ? Number(value.text)
          : Array.isArray(value)
          ? value.map(numbers)
          : typeof value === "object" && value !== null
          ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, numbers(v)]))
          : value
      fc.assert(
        fc.property(jsonTree, (tree) => {
          const text = FieldValues.jsonText(tree)
          assert.deepStrictEqual(numbers(FieldValues.parseJson(text, true)), JSON.parse(text))
        })
      )
      const raw = FieldValues.parseJson("{\"n\": 12345678901234567890, \"d\": 0.12345678901234567}", true)
      assert.deepStrictEqual(raw, {
        n: new FieldValues.RawNumber("12345678901234567890"),
        d: new FieldValues.RawNumber("0.12345678901234567")
      })
    })

    // Found by the property above (seed -722652799): the long-number reader assigned each key, and a key
    // "__proto__" set the object's prototype instead of being a field.
    it("parseJson keeps a field named __proto__ as a field, as JSON.parse does", () => {
      const text = `{"__proto__":{"a":1},"b":12345678901234567890}`
      const parsed = FieldValues.parseJson(text, false) as Record<string, unknown>
      assert.deepStrictEqual(Object.keys(parsed), ["__proto__", "b"])
      assert.strictEqual(Object.getPrototypeOf(parsed), Object.prototype)
      assert.deepStrictEqual(Object.getOwnPropertyDescriptor(parsed, "__proto__")?.value, { a: 1 })
    })

    it("parseJson fails where JSON.parse fails, on text with long numbers too", () => {
      const long = "12345678901234567890"
      const texts = [
        `{"a":${long},}`,
        `[${long} 1]`,
        `[${long}]x`,
        `{${long}:1}`,
        `{"a" ${long}}`,
        `{"a":${long}`,
        `[${long},`,
        `[${long},]`,
        `tru ${long}`,
        `"unterminated ${long}`,
        `[${long}, "bad \\x escape"]`,
        `[-${long}, +1]`,
        `[${long}, 01]`
      ]
      for (const text of texts) {
        assert.throws(() => JSON.parse(text), SyntaxError, undefined, text)
        assert.throws(() => FieldValues.parseJson(text, false), SyntaxError, undefined, text)
      }
      assert.deepStrictEqual(
        FieldValues.parseJson(` { "a" : [ ${long} , true , false , null , "s" , { } , [ ] ] } `, false),
        { a: [BigInt(long), true, false, null, "s", {}, []] }
      )
    })

    it("jsonText writes what JSON.stringify writes, and Spark's forms of bigints, dates, bytes, maps and sets", () => {
      fc.assert(
        fc.property(fc.jsonValue(), (value) => {
          // Read back and written by JSON.stringify, so that -0 (which jsonText writes as Spark does, -0.0) compares.
          assert.strictEqual(JSON.stringify(JSON.parse(FieldValues.jsonText(value))), JSON.stringify(value))
        })
      )
      assert.strictEqual(
        FieldValues.jsonText({
          big: 2n ** 70n,
          at: new Date(0),
          bytes: new Uint8Array([1, 2]),
          map: new Map([[1, "a"]]),
          set: new Set([1, undefined]),
          gone: undefined,
          f: () => 1,
          raw: new FieldValues.RawNumber("1.000000000000000001"),
          inf: Infinity,
          zero: -0
        }),
        "{\"big\":1180591620717411303424,\"at\":\"1970-01-01T00:00:00.000Z\",\"bytes\":\"AQI=\",\"map\":{\"1\":\"a\"}," +
          "\"set\":[1,null],\"raw\":1.000000000000000001,\"inf\":null,\"zero\":-0.0}"
      )
      assert.strictEqual(FieldValues.jsonText(undefined), "null")
      assert.strictEqual(FieldValues.jsonText(Symbol("s")), "null")
    })

    it("fromJson converts numbers, strings and booleans as their text would be; nested values by their shape", () => {
      const long = field("long")
      assert.strictEqual(FieldValues.fromJson(long, new FieldValues.RawNumber("-4611686018427387904")), -(2n ** 62n))
      unparsable(
        () => FieldValues.fromJson(long, new FieldValues.RawNumber("12345678901234567890")),
        "12345678901234567890"
      )
      assert.strictEqual(FieldValues.fromJson(long, 42), 42n)
      assert.strictEqual(FieldValues.fromJson(long, "42"), 42n)
      unparsable(() => FieldValues.fromJson(long, 4.5), "4.5")
      assert.strictEqual(FieldValues.fromJson(field("double"), 4.5), 4.5)
      assert.strictEqual(FieldValues.fromJson(field("float"), 4.5), 4.5)
      assert.strictEqual(FieldValues.fromJson(field("double"), "4.5"), 4.5)
      assert.strictEqual(FieldValues.fromJson(field("int"), 7), 7)
      assert.strictEqual(FieldValues.fromJson(field("boolean"), false), false)
      assert.strictEqual(FieldValues.fromJson(field("boolean"), "true"), true)
      unparsable(() => FieldValues.fromJson(field("boolean"), 1), "1")
      unparsable(() => FieldValues.fromJson(field("int"), true), "true")
      unparsable(() => FieldValues.fromJson(field("int"), { a: 1 }), "{\"a\":1}")
      assert.strictEqual(FieldValues.fromJson(field("string"), 1.5), "1.5")
      assert.strictEqual(FieldValues.fromJson(field("string"), { a: [1] }), "{\"a\":[1]}")
      assert.strictEqual(
        FieldValues.fromJson(field("string"), new FieldValues.RawNumber("0.12345678901234567")),
        "0.12345678901234567"
      )
      assert.strictEqual(
        FieldValues.fromJson(
          field("decimal", { precision: 20, scale: 17 }),
          new FieldValues.RawNumber("0.12345678901234567")
        ),
        "0.12345678901234567"
      )
      assert.isNull(FieldValues.fromJson(long, null))
      assert.isNull(FieldValues.fromJson(long, undefined))
      assert.deepStrictEqual(FieldValues.fromJson(field("array"), [1]), [1])
      assert.deepStrictEqual(FieldValues.fromJson(field("struct"), { a: 1 }), { a: 1 })
      unparsable(() => FieldValues.fromJson(field("map"), [1]), "[1]")
      unparsable(() => FieldValues.fromJson(field("array"), "x"), "\"x\"")
    })
  })

  describe("types", () => {
    it("inferType gives Spark's narrowest type for a text", () => {
      const type = (text: string) => {
        const f = FieldValues.inferType(text)
        return f.type === "decimal" ? FieldValues.typeName(f) : f.type
      }
      assert.deepStrictEqual(
        [
          " 1 ",
          "-2147483648",
          "2147483648",
          "-9223372036854775808",
          "9223372036854775808",
          "9".repeat(38),
          "9".repeat(39),
          "1.5",
          "NaN",
          "1e3",
          "2021-02-28",
          "2021-02-29",
          "2021-02-28T10:00:00Z",
          "TRUE",
          "false",
          "0x10",
          "",
          "text"
        ].map(type),
        [
          "int",
          "int",
          "long",
          "long",
          "decimal(19,0)",
          "decimal(38,0)",
          "double",
          "double",
          "double",
          "double",
          "date",
          "string",
          "timestamp",
          "boolean",
          "boolean",
          "string",
          "string",
          "string"
        ]
      )
    })

    it("widen is the narrowest type holding both: commutative, idempotent, and it reads every text either read", () => {
      const texts = fc.oneof(
        fc.integer().map(String),
        fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String),
        fc.bigInt({ min: 10n ** 19n, max: 10n ** 37n }).map(String),
        fc.double({ noNaN: true }).map(String),
        fc.date({ min: new Date("1900-01-01T00:00:00Z"), max: new Date("9999-12-31T00:00:00Z") })
          .map((t) => t.toISOString().slice(0, 10)),
        fc.constantFrom("true", "False", "text", "")
      )
      fc.assert(
        fc.property(fc.array(texts, { minLength: 1, maxLength: 6 }), (sample) => {
          const types = sample.map(FieldValues.inferType)
          const wide = types.reduce(FieldValues.widen)
          assert.deepStrictEqual(types.reduceRight((a, b) => FieldValues.widen(b, a)), wide)
          assert.deepStrictEqual(FieldValues.widen(wide, wide), wide)
          for (const text of sample) FieldValues.fromText(wide, text)
        })
      )
    })

    it("widen: numbers to the wider, decimals with room for both, dates and timestamps to timestamps", () => {
      const t = (type: FieldType, more: Partial<Field> = {}) => field(type, { name: "", ...more })
      const name = (f: Field) => FieldValues.typeName(f)
      assert.strictEqual(name(FieldValues.widen(t("int"), t("long"))), "long")
      assert.strictEqual(name(FieldValues.widen(t("double"), t("int"))), "double")
      assert.strictEqual(name(FieldValues.widen(t("decimal", { precision: 5, scale: 2 }), t("int"))), "decimal(12,2)")
      assert.strictEqual(name(FieldValues.widen(t("long"), t("decimal", { precision: 5, scale: 2 }))), "decimal(21,2)")
      assert.strictEqual(name(FieldValues.widen(t("long"), t("decimal", { precision: 30, scale: 20 }))), "double")
      assert.strictEqual(
        name(FieldValues.widen(t("decimal", { precision: 5, scale: 2 }), t("decimal", { precision: 6, scale: 1 }))),
        "decimal(7,2)"
      )
      assert.strictEqual(
        name(FieldValues.widen(t("decimal", { precision: 38, scale: 0 }), t("decimal", { precision: 10, scale: 5 }))),
        "double"
      )
      assert.strictEqual(name(FieldValues.widen(t("decimal"), t("decimal"))), "decimal(10,0)")
      assert.strictEqual(name(FieldValues.widen(t("date"), t("timestamp"))), "timestamp")
      assert.strictEqual(name(FieldValues.widen(t("timestamp"), t("date"))), "timestamp")
      assert.strictEqual(name(FieldValues.widen(t("boolean"), t("int"))), "string")
      assert.strictEqual(name(FieldValues.widen(t("date"), t("boolean"))), "string")
    })

    it("typeOfValue: a record's value's field type; typeName as Spark writes it", () => {
      const of = (value: unknown) => FieldValues.typeOfValue(value)?.type
      assert.deepStrictEqual(
        ["a", true, 1n, 1, -(2 ** 31) + 1, 2 ** 31, 1.5, new Date(0), new Uint8Array(), {}, null, undefined].map(of),
        [
          "string",
          "boolean",
          "long",
          "int",
          "int",
          "long",
          "double",
          "timestamp",
          "binary",
          "string",
          undefined,
          undefined
        ]
      )
      assert.strictEqual(FieldValues.typeName(field("decimal", { precision: 12, scale: 3 })), "decimal(12,3)")
      assert.strictEqual(FieldValues.typeName(field("decimal")), "decimal(10,0)")
      assert.strictEqual(FieldValues.typeName(field("long")), "long")
    })

    it("toText: Spark's text of each value", () => {
      assert.strictEqual(FieldValues.toText(new Date("2021-03-04T05:06:07Z"), "date"), "2021-03-04")
      assert.strictEqual(FieldValues.toText(new Date("2021-03-04T05:06:07Z")), "2021-03-04T05:06:07.000Z")
      assert.strictEqual(FieldValues.toText(-0), "-0.0")
      assert.strictEqual(FieldValues.toText(0), "0")
      assert.strictEqual(FieldValues.toText(12n), "12")
      assert.strictEqual(FieldValues.toText(false), "false")
      assert.strictEqual(FieldValues.toText(new Uint8Array([255])), "/w==")
      assert.strictEqual(FieldValues.toText({ a: [1, "x"] }), "{\"a\":[1,\"x\"]}")
      assert.strictEqual(FieldValues.toText(null), "null")
    })

    it("a mismatch names the field, its type, the value, the record and the fields that would hold it", () => {
      const fields: ReadonlyArray<Field> = [
        field("int", { name: "n", nullable: false }),
        field("decimal", { name: "unit price", precision: 5, scale: 2 })
      ]
      const big = new FieldValues.FieldMismatch(fields[0]!, 2 ** 40, { n: 2 ** 40 }, fields, false)
      assert.strictEqual(big.name, "FieldMismatch")
      assert.strictEqual(
        big.message,
        "the field n is int, but a record's n is 1099511627776: {\"n\":1099511627776}; " +
          "give the fields that hold it (fields: \"n LONG NOT NULL, `unit price` DECIMAL(5,2)\")"
      )
      const missing = new FieldValues.FieldMismatch(fields[0]!, null, { n: null }, fields, true)
      assert.strictEqual(
        missing.message,
        "the field n was inferred as int from a sample of the records, but a record's n is null, and the field is " +
          "NOT NULL: {\"n\":null}; give the fields that hold it (fields: \"n INT, `unit price` DECIMAL(5,2)\")"
      )
      const wide = new FieldValues.FieldMismatch(
        fields[1]!,
        "123456.789",
        { "unit price": "x".repeat(300) },
        fields,
        false
      )
      assert.include(wide.message, "DECIMAL(38,2)")
      assert.include(wide.message, `${"x".repeat(180)}…; give`)
      const text = new FieldValues.FieldMismatch(fields[1]!, "abc", {}, fields, false)
      assert.include(text.message, "`unit price` STRING")
    })
  })
})
