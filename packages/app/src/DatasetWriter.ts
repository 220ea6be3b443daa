/**
 * Writing a dataset as files (Spark's `DataFrameWriter`): CSV, JSON lines, Parquet or text, one part file per
 * partition in a directory finished with `_SUCCESS`. Each part is written by its task to a temporary file of
 * the attempt's own and renamed into place whole, so that a failed, killed or speculative attempt never leaves
 * a partial or second copy of a part where readers look.
 *
 * @since 0.1.0
 */
import type { DataFormats } from "@kindling/protocol"
import * as Effect from "effect/Effect"
import { InvalidArgument, type OutputDirectoryExists, type OutputNotWritable } from "./AppErrors.js"
import type { Dataset, DatasetError } from "./Dataset.js"
import * as Actions from "./internal/actions.js"
import * as FieldDefinitions from "./internal/fieldDefinitions.js"
import * as FileOutput from "./internal/fileOutput.js"
import * as Options from "./internal/options.js"

/**
 * What to do when the output directory exists (Spark's `SaveMode`): fail with `OutputDirectoryExists`
 * (`error`, the default), replace it (`overwrite`), add this write's parts beside those there (`append`: every
 * write names its parts apart), or write nothing (`ignore`).
 *
 * @since 0.1.0
 */
export type SaveMode = FileOutput.SaveMode

/**
 * @since 0.1.0
 * @category options
 */
export interface WriteOptions {
  readonly mode?: SaveMode | undefined
}

/**
 * @since 0.1.0
 * @category options
 */
export interface TextWriteOptions extends WriteOptions {
  /** Compress each part (`.gz`, `.zst`). */
  readonly compression?: "gzip" | "zstd" | "none" | undefined
}

/**
 * The fields written: given (DDL text, `"id LONG, name STRING"`, or a list), else the dataset's own (read from
 * a typed source), else inferred from a sample of up to 1,000 of its records (objects, a property per field). A
 * later record that does not fit them fails the write with `FieldMismatch`, naming the field and giving the fields
 * that would hold it.
 *
 * @since 0.1.0
 * @category options
 */
export interface FieldsOption {
  readonly fields?: FieldDefinitions.FieldsInput | undefined
}

/**
 * Spark's CSV writer options, with its defaults: no header, `,`, `"`, nulls as empty fields.
 *
 * @since 0.1.0
 * @category options
 */
export interface CsvWriteOptions extends TextWriteOptions, FieldsOption {
  readonly header?: boolean | undefined
  readonly sep?: string | undefined
  readonly quote?: string | undefined
  readonly nullValue?: string | undefined
}

/**
 * @since 0.1.0
 * @category options
 */
export interface ParquetWriteOptions extends WriteOptions, FieldsOption {
  /** The codec of the column chunks' pages (Spark's default, `snappy`). */
  readonly compression?: DataFormats.ParquetCodec | "none" | undefined
  /** Records to a row group: 100,000 unless given. */
  readonly rowGroupSize?: number | undefined
}

/**
 * The formats a dataset is written in; each is an action that runs one job.
 *
 * @since 0.1.0
 * @category models
 */
export interface DatasetWriter {
  // The errors are spelled out rather than named by `WriteError`: an app's inferred types then name them from
  // the package's root, where they are exported.
  /** Each record, an object, as a CSV line of its fields (`part-NNNNN-<write>.csv`). */
  readonly csv: (
    dir: string,
    options?: CsvWriteOptions
  ) => Effect.Effect<void, DatasetError | OutputDirectoryExists | OutputNotWritable | InvalidArgument>
  /**
   * Each record as a JSON line (`.json`): bigints as numbers, dates as ISO 8601 text, bytes as base64; with
   * fields (given or the dataset's), a `date` as `yyyy-MM-dd` and a `decimal` as a number, as Spark writes them.
   */
  readonly json: (
    dir: string,
    options?: TextWriteOptions & FieldsOption
  ) => Effect.Effect<void, DatasetError | OutputDirectoryExists | OutputNotWritable | InvalidArgument>
  /** The records, objects, as a Parquet file per partition (`.parquet`, `snappy` pages unless told). */
  readonly parquet: (
    dir: string,
    options?: ParquetWriteOptions
  ) => Effect.Effect<void, DatasetError | OutputDirectoryExists | OutputNotWritable | InvalidArgument>
  /** Each record as a line, a string as itself and anything else as JSON (`.txt`). */
  readonly text: (
    dir: string,
    options?: TextWriteOptions
  ) => Effect.Effect<void, DatasetError | OutputDirectoryExists | OutputNotWritable | InvalidArgument>
}

/**
 * @since 0.1.0
 * @category errors
 */
export type WriteError = DatasetError | OutputDirectoryExists | OutputNotWritable | InvalidArgument

const sampleSize = 1000

// Every option each writer has: any other is refused, naming the nearest.
const csvOptions = Options.names<CsvWriteOptions>()(
  "mode",
  "compression",
  "fields",
  "header",
  "sep",
  "quote",
  "nullValue"
)
const jsonOptions = Options.names<TextWriteOptions & FieldsOption>()("mode", "compression", "fields")
const parquetOptions = Options.names<ParquetWriteOptions>()("mode", "compression", "fields", "rowGroupSize")
const textOptions = Options.names<TextWriteOptions>()("mode", "compression")

const checked = <A>(operation: string, make: () => A): Effect.Effect<A, InvalidArgument> =>
  Effect.try({
    try: make,
    catch: (error) =>
      error instanceof InvalidArgument ? error : new InvalidArgument({ reason: `${operation}: ${String(error)}` })
  })

const oneCharacter = (value: string | undefined, fallback: string, name: string, operation: string) => {
  const chosen = value ?? fallback
  if (chosen.length !== 1) {
    throw new InvalidArgument({ reason: `${operation}: ${name} must be one character, got ${JSON.stringify(chosen)}` })
  }
  return chosen
}

const textCompression = (compression: "gzip" | "zstd" | "none" | undefined, operation: string) => {
  if (compression === undefined || compression === "none") return undefined
  if (compression === "gzip" || compression === "zstd") return compression
  throw new InvalidArgument({
    reason: `${operation}: compression must be gzip, zstd or none, got ${String(compression)}`
  })
}

const saveMode = (mode: SaveMode | undefined, operation: string): SaveMode => {
  const chosen = mode ?? "error"
  if (!["error", "overwrite", "append", "ignore"].includes(chosen)) {
    throw new InvalidArgument({
      reason: `${operation}: mode must be error, overwrite, append or ignore, got ${String(chosen)}`
    })
  }
  return chosen
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  dataset: Dataset<unknown>,
  action: <X, E>(name: string, effect: Effect.Effect<X, E>) => Effect.Effect<X, E | DatasetError>
): DatasetWriter => {
  // The fields to write: given, known, or inferred from a sample (which later records may not fit).
  const fieldsFor = (
    option: FieldDefinitions.FieldsInput | undefined,
    operation: string
  ): Effect.Effect<
    { readonly fields: DataFormats.Fields; readonly inferred: boolean },
    DatasetError | InvalidArgument
  > =>
    option !== undefined
      ? checked(operation, () => ({ fields: FieldDefinitions.parse(option, operation), inferred: false }))
      : dataset.fields !== undefined
      ? Effect.succeed({ fields: dataset.fields, inferred: false })
      : Effect.flatMap(
        Actions.take(dataset, sampleSize),
        (sample) =>
          checked(operation, () => ({ fields: FieldDefinitions.inferFromValues(sample, operation), inferred: true }))
      )
  const save = (
    operation: string,
    dir: string,
    options: WriteOptions,
    known: ReadonlyArray<string>,
    output: (checkedMode: SaveMode) => Effect.Effect<Omit<FileOutput.Output, "mode">, WriteError>
  ) =>
    action(
      operation,
      Effect.flatMap(
        checked(operation, () => {
          Options.check(operation, options, known)
          return saveMode(options.mode, operation)
        }),
        (checkedMode) =>
          Effect.flatMap(
            output(checkedMode),
            (chosen) => FileOutput.save(dataset, dir, { ...chosen, mode: checkedMode })
          )
      )
    )
  return {
    csv: (dir, options = {}) =>
      save("write.csv", dir, options, csvOptions, () =>
        Effect.gen(function*() {
          const operation = "write.csv"
          const dialect = yield* checked(operation, (): DataFormats.CsvDialect => {
            const quote = oneCharacter(options.quote, "\"", "quote", operation)
            return {
              header: options.header ?? false,
              sep: oneCharacter(options.sep, ",", "sep", operation),
              quote,
              escape: quote,
              nullValue: options.nullValue ?? "",
              comment: ""
            }
          })
          const compression = yield* checked(operation, () => textCompression(options.compression, operation))
          const { fields } = yield* fieldsFor(options.fields, operation)
          return { format: { _tag: "Csv" as const, dialect, fields }, compression, extension: ".csv" }
        })),
    json: (dir, options = {}) =>
      save("write.json", dir, options, jsonOptions, () =>
        checked("write.json", () => {
          const fields = options.fields === undefined
            ? dataset.fields
            : FieldDefinitions.parse(options.fields, "write.json")
          return {
            format: fields === undefined ? { _tag: "JsonLines" as const } : { _tag: "JsonLines" as const, fields },
            compression: textCompression(options.compression, "write.json"),
            extension: ".json"
          }
        })),
    text: (dir, options = {}) =>
      save(
        "write.text",
        dir,
        options,
        textOptions,
        () =>
          Effect.map(
            checked("write.text", () => textCompression(options.compression, "write.text")),
            (compression) => ({
              format: { _tag: "Text" as const },
              compression,
              extension: ".txt"
            })
          )
      ),
    parquet: (dir, options = {}) =>
      save("write.parquet", dir, options, parquetOptions, () =>
        Effect.gen(function*() {
          const operation = "write.parquet"
          const codec = yield* checked(operation, (): DataFormats.ParquetCodec => {
            const chosen = options.compression ?? "snappy"
            if (chosen === "none") return "uncompressed"
            if (!["uncompressed", "snappy", "gzip", "zstd"].includes(chosen)) {
              throw new InvalidArgument({
                reason: `${operation}: compression must be snappy, gzip, zstd or none, got ${String(chosen)}`
              })
            }
            return chosen
          })
          const rowGroupSize = options.rowGroupSize ?? 100_000
          if (!Number.isSafeInteger(rowGroupSize) || rowGroupSize < 1) {
            return yield* new InvalidArgument({
              reason: `${operation}: rowGroupSize must be a positive integer, got ${rowGroupSize}`
            })
          }
          const { fields, inferred } = yield* fieldsFor(options.fields, operation)
          const nested = fields.filter((field) => ["array", "map", "struct"].includes(field.type))
          if (nested.length > 0) {
            return yield* new InvalidArgument({
              reason: `${operation}: nested columns (${nested.map((field) => field.name).join(", ")}) are read from ` +
                `Parquet but not written yet: map them to flat fields, or write JSON lines`
            })
          }
          return {
            format: {
              _tag: "Parquet" as const,
              fields,
              codec,
              rowGroupSize,
              ...(inferred ? { fieldsInferred: true } : {})
            },
            extension: ".parquet"
          }
        }))
  }
}
