/**
 * The file formats datasets read and write besides plain text — CSV, JSON lines and Parquet — as tasks carry
 * them: the fields of a record (Spark's `StructType`, by Spark's type names), each format's options, and the
 * codecs a file may be compressed with.
 *
 * A record read with fields is a plain object with one property per field, its value by the field's type:
 *
 * | type        | value                                                                          |
 * |-------------|--------------------------------------------------------------------------------|
 * | `string`    | a string                                                                       |
 * | `boolean`   | a boolean                                                                      |
 * | `int`, `float`, `double` | a number                                                          |
 * | `long`      | a bigint: 64 bits keep every digit                                             |
 * | `decimal`   | a string of its digits, `-12.50` — exact at any precision (`Schema.BigDecimal` decodes it) |
 * | `date`      | a `Date` at midnight UTC of that day                                           |
 * | `timestamp` | a `Date` (milliseconds: finer parts of a Parquet timestamp are cut)             |
 * | `binary`    | a `Uint8Array`                                                                 |
 * | `array`     | an array of its elements' values                                               |
 * | `map`       | an object, a property per key (keys as text)                                   |
 * | `struct`    | an object, a property per field                                                |
 *
 * and `null` where the value is missing. The nested types (`array`, `map`, `struct`) are read from Parquet,
 * their elements' types as the file has them, and written to CSV and JSON lines as JSON.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * A field's type, by Spark's names (`long` is Spark's `LongType`, Parquet's `INT64`).
 *
 * @since 0.1.0
 * @category fields
 */
export const FieldType = Schema.Literal(
  "string",
  "boolean",
  "int",
  "long",
  "float",
  "double",
  "decimal",
  "date",
  "timestamp",
  "binary",
  "array",
  "map",
  "struct"
).annotations({ identifier: "FieldType" })
/**
 * @since 0.1.0
 * @category fields
 */
export type FieldType = typeof FieldType.Type

/**
 * One field of a record.
 *
 * @since 0.1.0
 * @category fields
 */
export const Field = Schema.Struct({
  name: Schema.String,
  type: FieldType,
  nullable: Schema.Boolean,
  /** Of a decimal: digits in all, and digits after the point (Spark's default decimal is (10, 0)). */
  precision: Schema.optionalWith(Schema.Int.pipe(Schema.between(1, 38)), { exact: true }),
  scale: Schema.optionalWith(Schema.Int.pipe(Schema.between(0, 38)), { exact: true })
}).annotations({ identifier: "Field", description: "A field of a record: its name, type and whether it may be null" })
/**
 * @since 0.1.0
 * @category fields
 */
export type Field = typeof Field.Type

/**
 * The fields of a record, in order.
 *
 * @since 0.1.0
 * @category fields
 */
export const Fields = Schema.Array(Field).annotations({ identifier: "Fields" })
/**
 * @since 0.1.0
 * @category fields
 */
export type Fields = typeof Fields.Type

/**
 * What a reader does with a record it cannot parse (Spark's `mode`): `PERMISSIVE` keeps it, the values it could
 * not read null and its text in the corrupt-record column when the fields have one; `DROPMALFORMED` leaves it
 * out; `FAILFAST` fails the task, naming the file, line and field.
 *
 * @since 0.1.0
 * @category options
 */
export const ParseMode = Schema.Literal("PERMISSIVE", "DROPMALFORMED", "FAILFAST").annotations({
  identifier: "ParseMode"
})
/**
 * @since 0.1.0
 * @category options
 */
export type ParseMode = typeof ParseMode.Type

/**
 * The codecs a text, CSV or JSON lines file may be compressed with, told by its extension (`.gz`, `.zst`). A
 * compressed file is one split: it cannot be cut.
 *
 * @since 0.1.0
 * @category options
 */
export const Compression = Schema.Literal("gzip", "zstd").annotations({ identifier: "Compression" })
/**
 * @since 0.1.0
 * @category options
 */
export type Compression = typeof Compression.Type

/**
 * How CSV is cut into fields, read and written (Spark's option names and defaults, but for `escape`: a quote
 * inside a quoted value is written doubled, `""`, as RFC 4180 and most tools have it, and read either way).
 *
 * @since 0.1.0
 * @category options
 */
export const CsvDialect = Schema.Struct({
  /** The first line of each file names the fields (read), or is written so (write). */
  header: Schema.Boolean,
  sep: Schema.String.pipe(Schema.length(1)),
  quote: Schema.String.pipe(Schema.length(1)),
  /** Escapes a quote inside a quoted value, besides a doubled quote; the quote itself when the same. */
  escape: Schema.String.pipe(Schema.length(1)),
  /** The text that stands for a null value. */
  nullValue: Schema.String,
  /** Lines that start with it are skipped (none when empty). */
  comment: Schema.String.pipe(Schema.maxLength(1))
}).annotations({ identifier: "CsvDialect" })
/**
 * @since 0.1.0
 * @category options
 */
export type CsvDialect = typeof CsvDialect.Type

/**
 * A source's reading of records: how each format's text or columns become records of `fields`.
 *
 * - `Csv`: the lines of the split as CSV records; the split starting a file skips its header line when the
 *   dialect has one.
 * - `JsonLines`: one JSON value per line; with `fields`, objects whose properties are converted to the fields'
 *   types (others left out), without, the values as they parse.
 *
 * `corruptRecordField`: the field that keeps the text of a record `PERMISSIVE` could not parse, if any.
 *
 * @since 0.1.0
 * @category sources
 */
export const LineFormat = Schema.Union(
  Schema.TaggedStruct("Csv", {
    dialect: CsvDialect,
    fields: Fields,
    mode: ParseMode,
    corruptRecordField: Schema.optionalWith(Schema.String, { exact: true }),
    /** The fields a record keeps, by name (all of them when absent): only their values are converted. */
    columns: Schema.optionalWith(Schema.Array(Schema.String), { exact: true })
  }),
  Schema.TaggedStruct("JsonLines", {
    fields: Schema.optionalWith(Fields, { exact: true }),
    mode: ParseMode,
    corruptRecordField: Schema.optionalWith(Schema.String, { exact: true })
  })
).annotations({ identifier: "LineFormat", description: "How the lines of a split become records" })
/**
 * @since 0.1.0
 * @category sources
 */
export type LineFormat = typeof LineFormat.Type

/**
 * The codec of a Parquet file's column chunks, written (read: whatever the file has of these, and LZ4, Brotli).
 *
 * @since 0.1.0
 * @category options
 */
export const ParquetCodec = Schema.Literal("uncompressed", "snappy", "gzip", "zstd").annotations({
  identifier: "ParquetCodec"
})
/**
 * @since 0.1.0
 * @category options
 */
export type ParquetCodec = typeof ParquetCodec.Type

/**
 * How a task writes its partition's records as a file.
 *
 * - `Text`: each record on a line (a string as itself, anything else as JSON).
 * - `Csv`: each record, an object of `fields`, as a CSV line; a header line first when the dialect says so.
 * - `JsonLines`: each record as JSON on a line (bigints as numbers, dates as ISO-8601 text, bytes as base64); with
 *   `fields`, a `date` field's value as `yyyy-MM-dd` and a `decimal`'s as a number, as Spark writes them.
 * - `Parquet`: the records, objects of `fields`, as one Parquet file, in row groups of `rowGroupSize` rows; a value
 *   that does not fit its field fails the task, naming the field, the record and the fields that would hold it.
 *
 * @since 0.1.0
 * @category outputs
 */
export const OutputFormat = Schema.Union(
  Schema.TaggedStruct("Text", {}),
  Schema.TaggedStruct("Csv", { dialect: CsvDialect, fields: Fields }),
  Schema.TaggedStruct("JsonLines", { fields: Schema.optionalWith(Fields, { exact: true }) }),
  Schema.TaggedStruct("Parquet", {
    fields: Fields,
    codec: ParquetCodec,
    rowGroupSize: Schema.Int.pipe(Schema.positive()),
    /** The fields were inferred from a sample of the records: a value that does not fit says so. */
    fieldsInferred: Schema.optionalWith(Schema.Boolean, { exact: true })
  })
).annotations({ identifier: "OutputFormat", description: "How a task writes its records as a file" })
/**
 * @since 0.1.0
 * @category outputs
 */
export type OutputFormat = typeof OutputFormat.Type
