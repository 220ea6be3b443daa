/**
 * Parquet files, read and written on a task's thread, synchronously: the footer (its row groups and schema), the
 * rows of row groups — only the column chunks of the fields read are read from the file — and a partition's
 * records written as a file of row groups. Pages are decoded and encoded by hyparquet; what it leaves to its
 * asynchronous reader (fetching the chunks) is done here through `Files`, so that it runs inside a task.
 *
 * Fields map to Parquet's types as Spark writes them: `string` is UTF8 `BYTE_ARRAY`, `int` `INT32`, `long`
 * `INT64`, `float` `FLOAT`, `double` `DOUBLE`, `date` `INT32 (DATE)`, `timestamp` `INT64 (TIMESTAMP(MICROS, UTC))`,
 * `decimal(p,s)` `INT32`/`INT64`/`FIXED_LEN_BYTE_ARRAY` by precision, `binary` `BYTE_ARRAY`. Read, every type
 * other writers make maps to a field as Spark maps it, where Kindling has the type (see `reading`): the integers of
 * every width and sign, FLOAT16, decimals of any physical type up to 38 digits, timestamps of every unit (INT96 too,
 * as older writers made them; floored to milliseconds), bytes that are no text as bytes; TIME and INTERVAL are
 * refused (`UnsupportedColumn`). Nested columns — lists, maps and structs, within one another — are read as arrays
 * and objects, assembled by hyparquet from their leaf columns; they are not written yet.
 *
 * @since 0.1.0
 */
import type { DataFormats } from "@kindling/protocol"
import type { ColumnMetaData, CompressionCodec, DecodedArray, FileMetaData, SchemaElement } from "hyparquet"
import { parquetMetadata, parquetSchema } from "hyparquet"
import { compressors } from "hyparquet-compressors"
import { ByteWriter, ParquetWriter } from "hyparquet-writer"
import { assembleNested } from "hyparquet/src/assemble.js"
import { parquetHeader, readColumn, readPage } from "hyparquet/src/column.js"
import { convert, convertWithDictionary, DEFAULT_PARSERS } from "hyparquet/src/convert.js"
import { decompressPage, readDataPage, readDataPageV2 } from "hyparquet/src/datapage.js"
import { getMaxDefinitionLevel, getTreePath, isFlatColumn, isListLike, isMapLike } from "hyparquet/src/schema.js"
import type { DataReader } from "hyparquet/src/types.js"
import type { ColumnDecoder, ParquetParsers, SchemaTree } from "hyparquet/src/types.js"
import * as Compression from "./Compression.js"
import type { Files, Reader, Writer } from "./Disk.js"
import * as FieldValues from "./FieldValues.js"

type Field = DataFormats.Field

const magic = 0x31524150

// A page of no bytes (the empty dictionary of a column of nulls) is nothing, whatever its codec: hyparquet-compressors'
// LZ4 takes the empty block's lone token for a match and throws.
const decompressors = Object.fromEntries(
  Object.entries(compressors).map(([codec, decompress]) => [
    codec,
    (input: Uint8Array, outputLength: number) =>
      outputLength === 0 ? new Uint8Array(0) : decompress(input, outputLength)
  ])
)

/**
 * The footer of the Parquet file at `path`: its row groups and schema.
 *
 * @since 0.1.0
 */
export const footer = (files: Files, path: string): FileMetaData => {
  const size = files.stat(path)?.size
  if (size === undefined) throw new Error(`${path} does not exist`)
  const reader = files.openRead(path)
  try {
    return footerOf(reader, size, path)
  } finally {
    reader.close()
  }
}

const footerOf = (reader: Reader, size: number, path: string): FileMetaData => {
  if (size < 12) throw new Error(`${path} is no Parquet file: ${size} bytes`)
  const tail = readRange(reader, size - 8, 8)
  const view = new DataView(tail.buffer, tail.byteOffset, 8)
  if (view.getUint32(4, true) !== magic) throw new Error(`${path} is no Parquet file: it does not end in PAR1`)
  const length = view.getUint32(0, true)
  if (length + 12 > size) throw new Error(`${path} is no Parquet file: a footer of ${length} bytes`)
  return parquetMetadata(readRange(reader, size - 8 - length, length + 8))
}

const readRange = (reader: Reader, position: number, length: number): Uint8Array => {
  const bytes = new Uint8Array(length)
  let got = 0
  while (got < length) {
    const n = reader.read(bytes, got, length - got, position + got)
    if (n === 0) throw new Error(`the file ends ${length - got} bytes short of a Parquet chunk`)
    got += n
  }
  return bytes
}

/**
 * A column of a type Kindling does not read (Parquet's TIME, which Spark refuses too; INTERVAL; a decimal of more
 * than 38 digits): the message names the column and the type, and the way around it.
 *
 * @since 0.1.0
 */
export class UnsupportedColumn extends Error {
  override readonly name = "UnsupportedColumn"
  constructor(readonly column: string, readonly type: string) {
    super(
      `the column ${column} is ${type}, which Kindling does not read: leave it out with the option columns ` +
        `(read.parquet(path, { columns: [...] }))`
    )
  }
}

// How a leaf column is read: the field its values are, the schema element hyparquet decodes its pages by (without
// the annotations whose values Kindling makes itself), whether hyparquet decodes its BYTE_ARRAY values as UTF-8
// text (it does unless told not to, annotated or not), and what becomes of each value hyparquet gives.
interface Reading {
  readonly field: Pick<Field, "type" | "precision" | "scale">
  readonly element: SchemaElement
  readonly utf8: boolean
  readonly value?: (raw: unknown) => unknown
}

// Spark's limit, and Kindling's: a decimal is at most 38 digits.
const maxPrecision = 38

// How a leaf column of `element` is read, as Spark maps Parquet's types where Kindling has the type: INT32 (with
// its 8- and 16-bit forms) is an int; an unsigned 32-bit integer a long; an unsigned 64-bit one a decimal(20,0);
// FLOAT16 a float; a string, ENUM, JSON or UUID column text; a BYTE_ARRAY or FIXED_LEN_BYTE_ARRAY column otherwise
// bytes, whatever else it is annotated with (BSON, geometries); Parquet's NULL a string column of nulls.
const reading = (column: string, element: SchemaElement): Reading => {
  const { converted_type: converted, logical_type: logical, type } = element
  const { converted_type: _, logical_type: __, ...bare } = element
  const as = (field: DataFormats.FieldType | Reading["field"], options: Partial<Reading> = {}): Reading => ({
    field: typeof field === "string" ? { type: field } : field,
    element,
    utf8: false,
    ...options
  })
  if (converted === "DECIMAL" || logical?.type === "DECIMAL") {
    const precision = element.precision ?? (logical?.type === "DECIMAL" ? logical.precision : 10)
    const scale = element.scale ?? (logical?.type === "DECIMAL" ? logical.scale : 0)
    if (precision > maxPrecision) {
      throw new UnsupportedColumn(column, `decimal(${precision},${scale}), more than ${maxPrecision} digits`)
    }
    // From their unscaled integers: hyparquet would make them floating-point numbers.
    return as({ type: "decimal", precision, scale }, {
      element: bare,
      value: (raw) =>
        FieldValues.decimalFromUnscaled(raw instanceof Uint8Array ? signedBigInt(raw) : BigInt(raw as number), scale)
    })
  }
  if (logical?.type === "TIME" || converted === "TIME_MILLIS" || converted === "TIME_MICROS") {
    const unit = logical?.type === "TIME" ? logical.unit : converted === "TIME_MILLIS" ? "MILLIS" : "MICROS"
    throw new UnsupportedColumn(column, `${type} TIME(${unit}), a time of day`)
  }
  if (converted === "INTERVAL" || logical?.type === "INTERVAL") throw new UnsupportedColumn(column, `${type} INTERVAL`)
  const unsigned = (bits: number) =>
    converted === `UINT_${bits}` || (logical?.type === "INTEGER" && logical.bitWidth === bits && !logical.isSigned)
  switch (type) {
    case "BOOLEAN":
      return as("boolean")
    case "INT32":
      if (converted === "DATE" || logical?.type === "DATE") return as("date")
      if (logical?.type === "NULL") return as("string")
      // hyparquet makes them unsigned numbers; a long is a bigint.
      if (unsigned(32)) return as("long", { value: (raw) => BigInt(raw as number) })
      return as("int")
    case "INT64":
      if (converted === "TIMESTAMP_MILLIS" || converted === "TIMESTAMP_MICROS" || logical?.type === "TIMESTAMP") {
        return as("timestamp")
      }
      // hyparquet makes them unsigned bigints; a decimal is its text.
      if (unsigned(64)) return as({ type: "decimal", precision: 20, scale: 0 }, { value: (raw) => String(raw) })
      return as("long")
    case "INT96":
      return as("timestamp")
    case "FLOAT":
      return as("float")
    case "DOUBLE":
      return as("double")
    case "FIXED_LEN_BYTE_ARRAY":
      if (logical?.type === "FLOAT16") return as("float")
      if (logical?.type === "UUID") return as("string")
      return as("binary", { element: bare })
    case "BYTE_ARRAY":
      if (converted === "UTF8" || converted === "ENUM" || logical?.type === "STRING" || logical?.type === "ENUM") {
        return as("string", { utf8: true })
      }
      // JSON as its text: hyparquet would parse it.
      if (converted === "JSON" || logical?.type === "JSON") return as("string", { element: bare, utf8: true })
      return as("binary", { element: bare })
    default:
      // A group without children; nothing to read but nulls.
      return as("struct")
  }
}

// A timestamp finer than milliseconds (a `Date` holds no finer) is floored to its millisecond, as Java's floorDiv
// does — hyparquet's own parsers cut it toward zero, a millisecond late before 1970.
const floorDiv = (value: bigint, divisor: bigint) => {
  const quotient = value / divisor
  return value % divisor < 0n ? quotient - 1n : quotient
}
const parsers: ParquetParsers = {
  ...DEFAULT_PARSERS,
  timestampFromMicroseconds: (micros) => new Date(Number(floorDiv(micros, 1000n))),
  timestampFromNanoseconds: (nanos) => new Date(Number(floorDiv(nanos, 1_000_000n)))
}

/**
 * The names of a Parquet file's top-level columns.
 *
 * @since 0.1.0
 */
export const columnNames = (metadata: FileMetaData): Array<string> =>
  parquetSchema(metadata).children.map((child) => child.element.name)

const leaves = (node: SchemaTree): Array<SchemaTree> =>
  node.children.length === 0 ? [node] : node.children.flatMap(leaves)

/**
 * The fields of a Parquet file's top-level columns, or of those named (which it has); throws `UnsupportedColumn`
 * for one of a type Kindling does not read, nested in it or not.
 *
 * @since 0.1.0
 */
export const fieldsOf = (metadata: FileMetaData, columns?: ReadonlyArray<string>): Array<Field> => {
  const children = parquetSchema(metadata).children
  const chosen = columns === undefined
    ? children
    : columns.map((name) => children.find((child) => child.element.name === name)!)
  return chosen.map((child): Field => {
    const { name } = child.element
    const nullable = child.element.repetition_type !== "REQUIRED"
    if (child.children.length === 0) return { name, nullable, ...reading(name, child.element).field }
    for (const leaf of leaves(child)) reading(name, leaf.element)
    return { name, type: isListLike(child) ? "array" : isMapLike(child) ? "map" : "struct", nullable }
  })
}

const signedBigInt = (bytes: Uint8Array): bigint => {
  let value = 0n
  for (const byte of bytes) value = (value << 8n) | BigInt(byte)
  return bytes.length > 0 && bytes[0]! >= 0x80 ? value - (1n << BigInt(bytes.length * 8)) : value
}

// A value of a leaf column as its reading makes it; a nested leaf's values are arrays by row (from its repetition
// levels), converted element by element.
const converted = (value: unknown, convert: (raw: unknown) => unknown): unknown =>
  value === null || value === undefined
    ? value
    : Array.isArray(value)
    ? value.map((item) => converted(item, convert))
    : convert(value)

// A flat column chunk's pages, each the values of its rows (null where a row has none). hyparquet's `readColumn`
// gives the same, but puts every value of an optional column through its list assembly, one push (and one boxed
// number) per value; here a page without nulls stays the array its values were decoded into.
const flatPages = (reader: DataReader, rowCount: number, decoder: ColumnDecoder): Array<DecodedArray> => {
  const pages: Array<DecodedArray> = []
  const defined = getMaxDefinitionLevel(decoder.schemaPath)
  let dictionary: DecodedArray | undefined
  let rows = 0
  while (rows < rowCount && reader.offset < reader.view.byteLength - 1) {
    const header = parquetHeader(reader)
    if (header.type === "DICTIONARY_PAGE") {
      const { data } = readPage(reader, header, decoder, undefined, undefined, 0)
      if (data) dictionary = convert(data, decoder)
      continue
    }
    const compressed = new Uint8Array(
      reader.view.buffer,
      reader.view.byteOffset + reader.offset,
      header.compressed_page_size
    )
    reader.offset += header.compressed_page_size
    const v1 = header.type === "DATA_PAGE" ? header.data_page_header : undefined
    const v2 = header.type === "DATA_PAGE_V2" ? header.data_page_header_v2 : undefined
    if (v1 === undefined && v2 === undefined) throw new Error(`parquet unsupported page type: ${header.type}`)
    const { dataPage, definitionLevels } = v1 !== undefined
      ? readDataPage(
        decompressPage(compressed, header.uncompressed_page_size, decoder.codec, decoder.compressors),
        v1,
        decoder
      )
      : readDataPageV2(compressed, header, decoder)
    const values = convertWithDictionary(dataPage, dictionary, (v1 ?? v2)!.encoding, decoder)
    const levels = definitionLevels ?? []
    if (levels.length === 0 || levels.length === values.length) {
      if (values.length > 0) pages.push(values)
      rows += values.length
      continue
    }
    const page = new Array<unknown>(levels.length)
    let next = 0
    for (let i = 0; i < levels.length; i++) page[i] = levels[i] === defined ? values[next++] : null
    pages.push(page as DecodedArray)
    rows += levels.length
  }
  return pages
}

// Pages of one typed array type as one array of it.
interface TypedPage extends ArrayLike<unknown> {
  set(values: ArrayLike<unknown>, offset: number): void
}
const concatenated = (pages: ReadonlyArray<TypedPage>): TypedPage => {
  const length = pages.reduce((n, page) => n + page.length, 0)
  const all = new (pages[0]!.constructor as new(length: number) => TypedPage)(length)
  let at = 0
  for (const page of pages) {
    all.set(page, at)
    at += page.length
  }
  return all
}

/**
 * The rows of row groups of the Parquet file at `path`, each an object of `fields` (the file's columns of those
 * names), a row group at a time. `done` is told the bytes read of the file.
 *
 * @since 0.1.0
 */
export function* rows(
  files: Files,
  path: string,
  rowGroups: ReadonlyArray<number>,
  fields: DataFormats.Fields,
  done?: (bytes: number) => void
): Generator<Record<string, unknown>> {
  for (const batch of rowBatches(files, path, rowGroups, fields, done)) yield* batch
}

// Rows made a batch at a time: few enough that a batch dies young (a row group's worth would outlive the young
// generation), many enough that a consumer looping over them pays one generator resume per batch, not per row.
const batchRows = 1024

/**
 * The rows of `rows`, in arrays of up to 1,024 (the next made once the consumer asks for it).
 *
 * @since 0.1.0
 */
export function* rowBatches(
  files: Files,
  path: string,
  rowGroups: ReadonlyArray<number>,
  fields: DataFormats.Fields,
  done?: (bytes: number) => void
): Generator<Array<Record<string, unknown>>> {
  let bytes = 0
  let reader: Reader | undefined
  try {
    const size = files.stat(path)?.size
    if (size === undefined) throw new Error(`${path} does not exist`)
    // One reader for the footer and every chunk: on object storage, opening costs a request.
    const file = reader = files.openRead(path)
    const metadata = footerOf(file, size, path)
    const schema = parquetSchema(metadata)
    for (const group of rowGroups) {
      const rowGroup = metadata.row_groups[group]
      if (rowGroup === undefined) throw new Error(`${path} has no row group ${group}`)
      const rowCount = Number(rowGroup.num_rows)
      // A leaf column chunk's values, its pages' values one after another (a nested leaf's values are already
      // arrays by row, from its repetition levels).
      const leaf = (chunk: ColumnMetaData, column: string): ArrayLike<unknown> => {
        const schemaPath = getTreePath(schema, chunk.path_in_schema)
        const { element, utf8, value } = reading(column, schemaPath[schemaPath.length - 1]!.element)
        const decoder: ColumnDecoder = {
          pathInSchema: chunk.path_in_schema,
          type: chunk.type,
          element,
          schemaPath,
          codec: chunk.codec,
          parsers,
          compressors: decompressors,
          utf8
        }
        const start = Number(chunk.dictionary_page_offset ?? chunk.data_page_offset)
        const length = Number(chunk.total_compressed_size)
        const buffer = readRange(file, start, length)
        bytes += length
        const reader = { view: new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength), offset: 0 }
        const data = isFlatColumn(schemaPath) ? flatPages(reader, rowCount, decoder) : readColumn(
          reader,
          { groupStart: 0, selectStart: 0, selectEnd: rowCount, groupRows: rowCount },
          decoder
        ).data
        // Values that need no conversion stay in their pages' arrays (typed arrays, for numbers), read where the
        // rows are built: no copy of each value, and no number boxed on its way to a record.
        if (value === undefined && data.length === 1) return data[0]!
        if (
          value === undefined &&
          data.every((page) => ArrayBuffer.isView(page) && page.constructor === data[0]!.constructor)
        ) {
          return concatenated(data as Array<TypedPage>)
        }
        const values: Array<unknown> = []
        for (const page of data) {
          for (let i = 0; i < page.length; i++) values.push(value === undefined ? page[i] : converted(page[i], value))
        }
        return values
      }
      const columns = fields.map((field): ArrayLike<unknown> => {
        const chunks = rowGroup.columns.flatMap((column) =>
          column.meta_data?.path_in_schema[0] === field.name ? [column.meta_data] : []
        )
        if (chunks.length === 0) throw new Error(`${path} has no column ${field.name} in row group ${group}`)
        const node = schema.children.find((child) => child.element.name === field.name)!
        if (node.children.length === 0) return leaf(chunks[0]!, field.name)
        // A nested column: its leaves assembled into arrays, maps and structs, as hyparquet's reader does.
        const leafValues = new Map<string, ArrayLike<unknown>>()
        for (const chunk of chunks) leafValues.set(chunk.path_in_schema.join("."), leaf(chunk, field.name))
        assembleNested(leafValues as Map<string, DecodedArray>, node, parsers)
        return leafValues.get(field.name)!
      })
      for (let start = 0; start < rowCount; start += batchRows) {
        const end = Math.min(rowCount, start + batchRows)
        const batch = new Array<Record<string, unknown>>(end - start)
        for (let row = start; row < end; row++) {
          const record: Record<string, unknown> = {}
          for (let i = 0; i < fields.length; i++) record[fields[i]!.name] = columns[i]![row] ?? null
          batch[row - start] = record
        }
        yield batch
      }
    }
  } finally {
    reader?.close()
    done?.(bytes)
  }
}

const codecs: Record<DataFormats.ParquetCodec, CompressionCodec> = {
  uncompressed: "UNCOMPRESSED",
  snappy: "SNAPPY",
  gzip: "GZIP",
  zstd: "ZSTD"
}

const schemaElement = (field: Field): SchemaElement => {
  const repetition_type = field.nullable ? "OPTIONAL" : "REQUIRED"
  const { name } = field
  switch (field.type) {
    case "string":
      return { name, repetition_type, type: "BYTE_ARRAY", converted_type: "UTF8", logical_type: { type: "STRING" } }
    case "boolean":
      return { name, repetition_type, type: "BOOLEAN" }
    case "int":
      return { name, repetition_type, type: "INT32" }
    case "long":
      return { name, repetition_type, type: "INT64" }
    case "float":
      return { name, repetition_type, type: "FLOAT" }
    case "double":
      return { name, repetition_type, type: "DOUBLE" }
    case "date":
      return { name, repetition_type, type: "INT32", converted_type: "DATE", logical_type: { type: "DATE" } }
    case "timestamp":
      return {
        name,
        repetition_type,
        type: "INT64",
        converted_type: "TIMESTAMP_MICROS",
        logical_type: { type: "TIMESTAMP", isAdjustedToUTC: true, unit: "MICROS" }
      }
    case "binary":
      return { name, repetition_type, type: "BYTE_ARRAY" }
    case "array":
    case "map":
    case "struct":
      throw new Error(`${name}: ${field.type} columns are read from Parquet but not written yet`)
    case "decimal": {
      const precision = field.precision ?? 10
      const scale = field.scale ?? 0
      const decimal = { converted_type: "DECIMAL" as const, precision, scale }
      // As Spark writes them: the smallest physical type that holds the precision.
      if (precision <= 9) return { name, repetition_type, type: "INT32", ...decimal }
      if (precision <= 18) return { name, repetition_type, type: "INT64", ...decimal }
      return { name, repetition_type, type: "FIXED_LEN_BYTE_ARRAY", type_length: decimalBytes(precision), ...decimal }
    }
  }
}

// The bytes a two's-complement integer of `precision` decimal digits needs.
const decimalBytes = (precision: number) => Math.ceil((Math.log2(10) * precision + 1) / 8)

// What `columnValue` gives for a value that does not fit its field.
const noFit = Symbol("noFit")
const int32 = 2 ** 31
const int64 = 2n ** 63n

// A record's value as the writer takes it for the field's column, or `noFit`. A string column takes any value as
// its text (a sample's mixed values are inferred as strings); a number column a bigint that it holds, a long one
// an integral number; a date or timestamp column a text or milliseconds it reads as one; a binary one text as
// its UTF-8 bytes.
const columnValue = (value: unknown, field: Field): unknown => {
  if (value === null || value === undefined) return field.nullable ? null : noFit
  switch (field.type) {
    case "string":
      return typeof value === "string" ? value : FieldValues.toText(value)
    case "boolean":
      return typeof value === "boolean" ? value : noFit
    case "int": {
      const n = typeof value === "bigint" ? Number(value) : value
      return typeof n === "number" && Number.isInteger(n) && n >= -int32 && n < int32 ? n : noFit
    }
    case "long": {
      const n = typeof value === "number" && Number.isInteger(value) ? BigInt(value) : value
      return typeof n === "bigint" && n >= -int64 && n < int64 ? n : noFit
    }
    case "float":
    case "double":
      return typeof value === "number" ? value : typeof value === "bigint" ? Number(value) : noFit
    case "decimal": {
      if (typeof value !== "string" && typeof value !== "number" && typeof value !== "bigint") return noFit
      return FieldValues.unscaledDecimal(String(value), field.precision ?? 10, field.scale ?? 0) ?? noFit
    }
    case "date":
    case "timestamp": {
      let date: unknown = value
      if (typeof value === "number") date = new Date(value)
      if (typeof value === "string") {
        try {
          date = FieldValues.fromText(field, value)
        } catch {
          return noFit
        }
      }
      return date instanceof Date && !Number.isNaN(date.getTime()) ? date : noFit
    }
    case "binary":
      return value instanceof Uint8Array ? value : typeof value === "string" ? new TextEncoder().encode(value) : noFit
    case "array":
    case "map":
    case "struct":
      return noFit
  }
}

/**
 * Writes records, objects of `fields`, as a Parquet file through `writer`: `rowGroupSize` records to a row group,
 * the pages compressed with `codec`. Returns how many records and bytes it wrote; throws `FieldMismatch` at the
 * first value that does not fit its field (`fieldsInferred`: the fields were inferred from a sample).
 *
 * @since 0.1.0
 */
export const write = (
  records: Iterable<unknown>,
  fields: DataFormats.Fields,
  options: {
    readonly codec: DataFormats.ParquetCodec
    readonly rowGroupSize: number
    readonly fieldsInferred?: boolean | undefined
  },
  writer: Writer
): { readonly records: number; readonly bytes: number } => {
  let position = 0
  const output = new ByteWriter()
  const flush = () => {
    if (output.index === 0) return
    writer.write(new Uint8Array(output.buffer, 0, output.index), position)
    position += output.index
    output.index = 0
  }
  const ensure = output.ensure.bind(output)
  output.ensure = (size: number) => {
    if (output.index > 1 << 20) flush()
    ensure(size)
  }
  output.finish = flush
  const parquet = new ParquetWriter({
    writer: output,
    schema: [{ name: "spark_schema", num_children: fields.length }, ...fields.map(schemaElement)],
    codec: codecs[options.codec],
    compressors: {
      GZIP: (bytes: Uint8Array) => Compression.compress(bytes, "gzip"),
      ZSTD: (bytes: Uint8Array) => Compression.compress(bytes, "zstd")
    },
    createdBy: "kindling"
  })
  let count = 0
  let batch: Array<Array<unknown>> = fields.map(() => [])
  const writeBatch = () => {
    if (batch[0]!.length === 0 && count > 0) return
    parquet.write({
      columnData: fields.map((field, i) => ({ name: field.name, data: batch[i]! })),
      rowGroupSize: options.rowGroupSize
    })
    batch = fields.map(() => [])
  }
  for (const record of records) {
    const values = record as Record<string, unknown>
    for (let i = 0; i < fields.length; i++) {
      const field = fields[i]!
      const value = columnValue(values[field.name], field)
      if (value === noFit) {
        throw new FieldValues.FieldMismatch(field, values[field.name], record, fields, options.fieldsInferred === true)
      }
      batch[i]!.push(value)
    }
    count++
    if (batch[0]!.length === options.rowGroupSize) writeBatch()
  }
  writeBatch()
  parquet.finish()
  return { records: count, bytes: position }
}
