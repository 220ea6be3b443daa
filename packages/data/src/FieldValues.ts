/**
 * A field's value from its text and back, as CSV and JSON lines hold values: the conversions by field type (the
 * values `DataFormats` documents), the type Spark would infer for a text, and the widening of two inferred types.
 *
 * @since 0.1.0
 */
import type { DataFormats } from "@kindling/protocol"

type Field = DataFormats.Field
type FieldType = DataFormats.FieldType

const decimalText = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/
const date = /^(\d{4})-(\d{2})-(\d{2})$/
const timestamp = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?$/
const int32 = [-(2 ** 31), 2 ** 31 - 1] as const
const int64 = [-(2n ** 63n), 2n ** 63n - 1n] as const
const numberWords = new Map([
  ["NaN", NaN],
  ["Infinity", Infinity],
  ["+Infinity", Infinity],
  ["Inf", Infinity],
  ["-Infinity", -Infinity],
  ["-Inf", -Infinity]
])

/**
 * A value that does not fit its field: the reader's mode decides what becomes of its record.
 *
 * @since 0.1.0
 */
export class Unparsable {
  constructor(
    readonly field: string,
    readonly type: string,
    readonly text: string,
    readonly why?: string | undefined
  ) {}
  get message(): string {
    const read = `cannot read ${JSON.stringify(this.text)} as ${this.type} (field ${JSON.stringify(this.field)})`
    return this.why === undefined ? read : `${read}: ${this.why}`
  }
}

/**
 * A record's value that does not fit the field a writer writes it as: the message names the field, its type (and
 * whether it was inferred from a sample of the records), the value, the record, and the fields that would hold it.
 *
 * @since 0.1.0
 */
export class FieldMismatch extends Error {
  override readonly name = "FieldMismatch"
  constructor(
    readonly field: Field,
    readonly value: unknown,
    record: unknown,
    fields: DataFormats.Fields,
    inferred: boolean
  ) {
    const type = typeName(field)
    const held = value === null || value === undefined ? "null, and the field is NOT NULL" : jsonText(value)
    const recordText = jsonText(record)
    const ddl = fields.map((f) => ddlOf(f.name === field.name ? holding(field, value) : f)).join(", ")
    super(
      (inferred
        ? `the field ${field.name} was inferred as ${type} from a sample of the records, but a record's ${field.name} is `
        : `the field ${field.name} is ${type}, but a record's ${field.name} is `) +
        `${held}: ${recordText.length > 200 ? `${recordText.slice(0, 200)}…` : recordText}; ` +
        `give the fields that hold it (fields: "${ddl}")`
    )
  }
}

// The field, its type widened to hold the value: a decimal to 38 digits when that is enough, else the narrowest
// type that holds its values and this one.
const holding = (field: Field, value: unknown): Field => {
  if (value === null || value === undefined) return { ...field, nullable: true }
  const text = typeof value === "string" || typeof value === "number" || typeof value === "bigint"
    ? String(value).trim()
    : undefined
  if (field.type === "decimal" && text !== undefined && unscaled(text, 38, field.scale ?? 0) !== undefined) {
    return { ...field, precision: 38 }
  }
  return { ...widen(field, typeOfValue(value) ?? field), name: field.name, nullable: field.nullable }
}

// A field as Spark's DDL: `amount DOUBLE`, `` `unit price` DECIMAL(10,2) NOT NULL ``.
const ddlOf = (field: Field): string =>
  `${/^\w+$/.test(field.name) ? field.name : `\`${field.name}\``} ${typeName(field).toUpperCase()}${
    field.nullable ? "" : " NOT NULL"
  }`

/**
 * The field type of a value as a record holds it (a number by whether it is an integer and fits an int, a `Date`
 * a timestamp, any other object a string, as it is written); none for null.
 *
 * @since 0.1.0
 */
export const typeOfValue = (value: unknown): Field | undefined => {
  switch (typeof value) {
    case "string":
      return inferred("string")
    case "boolean":
      return inferred("boolean")
    case "bigint":
      return inferred("long")
    case "number":
      return Number.isInteger(value) ? inferred(Math.abs(value) < 2 ** 31 ? "int" : "long") : inferred("double")
    case "object":
      if (value === null) return undefined
      if (value instanceof Date) return inferred("timestamp")
      if (value instanceof Uint8Array) return inferred("binary")
      return inferred("string")
    default:
      return undefined
  }
}

/**
 * A field's type as Spark writes it: `decimal(10,2)`, `long`.
 *
 * @since 0.1.0
 */
export const typeName = (field: Field): string =>
  field.type === "decimal" ? `decimal(${field.precision ?? 10},${field.scale ?? 0})` : field.type

// The digits of a decimal text at `scale` digits after the point (rounded half up, as Spark's casts round), as
// its unscaled integer; undefined when it is no number or needs more than `precision` digits.
const unscaled = (text: string, precision: number, scale: number): bigint | undefined => {
  const match = decimalText.exec(text)
  if (match === null) return undefined
  const [, sign, whole = "", fraction = "", exponent = "0"] = match
  if (whole === "" && fraction === "") return undefined
  const shift = Number(exponent)
  let digits = BigInt(whole + fraction || "0")
  let point = fraction.length - shift
  if (point > scale) {
    const drop = 10n ** BigInt(point - scale)
    digits = (digits + drop / 2n) / drop
    point = scale
  }
  digits *= 10n ** BigInt(scale - point)
  if (digits >= 10n ** BigInt(precision)) return undefined
  return sign === "-" ? -digits : digits
}

/**
 * A decimal's text at its scale, from its unscaled integer: `-1250n` at scale 2 is `-12.50`.
 *
 * @since 0.1.0
 */
export const decimalFromUnscaled = (value: bigint, scale: number): string => {
  const negative = value < 0n
  const digits = (negative ? -value : value).toString().padStart(scale + 1, "0")
  const text = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`
  return negative ? `-${text}` : text
}

/**
 * A decimal's unscaled integer at `scale`, from its text (`"-12.5"` at scale 2 is `-1250n`); undefined for a text
 * that is no number or does not fit `precision`.
 *
 * @since 0.1.0
 */
export const unscaledDecimal = (text: string, precision: number, scale: number): bigint | undefined =>
  unscaled(text.trim(), precision, scale)

const parseDate = (text: string): Date | undefined => {
  const match = date.exec(text)
  if (match === null) {
    // A timestamp at midnight UTC is that day (as a date written as a timestamp reads back).
    const time = parseTimestamp(text)
    return time !== undefined && time.getTime() % 86_400_000 === 0 ? time : undefined
  }
  const value = new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])))
  return value.getUTCDate() === Number(match[3]) ? value : undefined
}

const parseTimestamp = (text: string): Date | undefined => {
  const match = timestamp.exec(text)
  if (match === null) return undefined
  const [, year, month, day, hour, minute, second = "0", fraction = "", zone] = match
  // The day by the proleptic calendar, not `Date.UTC`, which takes the years 0 to 99 for 1900 to 1999.
  const midnight = plainDate(`${year}-${month}-${day}`)
  if (midnight === undefined || Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59) return undefined
  let millis = midnight.getTime() + ((Number(hour) * 60 + Number(minute)) * 60 + Number(second)) * 1000 +
    Number(fraction.padEnd(3, "0").slice(0, 3))
  // A time without a zone is UTC (Spark reads it in its session time zone, which a cluster sets to UTC).
  if (zone !== undefined && zone !== "Z") {
    const sign = zone.startsWith("-") ? -1 : 1
    const digits = zone.slice(1).replace(":", "")
    millis -= sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2))) * 60_000
  }
  return new Date(millis)
}

// Numbers as JavaScript reads them, without what `Number` takes and Spark does not: hexadecimal, binary and
// octal forms, underscores, the empty string. Checked by the text's first two characters, which is all it takes.
const digitOrPoint = (code: number) => (code >= 48 && code <= 57) || code === 46
const numberText = (text: string): number | undefined => {
  const first = text.charCodeAt(0)
  if (!(digitOrPoint(first) || ((first === 45 || first === 43) && digitOrPoint(text.charCodeAt(1))))) {
    return numberWords.get(text)
  }
  const plain = plainDecimal(text)
  if (plain !== undefined) return plain
  const value = Number(text)
  if (Number.isNaN(value) || (first === 48 && /^0[xXbBoO]/.test(text))) return undefined
  return value
}

// Powers of ten a double holds exactly (up to 10^22).
const exactPowers = Array.from({ length: 23 }, (_, i) => 10 ** i)

// A number written as digits with at most one point, a sign before them (`-12`, `543.16`, `.5`), of at most 15
// digits, read by its characters' codes: the common case of a CSV value, where `Number` costs most of a row's
// reading. Its digits as an integer are below 2^53 and its scale's power of ten is exact, so their quotient is
// the double nearest the text, as `Number` reads it (Clinger's fast path). Anything else is undefined.
const plainDecimal = (text: string): number | undefined => {
  const length = text.length
  let i = 0
  let negative = false
  const first = text.charCodeAt(0)
  if (first === 45 || first === 43) {
    negative = first === 45
    i = 1
  }
  let digits = 0
  let mantissa = 0
  let point = -1
  for (; i < length; i++) {
    const code = text.charCodeAt(i)
    if (code >= 48 && code <= 57) {
      mantissa = mantissa * 10 + (code - 48)
      digits++
    } else if (code === 46 && point < 0) point = i
    else return undefined
  }
  if (digits === 0 || digits > 15) return undefined
  const value = point < 0 ? mantissa : mantissa / exactPowers[length - 1 - point]!
  return negative ? -value : value
}

// `yyyy-MM-dd`, by its characters' codes: the common case of a date, read without a regular expression.
const plainDate = (text: string): Date | undefined => {
  if (text.length !== 10 || text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45) return parseDate(text)
  let year = 0
  let month = 0
  let day = 0
  for (let i = 0; i < 10; i++) {
    if (i === 4 || i === 7) continue
    const digit = text.charCodeAt(i) - 48
    if (digit < 0 || digit > 9) return undefined
    if (i < 4) year = year * 10 + digit
    else if (i < 7) month = month * 10 + digit
    else day = day * 10 + digit
  }
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
  if (month < 1 || month > 12 || day < 1 || day > (month === 2 && leap ? 29 : monthDays[month - 1]!)) return undefined
  return new Date(daysFromCivil(year, month, day) * 86_400_000)
}

const monthDays = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

// Days since 1970-01-01 of a day of the proleptic Gregorian calendar (Howard Hinnant's `days_from_civil`).
const daysFromCivil = (year: number, month: number, day: number): number => {
  const y = month <= 2 ? year - 1 : year
  const era = Math.floor(y / 400)
  const yearOfEra = y - era * 400
  const dayOfYear = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear
  return era * 146097 + dayOfEra - 719468
}

/**
 * A field's value from its text (`Unparsable` when it does not fit).
 *
 * @since 0.1.0
 */
export const fromText = (field: Field, text: string): unknown => textReader(field)(text)

/**
 * `fromText` of one field, its conversion chosen once: a reader of a column's many values (a CSV split's) does not
 * compare the field's type name on every value.
 *
 * @since 0.1.0
 */
export const textReader = (field: Field): (text: string) => unknown => {
  if (field.type === "string") return identity
  const read = trimmedReader(field)
  return (text) => {
    const value = read(trimmed(text), text)
    if (value === undefined) throw new Unparsable(field.name, typeName(field), text)
    return value
  }
}

const identity = (text: string): string => text

// `/^[+-]?\d+$/` by the text's character codes (a regular expression costs more than a short value's reading).
const integerText = (text: string): boolean => {
  const first = text.charCodeAt(0)
  let i = first === 43 || first === 45 ? 1 : 0
  if (i === text.length) return false
  for (; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 48 || code > 57) return false
  }
  return true
}

// `trim()` only when the text starts or ends with what may be white space: most values do not.
const trimmed = (text: string): string => {
  const first = text.charCodeAt(0)
  const last = text.charCodeAt(text.length - 1)
  return first > 32 && first < 127 && last > 32 && last < 127 ? text : text.trim()
}

// A field's value from its trimmed text (`text` as it was, for a nested value's message), undefined when it does not
// fit.
const trimmedReader = (field: Field): (trimmed: string, text: string) => unknown => {
  switch (field.type) {
    case "string":
      return identity
    case "boolean":
      return (trimmed) => {
        const lower = trimmed.toLowerCase()
        return lower === "true" ? true : lower === "false" ? false : undefined
      }
    case "int":
      return (trimmed) => {
        const n = numberText(trimmed)
        return n !== undefined && Number.isInteger(n) && n >= int32[0] && n <= int32[1] && integerText(trimmed)
          ? n
          : undefined
      }
    case "long":
      // Up to 18 digits a long cannot overflow: no range to check.
      return (trimmed) => {
        if (!integerText(trimmed)) return undefined
        const n = BigInt(trimmed)
        return trimmed.length <= 18 || (n >= int64[0] && n <= int64[1]) ? n : undefined
      }
    case "float":
      return (trimmed) => {
        const n = numberText(trimmed)
        return n === undefined ? undefined : Math.fround(n)
      }
    case "double":
      return numberText
    case "decimal": {
      const scale = field.scale ?? 0
      const precision = field.precision ?? 10
      return (trimmed) => {
        const digits = unscaled(trimmed, precision, scale)
        return digits === undefined ? undefined : decimalFromUnscaled(digits, scale)
      }
    }
    case "date":
      return plainDate
    case "timestamp":
      // A day alone is its midnight, as Spark reads one where a timestamp is expected.
      return (trimmed) => parseTimestamp(trimmed) ?? (trimmed.length === 10 ? plainDate(trimmed) : undefined)
    case "binary":
      return (trimmed) =>
        /^[A-Za-z0-9+/]*={0,2}$/.test(trimmed) ? new Uint8Array(Buffer.from(trimmed, "base64")) : undefined
    case "array":
    case "map":
    case "struct":
      // A nested value in a text file is its JSON.
      return (trimmed, text) => nestedValue(field, jsonOrUndefined(trimmed), () => text, mayHoldProtoKey.test(trimmed))
  }
}

const jsonOrUndefined = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

// A JSON value as a nested field's: an array for an array, an object for a map or a struct; `Unparsable` for
// one with a key __proto__, which a record cannot hold (see `holdsProtoKey`), naming the value's `text`. The value
// is searched for that key only when its text may spell it (`mayHold`, false when the text shows it cannot).
const nestedValue = (field: Field, value: unknown, text: () => string, mayHold = true): unknown => {
  const nested = field.type === "array"
    ? (Array.isArray(value) ? value : undefined)
    : typeof value === "object" && value !== null && !Array.isArray(value)
    ? value
    : undefined
  if (nested !== undefined && mayHold && protoKeyIn(nested)) {
    throw new Unparsable(field.name, typeName(field), text(), protoKeyProblem)
  }
  return nested
}

/**
 * A field's value from a JSON value: a number, string or boolean converted to the field's type as its text would
 * be (`Unparsable` when it does not fit), null as null.
 *
 * @since 0.1.0
 */
export const fromJson = (field: Field, value: unknown): unknown => {
  if (value === null || value === undefined) return null
  if (value instanceof RawNumber) return field.type === "string" ? value.text : fromText(field, value.text)
  if (field.type === "array" || field.type === "map" || field.type === "struct") {
    const nested = nestedValue(field, value, () => jsonText(value))
    if (nested === undefined) throw new Unparsable(field.name, typeName(field), jsonText(value))
    return nested
  }
  if (field.type === "string") return typeof value === "string" ? value : jsonText(value)
  if (field.type === "boolean" && typeof value === "boolean") return value
  if (typeof value === "number" && (field.type === "double" || field.type === "float")) return value
  if (typeof value === "number" && field.type === "long" && Number.isInteger(value)) return BigInt(value)
  if (typeof value === "number" || typeof value === "string") return fromText(field, String(value))
  throw new Unparsable(field.name, typeName(field), jsonText(value))
}

/**
 * A value as text in a CSV or JSON file: numbers and bigints by their digits, a date field's `Date` as
 * `yyyy-MM-dd`, a timestamp's as ISO 8601 in UTC, bytes as base64.
 *
 * @since 0.1.0
 */
export const toText = (value: unknown, type?: FieldType): string => {
  if (typeof value === "string") return value
  if (value instanceof Date) return type === "date" ? value.toISOString().slice(0, 10) : value.toISOString()
  if (value instanceof Uint8Array) return Buffer.from(value).toString("base64")
  if (typeof value === "object" && value !== null) return jsonText(value)
  return typeof value === "number" ? numberString(value) : String(value)
}

// A number's digits; negative zero keeps its sign, as Spark writes it (String gives "0").
const numberString = (value: number) => (Object.is(value, -0) ? "-0.0" : String(value))

/**
 * A JSON number whose text a JavaScript number would not keep (an integer past 2^53, a decimal of many digits),
 * kept as its text by `parseJson` until a field says what it is.
 *
 * @since 0.1.0
 */
export class RawNumber {
  constructor(readonly text: string) {}
}

// A number of 16 significant digits or more, counted across its decimal point, may not survive a double
// ("422275922214059.5437" does not): such text is parsed keeping its numbers' digits.
const longNumber = /\d(?:\.?\d){15}/
const numberToken = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y
const stringToken = /"(?:[^"\\]|\\.)*"/y
const space = /[ \t\r\n]*/y

// The digits of a number's text that carry its value (no sign, point, exponent or leading zeros).
const significantDigits = (text: string) => text.replace(/[eE].*$/, "").replace(/[-.]/g, "").replace(/^0+/, "").length

// Text that may spell the key "__proto__", plainly or with \u escapes: only a value parsed from such text is
// searched for one.
const mayHoldProtoKey = /__proto__|\\u/

/**
 * Why a value with a key __proto__ is malformed.
 *
 * @since 0.1.0
 */
export const protoKeyProblem =
  "it has a key __proto__, which a record cannot hold (it would be renamed between processes)"

/**
 * Whether a value parsed from JSON `text` (by `parseJson`, which keeps a key "__proto__" as an own property)
 * has such a key, at any depth: a record cannot hold it, as MessagePack, which carries records between
 * processes, renames that key (msgpackr's guard against prototype pollution) — it would arrive changed.
 *
 * @since 0.1.0
 */
export const holdsProtoKey = (text: string, value: unknown): boolean => mayHoldProtoKey.test(text) && protoKeyIn(value)

const protoKeyIn = (value: unknown): boolean => {
  if (typeof value !== "object" || value === null) return false
  if (Array.isArray(value)) return value.some(protoKeyIn)
  return Object.hasOwn(value, "__proto__") || Object.values(value).some(protoKeyIn)
}

/**
 * A line of JSON, as `JSON.parse` reads it but for numbers it would round: those are `RawNumber`s while a
 * field is to say what they are (`raw`), else integers bigints and the rest numbers. Lines without a run of 16
 * digits are `JSON.parse`'s alone, which is faster.
 *
 * @since 0.1.0
 */
export const parseJson = (text: string, raw: boolean): unknown => {
  if (!longNumber.test(text)) return JSON.parse(text)
  let at = 0
  const skip = () => {
    space.lastIndex = at
    space.exec(text)
    at = space.lastIndex
  }
  const fail = (): never => {
    throw new SyntaxError(`Unexpected token in JSON at position ${at}`)
  }
  const value = (): unknown => {
    skip()
    const char = text[at]
    if (char === "{") {
      at++
      const object: Record<string, unknown> = {}
      skip()
      if (text[at] === "}") {
        at++
        return object
      }
      for (;;) {
        skip()
        stringToken.lastIndex = at
        const key = stringToken.exec(text)
        if (key === null) fail()
        at = stringToken.lastIndex
        skip()
        if (text[at++] !== ":") fail()
        // Defined, not assigned: a key "__proto__" is an own field, as JSON.parse makes it, not the prototype.
        Object.defineProperty(object, JSON.parse(key![0]) as string, {
          value: value(),
          writable: true,
          enumerable: true,
          configurable: true
        })
        skip()
        const next = text[at++]
        if (next === "}") return object
        if (next !== ",") fail()
      }
    }
    if (char === "[") {
      at++
      const array: Array<unknown> = []
      skip()
      if (text[at] === "]") {
        at++
        return array
      }
      for (;;) {
        array.push(value())
        skip()
        const next = text[at++]
        if (next === "]") return array
        if (next !== ",") fail()
      }
    }
    if (char === "\"") {
      stringToken.lastIndex = at
      const token = stringToken.exec(text)
      if (token === null) fail()
      at = stringToken.lastIndex
      return JSON.parse(token![0])
    }
    numberToken.lastIndex = at
    const number = numberToken.exec(text)
    if (number !== null) {
      at = numberToken.lastIndex
      const literal = number[0]
      const parsed = Number(literal)
      const integral = /^-?\d+$/.test(literal)
      if (integral ? Number.isSafeInteger(parsed) : significantDigits(literal) <= 15) return parsed
      return raw ? new RawNumber(literal) : integral ? BigInt(literal) : parsed
    }
    for (const [word, meaning] of [["true", true], ["false", false], ["null", null]] as const) {
      if (text.startsWith(word, at)) {
        at += word.length
        return meaning
      }
    }
    return fail()
  }
  const parsed = value()
  skip()
  if (at !== text.length) fail()
  return parsed
}

/**
 * A value as JSON text: bigints as numbers with every digit, dates as ISO 8601 text, bytes as base64, maps as
 * objects and sets as arrays (Spark's JSON writer's forms); an `undefined` property is left out, as
 * `JSON.stringify` leaves it.
 *
 * @since 0.1.0
 */
export const jsonText = (value: unknown): string => {
  switch (typeof value) {
    case "string":
      return JSON.stringify(value)
    case "number":
      return Number.isFinite(value) ? numberString(value) : "null"
    case "bigint":
    case "boolean":
      return String(value)
    case "object": {
      if (value === null) return "null"
      if (value instanceof RawNumber) return value.text
      if (value instanceof Date) return `"${value.toISOString()}"`
      if (value instanceof Uint8Array) return `"${Buffer.from(value).toString("base64")}"`
      if (Array.isArray(value) || value instanceof Set) {
        return `[${Array.from(value as Iterable<unknown>, (item) => item === undefined ? "null" : jsonText(item))}]`
      }
      const entries = value instanceof Map ? [...value] : Object.entries(value)
      const members = entries.filter(([, item]) => item !== undefined && typeof item !== "function")
        .map(([key, item]) => `${JSON.stringify(String(key))}:${jsonText(item)}`)
      return `{${members.join(",")}}`
    }
    default:
      return "null"
  }
}

/**
 * The type Spark would infer for a value's text, from the narrowest (`int`, `long`, `decimal` for an integer too
 * large for a long, `double`, `date`, `timestamp`, `boolean`) to `string`.
 *
 * @since 0.1.0
 */
export const inferType = (text: string): Field => {
  const trimmed = text.trim()
  if (integerText(trimmed)) {
    const n = BigInt(trimmed)
    if (n >= BigInt(int32[0]) && n <= BigInt(int32[1])) return inferred("int")
    if (n >= int64[0] && n <= int64[1]) return inferred("long")
    const digits = trimmed.replace(/^[+-]/, "").length
    if (digits <= 38) return { ...inferred("decimal"), precision: digits, scale: 0 }
    return inferred("double")
  }
  if (numberText(trimmed) !== undefined) return inferred("double")
  if (date.test(trimmed) && parseDate(trimmed) !== undefined) return inferred("date")
  if (parseTimestamp(trimmed) !== undefined) return inferred("timestamp")
  const lower = trimmed.toLowerCase()
  if (lower === "true" || lower === "false") return inferred("boolean")
  return inferred("string")
}

const inferred = (type: FieldType): Field => ({ name: "", type, nullable: true })

const numeric: ReadonlyArray<FieldType> = ["int", "long", "decimal", "double"]

/**
 * The narrowest type that holds values of both: numbers widen (`int` < `long` < `decimal` < `double`), a date and
 * a timestamp make a timestamp, anything else a string.
 *
 * @since 0.1.0
 */
export const widen = (a: Field, b: Field): Field => {
  if (a.type === b.type) {
    if (a.type !== "decimal") return a
    const scale = Math.max(a.scale ?? 0, b.scale ?? 0)
    const whole = Math.max((a.precision ?? 10) - (a.scale ?? 0), (b.precision ?? 10) - (b.scale ?? 0))
    return whole + scale > 38 ? inferred("double") : { ...a, precision: whole + scale, scale }
  }
  const [i, j] = [numeric.indexOf(a.type), numeric.indexOf(b.type)]
  if (i >= 0 && j >= 0) {
    const wider = i > j ? a : b
    const narrower = i > j ? b : a
    if (wider.type !== "decimal") return wider
    // A long or int beside a decimal: a decimal with room for the long's 19 digits (or the int's 10).
    const whole = Math.max((wider.precision ?? 10) - (wider.scale ?? 0), narrower.type === "long" ? 19 : 10)
    const scale = wider.scale ?? 0
    return whole + scale > 38 ? inferred("double") : { ...wider, precision: whole + scale, scale }
  }
  if ((a.type === "date" && b.type === "timestamp") || (a.type === "timestamp" && b.type === "date")) {
    return inferred("timestamp")
  }
  return inferred("string")
}
