/**
 * JSON lines records, read and written: a JSON value per line. With fields, each object becomes a record of
 * them, its values converted to their types (what the object lacks is null, what the fields lack left out); a
 * line that is no JSON, or no object where fields are given, is malformed and the reader's mode decides.
 *
 * @since 0.1.0
 */
import type { DataFormats } from "@kindling/protocol"
import * as FieldValues from "./FieldValues.js"
import { decoded, type LinePlace, malformed } from "./ParseModes.js"

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

/**
 * The records of a split's lines; blank lines are skipped.
 *
 * @since 0.1.0
 */
export function* records(
  lines: Iterable<string>,
  format: Format,
  place: LinePlace,
  decode?: (record: unknown) => unknown
): Generator<unknown> {
  for (const [line, record] of parsed(lines, format, place)) {
    const typed = decoded(decode, record, format.mode, () => `in ${place.path} at line ${place.firstLine() + line}`)
    if (typed !== undefined) yield typed.record
  }
}

// The records of the lines, with the line each came from.
function* parsed(lines: Iterable<string>, format: Format, place: LinePlace): Generator<readonly [number, unknown]> {
  const fields = format.fields?.filter((field) => field.name !== format.corruptRecordField)
  let line = -1
  for (const text of lines) {
    line++
    if (text.trim() === "") continue
    let value: unknown
    try {
      value = FieldValues.parseJson(text, fields !== undefined)
    } catch (error) {
      const kept = malformed(format, place, line, text, `no JSON: ${(error as Error).message}`, {})
      if (kept !== undefined) yield [line, fields === undefined ? kept : { ...nullRecord(fields), ...kept }]
      continue
    }
    if (fields === undefined) {
      yield [line, value]
      continue
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      const kept = malformed(format, place, line, text, "the line is no JSON object", nullRecord(fields))
      if (kept !== undefined) yield [line, kept]
      continue
    }
    const read = record(value, fields)
    if (read.problem === undefined) {
      if (format.corruptRecordField !== undefined) read.record[format.corruptRecordField] = null
      yield [line, read.record]
      continue
    }
    const kept = malformed(format, place, line, text, read.problem, read.record)
    if (kept !== undefined) yield [line, kept]
  }
}

const nullRecord = (fields: DataFormats.Fields) => Object.fromEntries(fields.map((field) => [field.name, null]))

/**
 * A record as a JSON line (without its line end). With fields, as Spark writes their types: a `date` as
 * `yyyy-MM-dd`, a `decimal` as a number.
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
    if (field.type === "decimal") typed[field.name] = new FieldValues.RawNumber(String(value))
  }
  return FieldValues.jsonText(typed)
}
