/**
 * JSON records, read and written: a JSON value per line (JSON lines), or with `multiLine`, a file of JSON values
 * however they are laid out — one array of records, one record, or records one after another, pretty-printed
 * (Spark's `multiLine`, which reads a file's one value; an array's elements are each a record). With fields, each
 * object becomes a record of them, its values converted to their types (what the object lacks is null, what the
 * fields lack left out); a value that is no JSON, or no object where fields are given, is malformed and the
 * reader's mode decides.
 *
 * @since 0.1.0
 */
import type { DataFormats } from "@kindling/protocol"
import * as FieldValues from "./FieldValues.js"
import {
  decoded,
  type LinePlace,
  type LineReader,
  malformed,
  recordBatchesOf,
  recordsOf,
  skipped
} from "./ParseModes.js"

type Format = Extract<DataFormats.LineFormat, { readonly _tag: "JsonLines" }>

const record = (value: unknown, fields: DataFormats.Fields): { record: Record<string, unknown>; problem?: string } => {
  const record: Record<string, unknown> = {}
  let problem: string | undefined
  const object = value as Record<string, unknown>
  for (const field of fields) {
    try {
      record[field.name] = FieldValues.fromJson(field, Object.hasOwn(object, field.name) ? object[field.name] : null)
    } catch (error) {
      if (!(error instanceof FieldValues.Unparsable)) throw error
      record[field.name] = null
      problem ??= error.message
    }
  }
  return problem === undefined ? { record } : { record, problem }
}

type Place = LinePlace & { readonly multiLine: boolean }

/**
 * The records of a split's lines, given in batches (`TextSplits.lineBatches`), one at a time; blank lines are
 * skipped. With `multiLine`, the lines are a whole file's, and its values are the records, wherever they start and
 * end.
 *
 * @since 0.1.0
 */
export const records = (
  batches: Iterable<ReadonlyArray<string>>,
  format: Format,
  place: Place,
  decode?: (record: unknown) => unknown
): Generator<unknown> =>
  place.multiLine ? fileRecords(batches, format, place, decode) : recordsOf(batches, lineReader(format, place, decode))

/**
 * The records `records` gives, a batch of lines' records at a time (a whole file's, with `multiLine`).
 *
 * @since 0.1.0
 */
export function* recordBatches(
  batches: Iterable<ReadonlyArray<string>>,
  format: Format,
  place: Place,
  decode?: (record: unknown) => unknown
): Generator<Array<unknown>> {
  if (place.multiLine) yield Array.from(fileRecords(batches, format, place, decode))
  else yield* recordBatchesOf(batches, lineReader(format, place, decode))
}

const keptFields = (format: Format) => format.fields?.filter((field) => field.name !== format.corruptRecordField)

const typedRecord =
  (format: Format, place: LinePlace, decode: ((record: unknown) => unknown) | undefined) =>
  (line: number, record: unknown) =>
    decoded(decode, record, format.mode, () => `in ${place.path} at line ${place.firstLine() + line}`)

// The values of a whole file's text, each a record.
function* fileRecords(
  batches: Iterable<ReadonlyArray<string>>,
  format: Format,
  place: Place,
  decode: ((record: unknown) => unknown) | undefined
): Generator<unknown> {
  const fields = keptFields(format)
  const typed = typedRecord(format, place, decode)
  for (const [line, text] of values(Array.from(batches).flat().join("\n"))) {
    const record = parsed(line, text, format, place, fields)
    const kept = record === skipped ? undefined : typed(line, record)
    if (kept !== undefined) yield kept.record
  }
}

// A value per line, the common case: each line made its record as it comes, with no pair of it and its line.
const lineReader = (format: Format, place: Place, decode: ((record: unknown) => unknown) | undefined): LineReader => {
  const fields = keptFields(format)
  const typed = typedRecord(format, place, decode)
  let line = -1
  return {
    line: (text) => {
      line++
      const record = parsed(line, text, format, place, fields)
      if (record === skipped || decode === undefined) return record
      const kept = typed(line, record)
      return kept === undefined ? skipped : kept.record
    },
    end: () => skipped
  }
}

const space = /[ \t\r\n]/

// The JSON values of a file's text, each with the line (from 0) it starts on: values one after another, the
// elements of an array at the top each a value of its own. What breaks that shape — an unclosed string or
// bracket, elements without a comma between them — is one value from there to the end, which does not parse.
function* values(text: string): Generator<readonly [number, string]> {
  let at = 0
  let line = 0
  const advance = (to: number) => {
    for (; at < to; at++) if (text.charCodeAt(at) === 10) line++
  }
  const skipSpace = () => {
    let to = at
    while (to < text.length && space.test(text[to]!)) to++
    advance(to)
  }
  // The value at `at` (the rest of the text when it does not end), and whether it ended.
  const value = (): readonly [readonly [number, string], boolean] => {
    const end = valueEnd(text, at)
    const found = [line, text.slice(at, end < 0 ? text.length : end)] as const
    advance(end < 0 ? text.length : end)
    return [found, end >= 0]
  }
  for (skipSpace(); at < text.length; skipSpace()) {
    if (text[at] !== "[") {
      const [found, ended] = value()
      yield found
      if (!ended) return
      continue
    }
    // An array of records: its elements, up to its closing bracket (without one, the array is malformed: a file
    // cut short, say).
    const array = [line, text.slice(at)] as const
    advance(at + 1)
    for (skipSpace(); text[at] !== "]";) {
      if (at === text.length) return yield array
      const [found, ended] = value()
      yield found
      if (!ended) return
      skipSpace()
      if (text[at] === ",") {
        advance(at + 1)
        skipSpace()
      } else if (text[at] !== "]") return yield at === text.length ? array : [line, text.slice(at)]
    }
    advance(at + 1)
  }
}

// Where the JSON value starting at `from` ends (the index after it), or -1 when it does not: an object or array at
// its matching bracket, a string at its closing quote, a number or word at what follows it.
const valueEnd = (text: string, from: number): number => {
  const first = text[from]
  if (first === "\"") return stringEnd(text, from)
  if (first !== "{" && first !== "[") {
    let at = from
    while (at < text.length && !space.test(text[at]!) && !",]}".includes(text[at]!)) at++
    // A stray comma or closing bracket is a value of its own, which does not parse.
    return at === from && from < text.length ? from + 1 : at
  }
  let depth = 0
  for (let at = from; at < text.length; at++) {
    const char = text[at]
    if (char === "\"") {
      at = stringEnd(text, at) - 1
      if (at < 0) return -1
    } else if (char === "{" || char === "[") depth++
    else if (char === "}" || char === "]") {
      if (--depth === 0) return at + 1
    }
  }
  return -1
}

// The index after the string starting at `from` (its opening quote), or -1 when it is not closed.
const stringEnd = (text: string, from: number): number => {
  for (let at = from + 1; at < text.length; at++) {
    if (text[at] === "\\") at++
    else if (text[at] === "\"") return at + 1
  }
  return -1
}

// The record of one text (a line, or a value of a whole file), which starts on `line`.
const parsed = (
  line: number,
  text: string,
  format: Format,
  place: LinePlace,
  fields: DataFormats.Fields | undefined
): unknown => {
  if (blank(text)) return skipped
  if (place.tally !== undefined) place.tally.records++
  let value: unknown
  try {
    value = FieldValues.parseJson(text, fields !== undefined)
  } catch (error) {
    const kept = malformed(format, place, line, text, `no JSON: ${(error as Error).message}`, {})
    if (kept === undefined) return skipped
    return fields === undefined ? kept : { ...nullRecord(fields), ...kept }
  }
  if (fields === undefined) {
    return FieldValues.holdsProtoKey(text, value)
      ? malformed(format, place, line, text, FieldValues.protoKeyProblem, {}) ?? skipped
      : value
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return malformed(format, place, line, text, "the line is no JSON object", nullRecord(fields)) ?? skipped
  }
  const read = record(value, fields)
  if (read.problem === undefined) {
    if (format.corruptRecordField !== undefined) read.record[format.corruptRecordField] = null
    return read.record
  }
  return malformed(format, place, line, text, read.problem, read.record) ?? skipped
}

// Whether a text is only white space (as `trim` has it), found without trimming a copy of every line.
const blank = (text: string): boolean => {
  const first = text.charCodeAt(0)
  if (first === 123 || first === 91) return false // `{` or `[`: most lines
  return text.trim() === ""
}

const nullRecord = (fields: DataFormats.Fields) => Object.fromEntries(fields.map((field) => [field.name, null]))

/**
 * A record as a JSON line (without its line end). With fields, as Spark writes their types: a `date` as
 * `yyyy-MM-dd`, a `decimal` as a number at its scale (`FieldMismatch` for a value that is none that fits).
 *
 * @since 0.1.0
 */
export const line = (record: unknown, fields?: DataFormats.Fields): string => {
  if (fields === undefined || typeof record !== "object" || record === null || Array.isArray(record)) {
    return FieldValues.jsonText(record)
  }
  const values = record as Record<string, unknown>
  const typed: Record<string, unknown> = { ...values }
  for (const field of fields) {
    const value = values[field.name]
    if (value === null || value === undefined) continue
    if (field.type === "date" && value instanceof Date) typed[field.name] = value.toISOString().slice(0, 10)
    if (field.type === "decimal") {
      // As a number at its scale: text that is no number would make the line no JSON.
      const scale = field.scale ?? 0
      const unscaled = FieldValues.unscaledDecimal(String(value), field.precision ?? 10, scale)
      if (unscaled === undefined) throw new FieldValues.FieldMismatch(field, value, record, fields, false)
      typed[field.name] = new FieldValues.RawNumber(FieldValues.decimalFromUnscaled(unscaled, scale))
    }
  }
  return FieldValues.jsonText(typed)
}
