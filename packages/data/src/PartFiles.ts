/**
 * The part files of a saved dataset, written by its tasks. An attempt writes its part under a name of its own in
 * `dir/_temporary` (hidden from readers, as Hadoop's committers hide it) and renames it into place once whole:
 * a failed or killed attempt never leaves a partial part where readers look, and of attempts that both finish —
 * a retry, a speculative copy — the last wins whole, as each writes the same records under the same name. The
 * driver removes `_temporary` when it commits the job.
 *
 * @since 0.1.0
 */
import type { DataFormats, TaskPlan } from "@kindling/protocol"
import * as Records from "@kindling/protocol/records"
import * as Compression from "./Compression.js"
import * as Csv from "./Csv.js"
import type { Files, Writer } from "./Disk.js"
import * as FilePaths from "./FilePaths.js"
import * as JsonLines from "./JsonLines.js"
import * as Parquet from "./Parquet.js"

/**
 * What a part holds once committed: its records and bytes, the task's output metrics as Spark counts a file's.
 *
 * @since 0.1.0
 * @category models
 */
export interface Written {
  readonly records: number
  readonly bytes: number
}

/**
 * Where attempts write their parts until each is whole.
 *
 * @since 0.1.0
 */
export const temporaryDir = "_temporary"

/**
 * A part's name by its partition, as Hadoop names them: `part-00007`.
 *
 * @since 0.1.0
 */
export const partFile = (partition: number): string => `part-${String(partition).padStart(5, "0")}`

/**
 * Writes `dir/file` in `files` through a temporary file of the attempt's own (`attempt` names it: a task
 * attempt's id), renamed into place once `body` has written it whole. `body` writes through the writer it is
 * given and says what it wrote, which is returned once committed.
 *
 * @since 0.1.0
 */
export const write = (
  files: Files,
  target: { readonly dir: string; readonly file: string; readonly attempt: string },
  body: (writer: Writer) => Written
): Written => {
  const { dir, file } = target
  const temporary = FilePaths.join(
    dir,
    temporaryDir,
    `${file}.${target.attempt}.${process.pid}.${Math.random().toString(36).slice(2)}`
  )
  files.makeDirectory(FilePaths.dirname(temporary))
  const writer = files.openWrite(temporary)
  let written: Written
  try {
    written = body(writer)
  } finally {
    writer.close()
  }
  files.rename(temporary, FilePaths.join(dir, file))
  return written
}

// Raw bytes bound for a compressed file are compressed a member at a time, at most this many to a member.
const memberSize = 64 * 1024 * 1024
// Text is encoded and written in batches of about this many characters.
const batchSize = 64 * 1024

// Lines written through `writer`, compressed with `codec` when given; returns the bytes written.
const lineWriter = (writer: Writer, codec: DataFormats.Compression | undefined) => {
  const encoder = new TextEncoder()
  let position = 0
  let text = ""
  let raw: Array<Uint8Array> = []
  let rawBytes = 0
  const put = (bytes: Uint8Array) => {
    writer.write(bytes, position)
    position += bytes.length
  }
  // A compressed file holds at least one member, empty if need be: every reader takes that for no lines.
  let members = 0
  const flushMember = () => {
    if (rawBytes === 0 && members > 0) return
    members++
    put(Compression.compress(Buffer.concat(raw, rawBytes), codec!))
    raw = []
    rawBytes = 0
  }
  const flushText = () => {
    if (text === "") return
    const bytes = encoder.encode(text)
    text = ""
    if (codec === undefined) return put(bytes)
    raw.push(bytes)
    rawBytes += bytes.length
    if (rawBytes >= memberSize) flushMember()
  }
  return {
    line: (line: string) => {
      text += line + "\n"
      if (text.length >= batchSize) flushText()
    },
    end: () => {
      flushText()
      if (codec !== undefined) flushMember()
      return position
    }
  }
}

/**
 * A record as a line of text: a string as itself, anything else as JSON. An Effect is refused (`CannotTravel`):
 * its JSON would be written as if it were the result meant.
 *
 * @since 0.1.0
 */
export const asLine = (record: unknown): string => {
  if (typeof record === "string") return record
  if (record === null || typeof record !== "object") return String(record)
  if (Records.isEffect(record)) throw new Records.CannotTravel("A record", Records.untravelled(record)!)
  return JSON.stringify(record)
}

/**
 * Writes records as `dir/file` in `format`, compressed with `compression` when given (text, CSV and JSON lines;
 * Parquet compresses its pages by its own codec), through the attempt's temporary file (`write`). The records
 * come as an iterable and as `each`, which pushes every one to a sink: the engine's pipelines push faster than
 * they are iterated, and Parquet's writer needs the iterable.
 *
 * @since 0.1.0
 */
export const save = (
  records: { readonly iterable: Iterable<unknown>; readonly each: (sink: (record: unknown) => void) => void },
  target: {
    readonly dir: string
    readonly file: string
    readonly attempt: string
    readonly format: DataFormats.OutputFormat
    readonly compression?: DataFormats.Compression | undefined
  },
  files: Files
): Written =>
  write(files, target, (writer) => {
    const { format } = target
    if (format._tag === "Parquet") return Parquet.write(records.iterable, format.fields, format, writer)
    const out = lineWriter(writer, target.compression)
    let written = 0
    const lineOf = format._tag === "Csv"
      ? (record: unknown) => Csv.line(record, format.fields, format.dialect)
      : format._tag === "JsonLines"
      ? (record: unknown) => JsonLines.line(record, format.fields)
      : asLine
    if (format._tag === "Csv" && format.dialect.header) out.line(Csv.header(format.fields, format.dialect))
    records.each((record) => {
      out.line(lineOf(record))
      written++
    })
    return { records: written, bytes: out.end() }
  })

/**
 * The codec a task that writes files compresses with beyond gzip (its thread readies it first: see
 * `Compression.prepare`), if any.
 *
 * @since 0.1.0
 */
export const codecWritten = (result: typeof TaskPlan.ResultOp.Encoded): DataFormats.Compression | undefined => {
  if (result._tag !== "SaveAs") return undefined
  const { compression, format } = result
  return compression === "zstd" || (format._tag === "Parquet" && format.codec === "zstd") ? "zstd" : undefined
}
