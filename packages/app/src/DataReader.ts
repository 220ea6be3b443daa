/**
 * Reading datasets of records from files (Spark's `DataFrameReader`): CSV, JSON lines and Parquet, from a file,
 * a directory, several paths separated by commas or glob patterns, as `textFile` finds them; text, CSV and JSON
 * lines compressed with gzip (`.gz`) or Zstandard (`.zst`) are decompressed, a file to a partition. A reader is
 * an Effect, as Spark's is eager: it looks at the files now (a CSV's header, a Parquet file's footer, and with
 * `inferSchema` every CSV value, in a job) and its dataset's `fields` say what its records hold.
 *
 * Records are objects with a property per field, their values by the fields' types (`DataFormats` lists them:
 * `long` as bigint, `decimal` as exact text, `date` and `timestamp` as `Date`, null for a missing value). No field
 * may be named `__proto__`, which a record cannot hold (`InvalidArgument`), and a JSON value with such a key is
 * malformed.
 *
 * @since 0.1.0
 */
import { Csv, type Disk, FieldValues, Parquet, TextSplits } from "@kindling/data"
import type { DataFormats, TaskPlan } from "@kindling/protocol"
import * as Effect from "effect/Effect"
import type * as Schema from "effect/Schema"
import { InputNotReadable, InvalidArgument } from "./AppErrors.js"
import { Dataset, type DatasetError, type Runtime } from "./Dataset.js"
import * as Actions from "./internal/actions.js"
import * as ByteSplits from "./internal/byteSplits.js"
import * as FieldDefinitions from "./internal/fieldDefinitions.js"
import * as InputPaths from "./internal/inputPaths.js"
import * as Options from "./internal/options.js"
import * as Lineage from "./Lineage.js"
import * as RecordSchemas from "./RecordSchemas.js"

/**
 * A record read from a file: a property per field.
 *
 * @since 0.1.0
 * @category models
 */
export type Row = Record<string, unknown>

/**
 * What a reader does with a record it cannot read (Spark's `mode`, `PERMISSIVE` by default): keep it, its bad
 * values null and its text in the `columnNameOfCorruptRecord` field when the fields have one; leave it out; or
 * fail the job with `MalformedRecord`, naming the file, line and field.
 *
 * @since 0.1.0
 * @category options
 */
export type ParseMode = DataFormats.ParseMode

/**
 * @since 0.1.0
 * @category options
 */
export interface LineReadOptions<A = Row> extends SchemaOption<A> {
  /** The fields to read, as DDL text (`"id LONG, name STRING"`) or a list. */
  readonly fields?: FieldDefinitions.FieldsInput | undefined
  readonly mode?: ParseMode | undefined
  /** The string field that keeps the text of a malformed record in `PERMISSIVE` mode (`_corrupt_record`). */
  readonly columnNameOfCorruptRecord?: string | undefined
  /** At least this many partitions, as `textFile` cuts files (2, or fewer threads, unless given). */
  readonly minPartitions?: number | undefined
}

/**
 * An Effect Schema that types the records read: executors decode each record by it as they read it (so the
 * schema must be registered, `App.registerSchema("Sale", Sale)`, at the top level of the app module). A record
 * it rejects is dropped with `mode: "DROPMALFORMED"` and fails the job otherwise — `MalformedRecord: Record in
 * /data/sales.csv at line 12 does not fit the schema: …`, the schema's message naming the field.
 *
 * @since 0.1.0
 * @category options
 */
export interface SchemaOption<A> {
  readonly schema?: Schema.Schema<A, any, never> | undefined
}

/**
 * Spark's CSV reader options, with its defaults — but for `escape`, which is the quote: RFC 4180's doubled quote
 * is read either way, and `\"` also when `escape` is `\\`.
 *
 * @since 0.1.0
 * @category options
 */
export interface CsvReadOptions<A = Row> extends LineReadOptions<A> {
  /** The first line of each file names the fields (`_c0`, `_c1`, … otherwise). */
  readonly header?: boolean | undefined
  readonly sep?: string | undefined
  readonly quote?: string | undefined
  readonly escape?: string | undefined
  /** The text of a null value (the empty string). */
  readonly nullValue?: string | undefined
  /** Lines starting with this character are skipped. */
  readonly comment?: string | undefined
  /** Infer each field's type from every value, in a job over the files (strings otherwise). */
  readonly inferSchema?: boolean | undefined
  /** Records may hold line breaks inside quoted values: each file is read whole, as one partition. */
  readonly multiLine?: boolean | undefined
  /**
   * The fields records keep, by name (all unless given): only their values are converted, as Spark's CSV reader
   * prunes the columns a query does not use.
   */
  readonly columns?: ReadonlyArray<string> | undefined
}

/**
 * Spark's JSON reader options that Kindling has.
 *
 * @since 0.1.0
 * @category options
 */
export interface JsonReadOptions<A = unknown> extends LineReadOptions<A> {
  /**
   * Each file is JSON values however they are laid out, read whole as one partition: one array of records (its
   * elements each a record), one record, or records one after another, pretty-printed. Without it, a line is a
   * record (JSON lines).
   */
  readonly multiLine?: boolean | undefined
}

/**
 * @since 0.1.0
 * @category options
 */
export interface ParquetReadOptions<A = Row> extends SchemaOption<A> {
  /** The columns to read (all of them unless given): only their chunks are read from the files. */
  readonly columns?: ReadonlyArray<string> | undefined
  /** With a schema: drop the records it rejects (`DROPMALFORMED`) or fail the job (`FAILFAST`, the default). */
  readonly mode?: "DROPMALFORMED" | "FAILFAST" | undefined
}

/**
 * @since 0.1.0
 * @category errors
 */
export type ReadError = InputNotReadable | InvalidArgument | DatasetError

/**
 * @since 0.1.0
 * @category models
 */
export interface DataReader {
  /** CSV records: a record per line (or per quoted multi-line record with `multiLine`). */
  readonly csv: <A = Row>(
    path: string,
    options?: CsvReadOptions<A>
  ) => Effect.Effect<Dataset<A>, InputNotReadable | InvalidArgument | DatasetError>
  /**
   * JSON lines (or with `multiLine`, files of JSON values: an array of records, say): with `fields`, records of
   * them; without, each value as it parses.
   */
  readonly json: <A = unknown>(
    path: string,
    options?: JsonReadOptions<A>
  ) => Effect.Effect<Dataset<A>, InputNotReadable | InvalidArgument | DatasetError>
  /** Parquet records: a partition reads whole row groups, about 128 MiB of them, as Spark packs them. */
  readonly parquet: <A = Row>(
    path: string,
    options?: ParquetReadOptions<A>
  ) => Effect.Effect<Dataset<A>, InputNotReadable | InvalidArgument | DatasetError>
}

// Every option each reader has: any other is refused, naming the nearest.
const csvOptions = Options.names<CsvReadOptions>()(
  "fields",
  "mode",
  "columnNameOfCorruptRecord",
  "minPartitions",
  "schema",
  "header",
  "sep",
  "quote",
  "escape",
  "nullValue",
  "comment",
  "inferSchema",
  "multiLine",
  "columns"
)
const jsonOptions = Options.names<JsonReadOptions>()(
  "fields",
  "mode",
  "columnNameOfCorruptRecord",
  "minPartitions",
  "schema",
  "multiLine"
)
const parquetOptions = Options.names<ParquetReadOptions>()("columns", "mode", "schema")

const decoderOf = (schema: Schema.Schema<any, any, never> | undefined, operation: string) =>
  schema === undefined ? undefined : RecordSchemas.decoder(schema, operation)

const notReadable = (path: string) => (error: unknown) =>
  new InputNotReadable({ path, reason: error instanceof Error ? error.message : String(error) })

const oneCharacter = (value: string | undefined, fallback: string, name: string, empty = false) => {
  const chosen = value ?? fallback
  if (chosen.length !== 1 && !(empty && chosen === "")) {
    throw new InvalidArgument({ reason: `read.csv: ${name} must be one character, got ${JSON.stringify(chosen)}` })
  }
  return chosen
}

const checkMode = (mode: ParseMode | undefined, operation: string): ParseMode => {
  const chosen = mode ?? "PERMISSIVE"
  if (chosen !== "PERMISSIVE" && chosen !== "DROPMALFORMED" && chosen !== "FAILFAST") {
    throw new InvalidArgument({
      reason: `${operation}: mode must be PERMISSIVE, DROPMALFORMED or FAILFAST, got ${String(chosen)}`
    })
  }
  return chosen
}

// The names a CSV's first record gives its fields: its values under a header (an empty one `_c<i>`, a repeated
// one suffixed with its position, as Spark does), `_c0`, `_c1`, … otherwise.
const columnNames = (tokens: ReadonlyArray<string | null>, header: boolean): Array<string> => {
  const names = tokens.map((token, i) => header && token !== null && token !== "" ? token : `_c${i}`)
  const counts = new Map<string, number>()
  for (const name of names) counts.set(name, (counts.get(name) ?? 0) + 1)
  return names.map((name, i) => (counts.get(name)! > 1 ? `${name}${i}` : name))
}

// The first record of the first file (its header when it has one), as fields, and that file.
const firstRecord = (
  files: Disk.Files,
  splits: ReadonlyArray<ByteSplits.ByteSplit>,
  dialect: DataFormats.CsvDialect
): { readonly path: string; readonly tokens: Array<string | null> } | undefined => {
  const first = splits.find((split) => split.start === 0)
  if (first === undefined) return undefined
  const lines = first.compression === undefined
    ? TextSplits.lines(files, first.path, 0, first.length)
    : TextSplits.wholeFileLines(files, first.path)
  let text = ""
  for (const line of lines) {
    if (text === "" && (line === "" || (dialect.comment !== "" && line.startsWith(dialect.comment)))) continue
    text = text === "" ? line : `${text}\n${line}`
    const tokens = Csv.split(text, dialect)
    if (tokens !== undefined) return { path: first.path, tokens }
  }
  return undefined
}

// Row groups packed into splits as Spark packs file blocks: up to `maxPartitionBytes` (128 MiB) and no larger
// than the data over the cores, but at least the cost of opening a file (4 MiB), row groups of a file in order.
const rowGroupSplits = (
  footers: ReadonlyArray<{ readonly path: string; readonly sizes: ReadonlyArray<number> }>,
  parallelism: number
): Array<{ readonly path: string; readonly rowGroups: Array<number> }> => {
  const total = footers.reduce((sum, footer) => sum + footer.sizes.reduce((a, b) => a + b, 0), 0)
  const target = Math.min(128 * 1024 * 1024, Math.max(4 * 1024 * 1024, Math.ceil(total / parallelism)))
  const splits: Array<{ path: string; rowGroups: Array<number> }> = []
  for (const { path, sizes } of footers) {
    let size = Infinity
    sizes.forEach((bytes, group) => {
      if (size + bytes > target) {
        splits.push({ path, rowGroups: [] })
        size = 0
      }
      splits.at(-1)!.rowGroups.push(group)
      size += bytes
    })
  }
  return splits
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const make = (runtime: Runtime, defaultParallelism: () => number): DataReader => {
  const { files } = runtime
  const found = (path: string) => Effect.try({ try: () => InputPaths.expand(files, path), catch: notReadable(path) })
  const checked = <A>(operation: string, make: () => A) =>
    Effect.try({
      try: make,
      catch: (error) =>
        error instanceof InvalidArgument ? error : new InvalidArgument({ reason: `${operation}: ${String(error)}` })
    })
  const minPartitions = (given: number | undefined, operation: string) => {
    const chosen = given ?? Math.min(defaultParallelism(), 2)
    if (!Number.isSafeInteger(chosen) || chosen < 1) {
      throw new InvalidArgument({ reason: `${operation}: minPartitions must be a positive integer, got ${chosen}` })
    }
    return chosen
  }
  const dataset = <A>(
    plans: ReadonlyArray<typeof TaskPlan.PlanNode.Encoded>,
    kind: string,
    operation: string,
    fields: DataFormats.Fields | undefined
  ) => Dataset.of<A>(runtime, Effect.succeed(plans), kind, operation).withFields(fields)
  const corruptField = (fields: DataFormats.Fields | undefined, name: string | undefined) => {
    const chosen = name ?? "_corrupt_record"
    return fields?.some((field) => field.name === chosen && field.type === "string") === true ? chosen : undefined
  }

  return {
    csv: <A = Row>(path: string, options: CsvReadOptions<A> = {}) =>
      Effect.gen(function*() {
        const operation = "read.csv"
        const { dialect, fieldsGiven, mode, partitions } = yield* checked(operation, () => {
          Options.check(operation, options, csvOptions)
          const quote = oneCharacter(options.quote, "\"", "quote")
          const dialect: DataFormats.CsvDialect = {
            header: options.header ?? false,
            sep: oneCharacter(options.sep, ",", "sep"),
            quote,
            escape: oneCharacter(options.escape, quote, "escape"),
            nullValue: options.nullValue ?? "",
            comment: oneCharacter(options.comment, "", "comment", true)
          }
          return {
            dialect,
            fieldsGiven: options.fields === undefined ? undefined : FieldDefinitions.parse(options.fields, operation),
            mode: checkMode(options.mode, operation),
            partitions: minPartitions(options.minPartitions, operation)
          }
        })
        const multiLine = options.multiLine === true
        const splits = ByteSplits.cut(yield* found(path), partitions, { whole: multiLine })
        const decode = yield* checked(operation, () => decoderOf(options.schema, operation))
        const plansOf = (format: DataFormats.LineFormat, typed = true) =>
          splits.map((split): typeof TaskPlan.PlanNode.Encoded => ({
            _tag: "LineRecordSplit",
            ...split,
            ...(multiLine ? { multiLine } : {}),
            format,
            ...(typed && decode !== undefined ? { decode } : {})
          }))
        let fields = fieldsGiven
        if (fields === undefined) {
          const first = yield* Effect.try({ try: () => firstRecord(files, splits, dialect), catch: notReadable(path) })
          const names = columnNames(first?.tokens ?? [], dialect.header)
          if (first !== undefined && dialect.header) {
            yield* checked(operation, () =>
              FieldDefinitions.refuseUnholdable(
                names,
                operation,
                `the header of ${first.path} names`,
                "name the fields with fields, or read the header as a record with header: false"
              ))
          }
          const strings = names.map((name): DataFormats.Field => ({ name, type: "string", nullable: true }))
          fields = strings
          if (options.inferSchema === true && strings.length > 0) {
            // Spark's inference: a job over every value, each field the narrowest type that holds its values.
            const inferred = yield* Actions.runJob(
              runtime,
              Lineage.fromPlans(plansOf({ _tag: "Csv", dialect, fields: strings, mode: "PERMISSIVE" }, false)),
              () => ({ _tag: "InferFields" }),
              operation
            )
            const types = new Map<string, DataFormats.Field>()
            for (const partial of inferred as Array<Array<[string, DataFormats.Field]>>) {
              for (const [name, field] of partial) {
                const known = types.get(name)
                types.set(name, known === undefined ? field : { ...FieldValues.widen(known, field), name })
              }
            }
            fields = strings.map((field) => types.get(field.name) ?? field)
          }
        }
        const corruptRecordField = corruptField(fields, options.columnNameOfCorruptRecord)
        const all = fields
        const columns = options.columns
        const kept = yield* checked(operation, () =>
          columns === undefined ? all : columns.map((name) => {
            const field = all.find((candidate) => candidate.name === name)
            if (field === undefined) {
              throw new InvalidArgument({
                reason: `${operation}: no field ${name} to keep (the fields are ${all.map((f) => f.name).join(", ")})`
              })
            }
            return field
          }))
        const format: DataFormats.LineFormat = {
          _tag: "Csv",
          dialect,
          fields,
          mode,
          ...(corruptRecordField === undefined ? {} : { corruptRecordField }),
          ...(columns === undefined ? {} : { columns })
        }
        // A schema's records are its own: their fields are what it makes of them, which a writer infers.
        return dataset<A>(plansOf(format), "CsvDataset", operation, decode === undefined ? kept : undefined)
      }),
    json: <A = unknown>(path: string, options: JsonReadOptions<A> = {}) =>
      Effect.gen(function*() {
        const operation = "read.json"
        const { decode, fields, mode, partitions } = yield* checked(operation, () => {
          Options.check(operation, options, jsonOptions)
          return {
            fields: options.fields === undefined ? undefined : FieldDefinitions.parse(options.fields, operation),
            mode: checkMode(options.mode, operation),
            partitions: minPartitions(options.minPartitions, operation),
            decode: decoderOf(options.schema, operation)
          }
        })
        const corruptRecordField = fields === undefined
          ? options.columnNameOfCorruptRecord ?? "_corrupt_record"
          : corruptField(fields, options.columnNameOfCorruptRecord)
        if (fields === undefined && corruptRecordField !== undefined) {
          yield* checked(operation, () =>
            FieldDefinitions.refuseUnholdable(
              [corruptRecordField],
              operation,
              "columnNameOfCorruptRecord names",
              "give it another name"
            ))
        }
        const format: DataFormats.LineFormat = {
          _tag: "JsonLines",
          mode,
          ...(fields === undefined ? {} : { fields }),
          ...(corruptRecordField === undefined ? {} : { corruptRecordField })
        }
        const multiLine = options.multiLine === true
        const splits = ByteSplits.cut(yield* found(path), partitions, { whole: multiLine })
        return dataset<A>(
          splits.map((split) => ({
            _tag: "LineRecordSplit" as const,
            ...split,
            ...(multiLine ? { multiLine } : {}),
            format,
            ...(decode === undefined ? {} : { decode })
          })),
          "JsonDataset",
          operation,
          decode === undefined ? fields : undefined
        )
      }),
    parquet: <A = Row>(path: string, options: ParquetReadOptions<A> = {}) =>
      Effect.gen(function*() {
        const operation = "read.parquet"
        const decode = yield* checked(operation, () => {
          Options.check(operation, options, parquetOptions)
          return decoderOf(options.schema, operation)
        })
        const inputs = yield* found(path)
        const footers = yield* Effect.try({
          try: () =>
            inputs.map((input) => {
              const metadata = Parquet.footer(files, input.path)
              return {
                path: input.path,
                metadata,
                sizes: metadata.row_groups.map((group) => Number(group.total_byte_size))
              }
            }),
          catch: notReadable(path)
        })
        const first = footers[0]
        if (first === undefined) return dataset<A>([], "ParquetDataset", operation, [])
        const names = Parquet.columnNames(first.metadata)
        const missing = options.columns?.find((name) => !names.includes(name))
        if (missing !== undefined) {
          return yield* new InvalidArgument({
            reason: `${operation}: ${first.path} has no column ${missing} (it has ${names.join(", ")})`
          })
        }
        const fields = yield* Effect.try({
          try: () => Parquet.fieldsOf(first.metadata, options.columns),
          catch: notReadable(first.path)
        })
        yield* checked(operation, () =>
          FieldDefinitions.refuseUnholdable(
            fields.map((field) => field.name),
            operation,
            `${first.path} has`,
            "read the other columns with columns, or write the file with that column named otherwise"
          ))
        const plans = rowGroupSplits(footers, defaultParallelism()).map((split) => ({
          _tag: "ParquetSplit" as const,
          ...split,
          fields,
          ...(decode === undefined ? {} : { decode }),
          ...(options.mode === "DROPMALFORMED" ? { dropMalformed: true } : {})
        }))
        return dataset<A>(plans, "ParquetDataset", operation, decode === undefined ? fields : undefined)
      })
  }
}
