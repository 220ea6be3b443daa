/**
 * What a reader of CSV or JSON lines does with a record it cannot read, by its mode (Spark's): `PERMISSIVE`
 * keeps the record, with the values it could read and its text in the corrupt-record field; `DROPMALFORMED`
 * drops it; `FAILFAST` fails the task, naming the file, line and field.
 *
 * @since 0.1.0
 */
import type { DataFormats } from "@kindling/protocol"

/**
 * A record that a `FAILFAST` reader could not read: the file, line and field are in the message.
 *
 * @since 0.1.0
 */
export class MalformedRecord extends Error {
  override readonly name = "MalformedRecord"
}

/**
 * Where a split's lines are: its file and where its first line is (a line number counted only when a message
 * needs it, as it means reading the file up to the split).
 *
 * @since 0.1.0
 */
export interface LinePlace {
  readonly path: string
  readonly firstLine: () => number
  /** Where the records the lines make are counted, and the malformed among them. */
  readonly tally?: Tally | undefined
}

/**
 * The records a split's lines made, and how many of those were malformed.
 *
 * @since 0.1.0
 */
export interface Tally {
  records: number
  malformed: number
}

/**
 * What the driver warns of a file whose every record was malformed (none if any record was not, or it had none):
 * the file, and what is likely wrong — for JSON, a file of one array or of pretty-printed objects read as JSON
 * lines, which `multiLine` reads.
 *
 * @since 0.1.0
 */
export const everyRecordMalformed = (file: {
  readonly path: string
  readonly format: "Csv" | "JsonLines"
  readonly multiLine: boolean
  readonly records: number
  readonly malformed: number
}): string | undefined => {
  if (file.records === 0 || file.malformed < file.records) return undefined
  const every = file.records === 1 ? "The one record" : `Every one of the ${file.records} records`
  const hint = file.format === "Csv"
    ? "check the reader's sep, quote and header, and the fields given"
    : file.multiLine
    ? "it holds no JSON values"
    : "a file of one JSON array, or of pretty-printed objects, is read with multiLine: true " +
      "(read.json(path, { multiLine: true }))"
  return `${every} read from ${file.path} is malformed: ${hint}`
}

/**
 * What a reader of records is told about them.
 *
 * @since 0.1.0
 */
export interface ParseFormat {
  readonly fields?: DataFormats.Fields | undefined
  readonly mode: DataFormats.ParseMode
  readonly corruptRecordField?: string | undefined
}

/**
 * What becomes of the record of a line's text that could not be read, by the reader's mode: the record to give
 * (`partial`, completed), none, or a `MalformedRecord` thrown.
 *
 * @since 0.1.0
 */
export const malformed = (
  format: ParseFormat,
  place: LinePlace,
  line: number,
  text: string,
  reason: string,
  partial: Record<string, unknown>
): Record<string, unknown> | undefined => {
  if (place.tally !== undefined) place.tally.malformed++
  switch (format.mode) {
    case "DROPMALFORMED":
      return undefined
    case "FAILFAST":
      throw new MalformedRecord(
        `Malformed record in ${place.path} at line ${place.firstLine() + line}: ${reason} (mode FAILFAST)`
      )
    case "PERMISSIVE":
      if (format.corruptRecordField !== undefined) partial[format.corruptRecordField] = text
      return partial
  }
}

/**
 * A record as the app's schema decodes it (`decode`), if there is one. A typed record cannot be kept half-read,
 * so a record the schema rejects is dropped in `DROPMALFORMED` and fails the task otherwise, naming the file, the
 * line and the schema's account of why (which names the field).
 *
 * @since 0.1.0
 */
export const decoded = (
  decode: ((record: unknown) => unknown) | undefined,
  record: unknown,
  mode: DataFormats.ParseMode,
  where: () => string
): { readonly record: unknown } | undefined => {
  if (decode === undefined) return { record }
  try {
    return { record: decode(record) }
  } catch (error) {
    if (mode === "DROPMALFORMED") return undefined
    throw new MalformedRecord(
      `Record ${where()} does not fit the schema: ${error instanceof Error ? error.message : String(error)}`
    )
  }
}

/**
 * What a reader of lines makes of a line that gives no record: a blank line, a header, a comment, a record dropped,
 * a line a record goes on from.
 *
 * @since 0.1.0
 */
export const skipped: unique symbol = Symbol("skipped")

/**
 * A split's lines made records, one line at a time and in order (a reader holds what spans lines: a header still
 * to skip, a record still open).
 *
 * @since 0.1.0
 */
export interface LineReader {
  /** The record the next line ends, or `skipped`. */
  readonly line: (text: string) => unknown
  /** The record still open when the lines end (malformed), or `skipped`. */
  readonly end: () => unknown
}

/**
 * The records a reader makes of lines given in batches, one at a time: a consumer that stops early (`take`) reads
 * no more lines than it needs, and meets no malformed line past them.
 *
 * @since 0.1.0
 */
export function* recordsOf(lines: Iterable<ReadonlyArray<string>>, reader: LineReader): Generator<unknown> {
  for (const batch of lines) {
    for (let i = 0; i < batch.length; i++) {
      const record = reader.line(batch[i]!)
      if (record !== skipped) yield record
    }
  }
  const last = reader.end()
  if (last !== skipped) yield last
}

// Records per batch: enough that a batch costs nothing per record, few enough that a batch's records die young (a
// batch of a whole chunk's lines, held until its last record is pushed, costs more collecting than it saves).
const batchSize = 1024

/**
 * The records a reader makes of lines given in batches, `batchSize` records at a time: a consumer that reads
 * them all loops over arrays rather than resuming a generator per record.
 *
 * @since 0.1.0
 */
export function* recordBatchesOf(
  lines: Iterable<ReadonlyArray<string>>,
  reader: LineReader
): Generator<Array<unknown>> {
  let records: Array<unknown> = []
  for (const batch of lines) {
    for (let i = 0; i < batch.length; i++) {
      const record = reader.line(batch[i]!)
      if (record === skipped) continue
      records.push(record)
      if (records.length < batchSize) continue
      yield records
      records = []
    }
  }
  const last = reader.end()
  if (last !== skipped) records.push(last)
  if (records.length > 0) yield records
}
