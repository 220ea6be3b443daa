/**
 * What a task runs: the partition plan of one partition of a stage (a small tree of operators, its leaves the
 * sources) and what to make of the records (the result operation). `TaskDescription.serializedTask` carries a
 * `Task` encoded with MessagePack; a third-party executor evaluates it as this module describes.
 *
 * User functions travel as `FunctionRef`s: by name (exported or registered by the app module, which every
 * executor imports), as a function the bundler hoisted into the app module with the values of the local
 * variables it refers to, or as the source text of a self-contained function expression. Each is called with
 * its ordinary arguments and then, last, the environment it was declared with (`undefined` if none).
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { Compression, Fields, LineFormat, OutputFormat } from "./DataFormats.js"
import { Count } from "./Descriptions.js"

/**
 * A value the app provides (records, an environment, a zero value): anything MessagePack carries.
 *
 * @since 0.1.0
 * @category schema
 */
export const Value = Schema.Unknown.annotations({
  identifier: "Value",
  description: "Any value MessagePack carries: records, environments, zero values"
})

/**
 * A user function by the name the app module exports or registers it under.
 *
 * @since 0.1.0
 * @category functions
 */
export class NamedFunction extends Schema.TaggedClass<NamedFunction>()("NamedFunction", {
  name: Schema.String,
  env: Value
}, { description: "A function the app module exports or registers, by name" }) {}

/**
 * A self-contained function expression, as source text (it refers to no variable of its surroundings).
 *
 * @since 0.1.0
 * @category functions
 */
export class SourceFunction extends Schema.TaggedClass<SourceFunction>()("SourceFunction", {
  source: Schema.String,
  env: Value
}, { description: "A self-contained function expression, as source text" }) {}

/**
 * A function of the app's source that `kindling submit` hoisted when it bundled the app: the bundle holds, under
 * `id` (where the function is written, `file:line:column`), a factory that makes the function from the local
 * variables it refers to. `captured` holds their values as they were when the transformation was declared;
 * `functions` those that are themselves functions, as references.
 *
 * @since 0.1.0
 * @category functions
 */
export interface ClosureFunction {
  readonly _tag: "ClosureFunction"
  readonly id: string
  readonly captured: { readonly [name: string]: unknown }
  readonly functions: { readonly [name: string]: FunctionRef }
  readonly env: unknown
}

/**
 * @since 0.1.0
 * @category functions
 */
export interface ClosureFunctionEncoded {
  readonly _tag: "ClosureFunction"
  readonly id: string
  readonly captured: { readonly [name: string]: unknown }
  readonly functions: { readonly [name: string]: FunctionRefEncoded }
  readonly env: unknown
}

/**
 * @since 0.1.0
 * @category functions
 */
export type FunctionRefEncoded = typeof NamedFunction.Encoded | typeof SourceFunction.Encoded | ClosureFunctionEncoded

/**
 * @since 0.1.0
 * @category functions
 */
export const ClosureFunction: Schema.Schema<ClosureFunction, ClosureFunctionEncoded> = Schema.TaggedStruct(
  "ClosureFunction",
  {
    id: Schema.String,
    captured: Schema.Record({ key: Schema.String, value: Value }),
    functions: Schema.Record({
      key: Schema.String,
      value: Schema.suspend((): Schema.Schema<FunctionRef, FunctionRefEncoded> => FunctionRef)
    }),
    env: Value
  }
).annotations({
  identifier: "ClosureFunction",
  description: "A function hoisted by the bundler, with the values of the local variables it refers to"
})

/**
 * @since 0.1.0
 * @category functions
 */
export type FunctionRef = NamedFunction | SourceFunction | ClosureFunction

/**
 * @since 0.1.0
 * @category functions
 */
export const FunctionRef: Schema.Schema<FunctionRef, FunctionRefEncoded> = Schema.Union(
  NamedFunction,
  SourceFunction,
  ClosureFunction
).annotations({ identifier: "FunctionRef", description: "How a user function travels" })

/**
 * A partition of `parallelize`: its records, inline.
 *
 * @since 0.1.0
 * @category sources
 */
export class Slice extends Schema.TaggedClass<Slice>()("Slice", {
  items: Schema.Array(Value)
}, { description: "Source: the records of one partition of parallelize" }) {}

/**
 * A partition of `range`: `start`, `start + step`, … while before `end` (after it, for a negative step).
 *
 * @since 0.1.0
 * @category sources
 */
export class Range extends Schema.TaggedClass<Range>()("Range", {
  start: Schema.Int,
  end: Schema.Int,
  step: Schema.Int.pipe(Schema.filter((n) => n !== 0, { message: () => "step must not be 0" }))
}, { description: "Source: the numbers of one partition of range" }) {}

/**
 * A byte range of a text file. Its records are the lines that start in `(start, start + length]` — or in
 * `[0, length]` when `start` is 0 — without their line terminators (`\n` or `\r\n`), as Hadoop's line reader
 * splits files: every line belongs to exactly one split however the file is cut.
 *
 * @since 0.1.0
 * @category sources
 */
export class TextSplit extends Schema.TaggedClass<TextSplit>()("TextSplit", {
  path: Schema.String,
  start: Count,
  length: Count,
  compression: Schema.optionalWith(Compression, { exact: true }).annotations({
    description: "A compressed file is one split, its lines those of the file decompressed: start 0, length its size"
  })
}, { description: "Source: the lines of a byte range of a text file" }) {}

/**
 * A byte range of a CSV or JSON lines file, its lines cut as `TextSplit`'s and made records as `format` says;
 * `compression`, as `TextSplit`'s. With `multiLine` a file is one split, read whole, so that a quoted CSV value
 * may hold line breaks and a JSON record span lines.
 *
 * @since 0.1.0
 * @category sources
 */
export class LineRecordSplit extends Schema.TaggedClass<LineRecordSplit>()("LineRecordSplit", {
  path: Schema.String,
  start: Count,
  length: Count,
  compression: Schema.optionalWith(Compression, { exact: true }),
  /**
   * The file is one split whose records may span lines: a quoted CSV value holding line breaks, JSON values
   * one after another however they are laid out (an array's elements each a record).
   */
  multiLine: Schema.optionalWith(Schema.Boolean, { exact: true }),
  format: LineFormat,
  decode: Schema.optionalWith(FunctionRef, { exact: true }).annotations({
    description: "Decodes each record (an app's schema); a record it throws on is malformed"
  })
}, { description: "Source: the CSV or JSON lines records of a byte range of a file" }) {}

/**
 * Row groups of a Parquet file (its splits, as Spark cuts Parquet), `fields` the columns read of them: a record
 * per row, with a property per field.
 *
 * @since 0.1.0
 * @category sources
 */
export class ParquetSplit extends Schema.TaggedClass<ParquetSplit>()("ParquetSplit", {
  path: Schema.String,
  rowGroups: Schema.Array(Count),
  fields: Fields,
  decode: Schema.optionalWith(FunctionRef, { exact: true }).annotations({
    description: "Decodes each record (an app's schema); a record it throws on fails the task, or is dropped"
  }),
  dropMalformed: Schema.optionalWith(Schema.Boolean, { exact: true })
}, { description: "Source: the records of row groups of a Parquet file" }) {}

/**
 * A checkpointed partition: the records of a file of record frames, as `SaveRecords` wrote it.
 *
 * @since 0.1.0
 * @category sources
 */
export class RecordFile extends Schema.TaggedClass<RecordFile>()("RecordFile", {
  path: Schema.String
}, { description: "Source: the records of a checkpointed partition's file" }) {}

/**
 * Whole files: for each path, `[file:path, the file's text]` (UTF-8; gzip'd files, `.gz`, decompressed).
 *
 * @since 0.1.0
 * @category sources
 */
export class WholeTextFiles extends Schema.TaggedClass<WholeTextFiles>()("WholeTextFiles", {
  paths: Schema.Array(Schema.String)
}, { description: "Source: whole text files, each as [file:path, text]" }) {}

/**
 * How values combine per key (Spark's `Aggregator`): a key's first value becomes its combiner through
 * `createCombiner(value, env)` — or, when there is none, `mergeValue(a copy of zero, value, env)` — the next
 * values are added with `mergeValue(combiner, value, env)`, and combiners of one key made apart (on several map
 * tasks, or before and after a spill) are merged with `mergeCombiners(a, b, env)`.
 *
 * @since 0.1.0
 * @category shuffle
 */
export const Aggregator = Schema.Struct({
  createCombiner: Schema.optional(FunctionRef),
  zero: Schema.optional(Value),
  mergeValue: FunctionRef,
  mergeCombiners: FunctionRef
}).annotations({ identifier: "Aggregator", description: "How values combine per key" })

/**
 * How a shuffle's reduce side makes records of the `[key, value]` pairs its map side wrote:
 *
 * - `Records`: the records as written (a repartition writes plain records, not pairs).
 * - `Merge`: pairs of a shuffle whose map side combined already: `[key, combiner]`, the combiners of each key
 *   merged with `mergeCombiners(a, b, env)`.
 * - `Combine`: pairs combined on the reduce side only, by the aggregator: `[key, combiner]`.
 * - `Sort`: the pairs sorted by key (structural order, `ascending` or not).
 *
 * A reduce side whose records pass `kindling.shuffle.spill.threshold` in memory spills sorted runs to disk and
 * merges them.
 *
 * @since 0.1.0
 * @category shuffle
 */
export const ReadMode = Schema.Union(
  Schema.TaggedStruct("Records", {}),
  Schema.TaggedStruct("Merge", { mergeCombiners: FunctionRef }),
  Schema.TaggedStruct("Combine", { aggregator: Aggregator }),
  Schema.TaggedStruct("Sort", { ascending: Schema.Boolean })
).annotations({ identifier: "ReadMode", description: "How a reduce side makes records of a shuffle's pairs" })
/**
 * @since 0.1.0
 * @category shuffle
 */
export type ReadMode = typeof ReadMode.Type

/**
 * One shuffle a reduce task reads: its id and token (the capability its blocks are served under).
 *
 * @since 0.1.0
 * @category shuffle
 */
export const ShuffleHandle = Schema.Struct({
  shuffleId: Count,
  /** Random per shuffle and known only to the app's driver and executors: block ids carry it. */
  token: Schema.String
}).annotations({ identifier: "ShuffleHandle" })

/**
 * @since 0.1.0
 * @category operators
 */
export interface MapOp {
  /**
   * `MapValues`/`FlatMapValues` apply `fn` to the value of each `[key, value]` record and keep the key; `KeyBy`
   * makes `[fn(record, env), record]` of each record.
   */
  readonly _tag: "Map" | "Filter" | "FlatMap" | "MapPartitions" | "MapValues" | "FlatMapValues" | "KeyBy"
  readonly fn: FunctionRef
  readonly child: PlanNode
}

/**
 * Source: reduce partition `reduceId` of a shuffle, read as `read` says.
 *
 * @since 0.1.0
 * @category shuffle
 */
export interface ShuffleRead {
  readonly _tag: "ShuffleRead"
  readonly shuffle: typeof ShuffleHandle.Type
  readonly reduceId: number
  readonly read: ReadMode
}

/**
 * One dataset of a cogroup: shuffled into the cogroup's partitions, or — when it is hash-partitioned alike
 * already — its own partition's plan, read in place.
 *
 * @since 0.1.0
 * @category shuffle
 */
export type CoGroupInput =
  | { readonly _tag: "Shuffled"; readonly shuffle: typeof ShuffleHandle.Type }
  | { readonly _tag: "InPlace"; readonly plan: PlanNode }

/**
 * Partition `reduceId` of several datasets of `[key, value]` pairs grouped by key, as
 * `[key, [values of dataset 0, values of dataset 1, …]]`, one record per key found in any of them.
 *
 * @since 0.1.0
 * @category shuffle
 */
export interface CoGroup {
  readonly _tag: "CoGroup"
  readonly inputs: ReadonlyArray<CoGroupInput>
  readonly reduceId: number
}

/**
 * The records of several partitions, one after the other (`coalesce` without a shuffle).
 *
 * @since 0.1.0
 * @category operators
 */
export interface Concat {
  readonly _tag: "Concat"
  readonly children: ReadonlyArray<PlanNode>
}

/**
 * Every `[a, b]` with `a` from `left` and `b` from `right` (`right` is read once, into memory).
 *
 * @since 0.1.0
 * @category operators
 */
export interface Cartesian {
  readonly _tag: "Cartesian"
  readonly left: PlanNode
  readonly right: PlanNode
}

/**
 * A persisted partition (block `rdd_<rddId>_<partition>`): read from the executor's block store when it holds
 * it, else computed from `child` and stored at `level` as the task's records pass.
 *
 * @since 0.1.0
 * @category operators
 */
export interface Cached {
  readonly _tag: "Cached"
  readonly rddId: number
  readonly partition: number
  readonly level: "MEMORY_ONLY" | "MEMORY_AND_DISK" | "DISK_ONLY"
  readonly child: PlanNode
}

/**
 * `fn(partition, records, env)`: the partition index is the one of the dataset it was declared on.
 *
 * @since 0.1.0
 * @category operators
 */
export interface MapPartitionsWithIndex {
  readonly _tag: "MapPartitionsWithIndex"
  readonly fn: FunctionRef
  readonly partition: number
  readonly child: PlanNode
}

/**
 * The partition's records as one array.
 *
 * @since 0.1.0
 * @category operators
 */
export interface Glom {
  readonly _tag: "Glom"
  readonly child: PlanNode
}

/**
 * A random sample, drawn as Spark draws it from the same seed (its generators and samplers): with
 * replacement each record `Poisson(fraction)` times, without each record with probability `fraction`, each
 * partition seeded with the `partition`-th long of `java.util.Random(seed)`; with a `lowerBound`, the records whose
 * draw (Spark's `XORShiftRandom`, seeded with `seed` plus the partition) is in `[lowerBound, fraction)`, so that
 * samples of one seed with adjoining ranges split the records (`randomSplit`).
 *
 * @since 0.1.0
 * @category operators
 */
export interface Sample {
  readonly _tag: "Sample"
  readonly withReplacement: boolean
  readonly fraction: number
  readonly lowerBound?: number | undefined
  readonly seed: number
  readonly partition: number
  readonly child: PlanNode
}

/**
 * One record: the partition's records folded with `fn(acc, record, env)` from a copy of `zero`.
 *
 * @since 0.1.0
 * @category operators
 */
export interface FoldPartition {
  readonly _tag: "FoldPartition"
  readonly zero: unknown
  readonly fn: FunctionRef
  readonly child: PlanNode
}

/**
 * The partition's records reduced with `fn(a, b, env)`: one record, none of an empty partition.
 *
 * @since 0.1.0
 * @category operators
 */
export interface ReducePartition {
  readonly _tag: "ReducePartition"
  readonly fn: FunctionRef
  readonly child: PlanNode
}

/**
 * The records `fn(records of children[0], records of children[1], …, env)` returns (`zip`, `zipPartitions`).
 *
 * @since 0.1.0
 * @category operators
 */
export interface ZipPartitions {
  readonly _tag: "ZipPartitions"
  readonly fn: FunctionRef
  readonly children: ReadonlyArray<PlanNode>
}

/**
 * Each record paired with its index in the whole dataset: `[record, offset + i]`.
 *
 * @since 0.1.0
 * @category operators
 */
export interface ZipWithIndex {
  readonly _tag: "ZipWithIndex"
  readonly offset: number
  readonly child: PlanNode
}

/**
 * @since 0.1.0
 * @category operators
 */
export type PlanNode =
  | Slice
  | Range
  | TextSplit
  | LineRecordSplit
  | ParquetSplit
  | WholeTextFiles
  | RecordFile
  | MapOp
  | MapPartitionsWithIndex
  | Glom
  | Sample
  | FoldPartition
  | ReducePartition
  | ZipPartitions
  | ZipWithIndex
  | ShuffleRead
  | CoGroup
  | Concat
  | Cartesian
  | Cached

const child = Schema.suspend((): Schema.Schema<PlanNode, PlanNodeEncoded> => PlanNode)

interface MapOpEncoded {
  readonly _tag: MapOp["_tag"]
  readonly fn: typeof FunctionRef.Encoded
  readonly child: PlanNodeEncoded
}

/**
 * A plan as it travels (`PlanNode`'s encoded form).
 *
 * @since 0.1.0
 * @category operators
 */
export type PlanNodeEncoded =
  | typeof Slice.Encoded
  | typeof Range.Encoded
  | typeof TextSplit.Encoded
  | typeof LineRecordSplit.Encoded
  | typeof ParquetSplit.Encoded
  | typeof WholeTextFiles.Encoded
  | typeof RecordFile.Encoded
  | MapOpEncoded
  | Omit<MapPartitionsWithIndex, "fn" | "child"> & { readonly fn: typeof FunctionRef.Encoded; child: PlanNodeEncoded }
  | Omit<Glom, "child"> & { readonly child: PlanNodeEncoded }
  | Omit<Sample, "child"> & { readonly child: PlanNodeEncoded }
  | Omit<FoldPartition, "fn" | "child"> & { readonly fn: typeof FunctionRef.Encoded; child: PlanNodeEncoded }
  | Omit<ReducePartition, "fn" | "child"> & { readonly fn: typeof FunctionRef.Encoded; child: PlanNodeEncoded }
  | {
    readonly _tag: "ZipPartitions"
    readonly fn: typeof FunctionRef.Encoded
    children: ReadonlyArray<PlanNodeEncoded>
  }
  | Omit<ZipWithIndex, "child"> & { readonly child: PlanNodeEncoded }
  | Omit<ShuffleRead, "read"> & { readonly read: typeof ReadMode.Encoded }
  | {
    readonly _tag: "CoGroup"
    readonly inputs: ReadonlyArray<
      | { readonly _tag: "Shuffled"; readonly shuffle: typeof ShuffleHandle.Type }
      | { readonly _tag: "InPlace"; readonly plan: PlanNodeEncoded }
    >
    readonly reduceId: number
  }
  | { readonly _tag: "Concat"; readonly children: ReadonlyArray<PlanNodeEncoded> }
  | { readonly _tag: "Cartesian"; readonly left: PlanNodeEncoded; readonly right: PlanNodeEncoded }
  | Omit<Cached, "child"> & { readonly child: PlanNodeEncoded }

const unit = Schema.Number.pipe(Schema.between(0, Number.MAX_VALUE))

/**
 * One partition's plan: a tree whose leaves are sources.
 *
 * @since 0.1.0
 * @category operators
 */
export const PlanNode: Schema.Schema<PlanNode, PlanNodeEncoded> = Schema.Union(
  Slice,
  Range,
  TextSplit,
  LineRecordSplit,
  ParquetSplit,
  WholeTextFiles,
  RecordFile,
  Schema.Struct({
    _tag: Schema.Literal("Map", "Filter", "FlatMap", "MapPartitions", "MapValues", "FlatMapValues", "KeyBy"),
    fn: FunctionRef,
    child
  }),
  Schema.Struct({ _tag: Schema.Literal("MapPartitionsWithIndex"), fn: FunctionRef, partition: Count, child }),
  Schema.Struct({ _tag: Schema.Literal("Glom"), child }),
  Schema.Struct({
    _tag: Schema.Literal("Sample"),
    withReplacement: Schema.Boolean,
    fraction: unit,
    lowerBound: Schema.optional(unit),
    seed: Schema.Int,
    partition: Count,
    child
  }),
  Schema.Struct({ _tag: Schema.Literal("FoldPartition"), zero: Value, fn: FunctionRef, child }),
  Schema.Struct({ _tag: Schema.Literal("ReducePartition"), fn: FunctionRef, child }),
  Schema.Struct({ _tag: Schema.Literal("ZipPartitions"), fn: FunctionRef, children: Schema.Array(child) }),
  Schema.Struct({ _tag: Schema.Literal("ZipWithIndex"), offset: Count, child }),
  Schema.Struct({ _tag: Schema.Literal("ShuffleRead"), shuffle: ShuffleHandle, reduceId: Count, read: ReadMode }),
  Schema.Struct({
    _tag: Schema.Literal("CoGroup"),
    inputs: Schema.Array(Schema.Union(
      Schema.Struct({ _tag: Schema.Literal("Shuffled"), shuffle: ShuffleHandle }),
      Schema.Struct({ _tag: Schema.Literal("InPlace"), plan: child })
    )),
    reduceId: Count
  }),
  Schema.Struct({ _tag: Schema.Literal("Concat"), children: Schema.Array(child) }),
  Schema.Struct({ _tag: Schema.Literal("Cartesian"), left: child, right: child }),
  Schema.Struct({
    _tag: Schema.Literal("Cached"),
    rddId: Count,
    partition: Count,
    level: Schema.Literal("MEMORY_ONLY", "MEMORY_AND_DISK", "DISK_ONLY"),
    child
  })
).annotations({ identifier: "PlanNode", description: "One partition's plan: operators over a source" })

/**
 * Which reduce partition a map task's record goes to:
 *
 * - `Hash`: the key's structural hash modulo the number of partitions (`Keys.hash`);
 * - `Range`: the first partition whose upper bound is not below the key, in key order (`ascending` or not); the
 *   bounds are sampled from the data by the driver, `numReduces − 1` of them at most;
 * - `RoundRobin`: records (not pairs) dealt in turn, starting at a position drawn from the map index.
 *
 * @since 0.1.0
 * @category shuffle
 */
export const Partitioner = Schema.Union(
  Schema.TaggedStruct("Hash", {}),
  Schema.TaggedStruct("Range", { bounds: Schema.Array(Value), ascending: Schema.Boolean }),
  Schema.TaggedStruct("RoundRobin", {})
).annotations({ identifier: "Partitioner", description: "Which reduce partition a record goes to" })
/**
 * @since 0.1.0
 * @category shuffle
 */
export type Partitioner = typeof Partitioner.Type

/**
 * A map task's shuffle output: its records cut into `numReduces` partitions, combined per key first when
 * `combine` is given, written to the executor's local dir as one data file and an index. Its result value is
 * the `MapStatus`.
 *
 * @since 0.1.0
 * @category shuffle
 */
export const ShuffleWrite = Schema.TaggedStruct("ShuffleWrite", {
  shuffle: ShuffleHandle,
  mapIndex: Count,
  numReduces: Count,
  partitioner: Partitioner,
  combine: Schema.optional(Aggregator),
  /** The app's operation that shuffles (`reduceByKey`, …), which errors about its records name. */
  operation: Schema.optional(Schema.String)
}).annotations({ identifier: "ShuffleWrite" })

/**
 * A map task's result value: the bytes it wrote for each reduce partition.
 *
 * @since 0.1.0
 * @category shuffle
 */
export class MapStatus extends Schema.Class<MapStatus>("MapStatus")({
  sizes: Schema.Array(Count)
}, { description: "The bytes a map task wrote for each reduce partition" }) {}

/**
 * What a task makes of its partition's records; the driver combines the partitions' results.
 *
 * - `Collect`: the records; `Count`: how many; `Take`: the first `n`.
 * - `Reduce`: `fn(a, b, env)` over the records, nothing for an empty partition; `Fold`: the same from `zero`;
 *   `Aggregate`: `seqOp(acc, record, env)` from `zero` (the driver then merges with `combOp`).
 * - `Foreach`: `fn(record, env)` for each; `ForeachPartition`: `fn(records, env)` once.
 * - `SaveAs`: writes the records in `format` to `dir/file` (compressed with `compression`, if given): first to
 *   a file of the attempt's own under `dir/_temporary`, renamed into place once whole, so that no reader ever
 *   sees part of a file and the last attempt to finish wins whole.
 * - `SaveRecords`: writes the records as record frames (as shuffle outputs and cached blocks hold them) to
 *   `dir/part-NNNNN`, for a checkpoint that `RecordFile` reads back.
 * - `TakeOrdered`: the `n` smallest records (largest when not `ascending`) in structural order, sorted; with
 *   `byKey`, of `[key, record]` pairs, ordered by their keys alone.
 * - `InferFields`: of records whose values are texts (a CSV read as strings), the narrowest field type that holds
 *   every value of each property, as Spark infers a CSV schema: `[name, field]` pairs, in the order the
 *   properties first appear; a property whose values are all null has none.
 * - `SampleKeys`: how many `[key, value]` records there are and a uniform sample of at most `size` of their
 *   keys, `{ count, keys }` (for a range partitioner's bounds).
 * - `ShuffleWrite`: the map side of a shuffle; its value is a `MapStatus`.
 *
 * @since 0.1.0
 * @category results
 */
export const ResultOp = Schema.Union(
  Schema.TaggedStruct("Collect", {}),
  Schema.TaggedStruct("Count", {}),
  Schema.TaggedStruct("Take", { n: Count }),
  Schema.TaggedStruct("Reduce", { fn: FunctionRef }),
  Schema.TaggedStruct("Fold", { zero: Value, fn: FunctionRef }),
  Schema.TaggedStruct("Aggregate", { zero: Value, seqOp: FunctionRef }),
  Schema.TaggedStruct("Foreach", { fn: FunctionRef }),
  Schema.TaggedStruct("ForeachPartition", { fn: FunctionRef }),
  Schema.TaggedStruct("SaveAs", {
    dir: Schema.String,
    file: Schema.String,
    format: OutputFormat,
    compression: Schema.optionalWith(Compression, { exact: true })
  }),
  Schema.TaggedStruct("SaveRecords", { dir: Schema.String, partition: Count }),
  Schema.TaggedStruct("TakeOrdered", { n: Count, ascending: Schema.Boolean, byKey: Schema.optional(Schema.Boolean) }),
  Schema.TaggedStruct("SampleKeys", { size: Count, seed: Schema.Int }),
  Schema.TaggedStruct("InferFields", {}),
  ShuffleWrite
).annotations({ identifier: "ResultOp", description: "What a task makes of its partition's records" })
/**
 * @since 0.1.0
 * @category results
 */
export type ResultOp = typeof ResultOp.Type

/**
 * A task: a partition's plan and what to make of its records. `TaskDescription.serializedTask` is this, encoded.
 *
 * @since 0.1.0
 * @category models
 */
export class Task extends Schema.Class<Task>("Task")({
  plan: PlanNode,
  result: ResultOp
}, { description: "A partition's plan and what to make of its records" }) {}

/**
 * A persisted partition: block `rdd_<rddId>_<partition>`.
 *
 * @since 0.1.0
 * @category models
 */
export const PersistedPartition = Schema.Struct({ rddId: Count, partition: Count }).annotations({
  identifier: "PersistedPartition"
})

/**
 * What an executor gathers before a task runs, and what it serves after, sent beside the task's bytes
 * (`TaskDescription.needs`) so that the executor never decodes the task (its plan may carry a partition's data):
 * only its task thread does.
 *
 * @since 0.1.0
 * @category models
 */
export const TaskNeeds = Schema.Struct({
  /** A map task's shuffle, whose output the executor serves once it is written. */
  writes: Schema.optional(ShuffleHandle),
  /** The persisted partitions its plan reads: those the executor holds are handed to the task. */
  persisted: Schema.Array(PersistedPartition),
  /**
   * The shuffle partitions its plan reads, each with the persisted partitions above it in the plan: an executor
   * that holds one of those reads it instead, and fetches nothing of the shuffle.
   */
  shuffleReads: Schema.Array(Schema.Struct({
    shuffle: ShuffleHandle,
    reduceId: Count,
    beneath: Schema.Array(PersistedPartition)
  })),
  /**
   * The broadcast variables its functions' environments refer to: the executor fetches each (once) from the
   * driver's data plane as block `broadcast/<token>/<id>` before the task runs.
   */
  broadcasts: Schema.Array(Schema.Struct({ id: Count, token: Schema.String }))
}).annotations({ identifier: "TaskNeeds", description: "What an executor gathers before a task and serves after" })
/**
 * @since 0.1.0
 * @category models
 */
export type TaskNeeds = typeof TaskNeeds.Type

/**
 * A task as it travels: its encoded `Task`, and what it needs (`TaskNeeds`).
 *
 * @since 0.1.0
 * @category models
 */
export interface EncodedTask {
  readonly bytes: Uint8Array
  readonly needs: TaskNeeds
}

/**
 * A CSV or JSON lines file a task read records of: how many its lines made, and how many of those were malformed.
 *
 * @since 0.1.0
 * @category results
 */
export const ParsedFile = Schema.Struct({
  path: Schema.String,
  format: Schema.Literal("Csv", "JsonLines"),
  /** The file was read whole, its records spanning lines. */
  multiLine: Schema.Boolean,
  records: Count,
  malformed: Count
}).annotations({ identifier: "ParsedFile", description: "The records a task read of a text file, and the malformed" })
/**
 * @since 0.1.0
 * @category results
 */
export type ParsedFile = typeof ParsedFile.Type

/**
 * A task's result, in `TaskStatus.data` when it FINISHED: the value of its result operation.
 *
 * @since 0.1.0
 * @category results
 */
export class TaskResult extends Schema.TaggedClass<TaskResult>()("TaskResult", {
  /**
   * The value of the result operation, encoded on its own (MessagePack with `Records`' extensions), so that a
   * receiver reads the rest — metrics, accumulators — without decoding a large value.
   */
  value: Schema.Uint8ArrayFromSelf.annotations({
    jsonSchema: { type: "string", contentEncoding: "binary", description: "MessagePack bin: the encoded value" }
  }),
  /** Records the task read from its sources. */
  recordsRead: Count,
  /** The task's updates of the app's accumulators, by accumulator id: the driver merges them once it succeeds. */
  accumulators: Schema.optional(Schema.Array(Schema.Tuple(Count, Value))),
  /** Blocks of persisted partitions this task stored on its executor (`rdd_<rddId>_<partition>`). */
  storedBlocks: Schema.optional(Schema.Array(Schema.String)),
  /**
   * What the task did, by metric: `shuffleBytesWritten`, `shuffleRecordsWritten`, `shuffleBytesRead`,
   * `shuffleRemoteBytesRead`, `shuffleRecordsRead`, `spilledBytes`. A receiver ignores keys it does not know.
   */
  metrics: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Finite })),
  /**
   * The CSV and JSON lines files its sources read, each with the records its lines made and how many of those were
   * malformed (kept, dropped or failed on): the driver warns of a file whose every record was malformed.
   */
  parsedFiles: Schema.optional(Schema.Array(ParsedFile))
}, { description: "A finished task's result" }) {}

/**
 * Why a task attempt failed, in `TaskStatus.data` when it FAILED or was KILLED: the error's class, message and
 * stack as the executor saw them.
 *
 * @since 0.1.0
 * @category results
 */
export class TaskFailure extends Schema.TaggedClass<TaskFailure>()("TaskFailure", {
  className: Schema.String,
  message: Schema.String,
  stack: Schema.String
}, { description: "Why a task attempt failed" }) {}

/**
 * A finished task's result too large to travel in its `TaskStatus` (over `kindling.task.maxDirectResultSize`):
 * the encoded `TaskResult` waits on the executor's data plane as block `blockId` of `size` bytes, for the driver
 * to fetch once. The executor forgets it once it has been read to its end.
 *
 * @since 0.1.0
 * @category results
 */
export class IndirectTaskResult extends Schema.TaggedClass<IndirectTaskResult>()("IndirectTaskResult", {
  blockId: Schema.String,
  size: Count
}, { description: "A large result, to fetch from the executor's data plane" }) {}

/**
 * A reduce task could not read a map output (its executor is gone, or the driver has no location for it): the
 * task failed through no fault of its own, and the map partition must run again (Spark's `FetchFailed`).
 * `executorId` is where the output was said to be, if the driver said so.
 *
 * @since 0.1.0
 * @category results
 */
export class FetchFailed extends Schema.TaggedClass<FetchFailed>()("FetchFailed", {
  shuffleId: Count,
  mapIndex: Count,
  reduceId: Count,
  executorId: Schema.optional(Schema.String),
  message: Schema.String
}, { description: "A reduce task could not read a map output" }) {}

/**
 * What `TaskStatus.data` holds once a task has ended.
 *
 * @since 0.1.0
 * @category results
 */
export const TaskOutcome = Schema.Union(TaskResult, IndirectTaskResult, TaskFailure, FetchFailed)
/**
 * @since 0.1.0
 * @category results
 */
export type TaskOutcome = typeof TaskOutcome.Type
