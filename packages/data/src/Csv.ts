/**
 * CSV records, read and written: a line cut into fields by a dialect (separator, quote, escape, the text of a
 * null), fields made values of their types, and records written back the same way. Lines come from a split as
 * `TextSplits` cuts files; a record whose quoted value holds a line break goes on to the next line when the
 * source reads whole files (`multiLine`), and is malformed otherwise, as Spark has it.
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
  type ParseFormat,
  recordBatchesOf,
  recordsOf,
  skipped
} from "./ParseModes.js"

type Dialect = DataFormats.CsvDialect

/**
 * The fields of one line, the unquoted text of a null a `null`; `undefined` when a quoted value is still open at
 * the line's end.
 *
 * @since 0.1.0
 */
export const split = (line: string, dialect: Dialect): Array<string | null> | undefined => {
  const { escape, nullValue, quote, sep } = dialect
  const fields: Array<string | null> = []
  let at = 0
  for (;;) {
    if (line.startsWith(quote, at)) {
      // A quoted value: to the quote that is neither doubled nor escaped; text after it, before the separator,
      // is kept (as Spark keeps it).
      let value = ""
      let from = at + 1
      for (;;) {
        const next = line.indexOf(quote, from)
        if (next < 0) return undefined
        if (escape !== quote && next > from && line[next - 1] === escape) {
          value += line.slice(from, next - 1) + quote
          from = next + 1
        } else if (line.startsWith(quote, next + 1)) {
          value += line.slice(from, next) + quote
          from = next + 2
        } else {
          value += line.slice(from, next)
          at = next + 1
          break
        }
      }
      const end = line.indexOf(sep, at)
      value += line.slice(at, end < 0 ? line.length : end)
      fields.push(value)
      if (end < 0) return fields
      at = end + 1
    } else {
      const end = line.indexOf(sep, at)
      const text = line.slice(at, end < 0 ? line.length : end)
      fields.push(text === nullValue ? null : text)
      if (end < 0) return fields
      at = end + 1
    }
  }
}

type Format = ParseFormat & {
  readonly dialect: Dialect
  readonly fields: DataFormats.Fields
  readonly columns?: ReadonlyArray<string> | undefined
}

type Place = LinePlace & { readonly startsFile: boolean; readonly multiLine: boolean }

/**
 * The records of a split's lines, given in batches (`TextSplits.lineBatches`), one at a time. The split that starts
 * its file skips the header line when the dialect has one; empty lines and comments are skipped everywhere.
 *
 * @since 0.1.0
 */
export const records = (
  batches: Iterable<ReadonlyArray<string>>,
  format: Format,
  place: Place,
  decode?: (record: unknown) => unknown
): Generator<unknown> => recordsOf(batches, lineReader(format, place, decode))

/**
 * The records `records` gives, a batch of lines' records at a time.
 *
 * @since 0.1.0
 */
export const recordBatches = (
  batches: Iterable<ReadonlyArray<string>>,
  format: Format,
  place: Place,
  decode?: (record: unknown) => unknown
): Generator<Array<unknown>> => recordBatchesOf(batches, lineReader(format, place, decode))

// A split's lines made records one by one, what spans lines (the header to skip, a record still open) held between.
const lineReader = (format: Format, place: Place, decode?: (record: unknown) => unknown): LineReader => {
  const { dialect, fields } = format
  // The file's fields, in its order, and those a record keeps, with their places among the values.
  const read = fields.filter((field) => field.name !== format.corruptRecordField)
  const kept = read.flatMap((field, place): Array<Kept> =>
    format.columns === undefined || format.columns.includes(field.name)
      ? [{ field, place, fromText: FieldValues.textReader(field) }]
      : []
  )
  // The kept field of each of a line's values (none past the file's fields).
  const keptAt: Array<Kept | undefined> = read.map((_, place) => kept.find((k) => k.place === place))
  let headerLeft = place.startsFile && dialect.header
  let line = -1
  // A record whose quoted value runs on to the next lines: its text so far and the line it started on.
  let pending: { text: string; line: number } | undefined
  const blank = blankRecords(kept, format)
  const unclosed = (text: string, line: number) =>
    malformed(format, place, line, text, "a quoted value is not closed", blank())
  return {
    line: (next) => {
      line++
      const text = pending === undefined ? next : `${pending.text}\n${next}`
      const first = pending?.line ?? line
      if (pending === undefined && (next === "" || (dialect.comment !== "" && next.startsWith(dialect.comment)))) {
        return skipped
      }
      // A line without quotes, the common case, is read value by value into its record: no array of its values,
      // and no text cut out for a value the record does not keep.
      const unquoted = !text.includes(dialect.quote)
      const tokens = unquoted ? undefined : split(text, dialect)
      if (!unquoted && tokens === undefined && place.multiLine) {
        pending = { text, line: first }
        return skipped
      }
      pending = undefined
      if (headerLeft) {
        headerLeft = false
        return skipped
      }
      if (place.tally !== undefined) place.tally.records++
      const record = unquoted
        ? unquotedRecord(text, dialect, read.length, keptAt, blank, format, place, first)
        : tokens === undefined
        ? unclosed(text, first)
        : recordOf(tokens, read.length, kept, blank, format, place, first, text)
      if (record === undefined) return skipped
      if (decode === undefined) return record
      const typed = decoded(decode, record, format.mode, () => `in ${place.path} at line ${place.firstLine() + first}`)
      return typed === undefined ? skipped : typed.record
    },
    end: () => {
      if (pending === undefined) return skipped
      if (place.tally !== undefined) place.tally.records++
      return unclosed(pending.text, pending.line) ?? skipped
    }
  }
}

interface Kept {
  readonly field: DataFormats.Field
  /** Its value's place among a line's values. */
  readonly place: number
  /** Its value from its text (`FieldValues.fromText` of its field). */
  readonly fromText: (text: string) => unknown
}

// A maker of records of the kept fields (and the corrupt record's field), all null: copies of one made once, which
// have the record's shape from the start (their fields are then set, not added one by one). No field is named
// `__proto__`: the app refuses one where fields are settled, since a record cannot hold it.
const blankRecords = (kept: ReadonlyArray<Kept>, format: ParseFormat): () => Record<string, unknown> => {
  const blank: Record<string, unknown> = {}
  for (const { field } of kept) blank[field.name] = null
  if (format.corruptRecordField !== undefined) blank[format.corruptRecordField] = null
  return () => ({ ...blank })
}

const recordOf = (
  tokens: ReadonlyArray<string | null>,
  fieldCount: number,
  kept: ReadonlyArray<Kept>,
  blank: () => Record<string, unknown>,
  format: ParseFormat,
  place: LinePlace,
  line: number,
  text: string
): Record<string, unknown> | undefined => {
  const record = blank()
  let problem: string | undefined
  for (let i = 0; i < kept.length; i++) {
    const token = tokens[kept[i]!.place]
    if (token === undefined || token === null) continue
    // Every value is read, after a wrong one too: PERMISSIVE keeps them.
    const wrong = filled(record, kept[i]!, token)
    problem ??= wrong
  }
  return finished(record, problem, tokens.length, fieldCount, format, place, line, text)
}

// The values of a line without quotes, each cut at the separator and, when the record keeps it, made its field's.
const unquotedRecord = (
  text: string,
  dialect: Dialect,
  fieldCount: number,
  keptAt: ReadonlyArray<Kept | undefined>,
  blank: () => Record<string, unknown>,
  format: ParseFormat,
  place: LinePlace,
  line: number
): Record<string, unknown> | undefined => {
  const record = blank()
  let problem: string | undefined
  let values = 0
  for (let at = 0;;) {
    const end = text.indexOf(dialect.sep, at)
    const keeps = keptAt[values++]
    if (keeps !== undefined) {
      const token = text.slice(at, end < 0 ? text.length : end)
      const wrong = token === dialect.nullValue ? undefined : filled(record, keeps, token)
      problem ??= wrong
    }
    if (end < 0) break
    at = end + 1
  }
  return finished(record, problem, values, fieldCount, format, place, line, text)
}

// The field's value read into the record; what is wrong with the text when it cannot be read.
const filled = (record: Record<string, unknown>, kept: Kept, token: string): string | undefined => {
  try {
    record[kept.field.name] = kept.fromText(token)
    return undefined
  } catch (error) {
    if (!(error instanceof FieldValues.Unparsable)) throw error
    return error.message
  }
}

// A record read with `values` values: malformed when one of them could not be read or, except in PERMISSIVE (which
// fills in nulls and drops the extra ones, as Spark's reader does), when there are too few or too many.
const finished = (
  record: Record<string, unknown>,
  problem: string | undefined,
  values: number,
  fieldCount: number,
  format: ParseFormat,
  place: LinePlace,
  line: number,
  text: string
): Record<string, unknown> | undefined => {
  if (problem === undefined && values !== fieldCount && format.mode !== "PERMISSIVE") {
    problem = `${values} values for ${fieldCount} fields`
  }
  return problem === undefined ? record : malformed(format, place, line, text, problem, record)
}

const needsQuotes = (text: string, dialect: Dialect) =>
  text === "" || text === dialect.nullValue || text.includes(dialect.sep) || text.includes(dialect.quote) ||
  text.includes("\n") || text.includes("\r") || (dialect.comment !== "" && text.startsWith(dialect.comment)) ||
  text.trim() !== text

/**
 * One value as a CSV field: a null as the dialect's null text, a value that needs it quoted (an empty string
 * too, so that it reads back as one and not as a null) with its quotes doubled.
 *
 * @since 0.1.0
 */
export const field = (value: unknown, dialect: Dialect, type?: DataFormats.FieldType): string => {
  if (value === null || value === undefined) return dialect.nullValue
  const text = FieldValues.toText(value, type)
  if (!needsQuotes(text, dialect)) return text
  return dialect.quote + text.replaceAll(dialect.quote, dialect.quote + dialect.quote) + dialect.quote
}

/**
 * A record, an object of `fields`, as a CSV line (without its line end); a record that is no object is one
 * field.
 *
 * @since 0.1.0
 */
export const line = (record: unknown, fields: DataFormats.Fields, dialect: Dialect): string => {
  if (typeof record !== "object" || record === null || record instanceof Date || Array.isArray(record)) {
    return Array.isArray(record)
      ? record.map((value) => field(value, dialect)).join(dialect.sep)
      : field(record, dialect)
  }
  const values = record as Record<string, unknown>
  return fields.map((f) => field(values[f.name], dialect, f.type)).join(dialect.sep)
}

/**
 * The header line of `fields`.
 *
 * @since 0.1.0
 */
export const header = (fields: DataFormats.Fields, dialect: Dialect): string =>
  fields.map((f) => field(f.name, dialect)).join(dialect.sep)
