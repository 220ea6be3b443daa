/**
 * What a task runs: the partition plan of one partition of a stage (a small tree of operators, its leaves the
 * sources) and what to make of the records (the result operation). `LaunchTask.serializedTask` carries a
 * `Task` encoded with MessagePack; a third-party executor evaluates it as this module describes.
 *
 * User functions travel as `FunctionRef`s: by name (exported or registered by the app module, which every
 * executor imports) or as the source text of a self-contained function expression. Each is called with its
 * ordinary arguments and then, last, the environment it was declared with (`undefined` if none).
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
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
 * @since 0.1.0
 * @category functions
 */
export const FunctionRef = Schema.Union(NamedFunction, SourceFunction)
/**
 * @since 0.1.0
 * @category functions
 */
export type FunctionRef = typeof FunctionRef.Type

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
  length: Count
}, { description: "Source: the lines of a byte range of a text file" }) {}

/**
 * @since 0.1.0
 * @category operators
 */
export interface MapOp {
  readonly _tag: "Map" | "Filter" | "FlatMap" | "MapPartitions"
  readonly fn: FunctionRef
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
 * A random sample: with replacement, each record `Poisson(fraction)` times; without, each with probability
 * `fraction`. The generator is seeded with `seed` and the partition index.
 *
 * @since 0.1.0
 * @category operators
 */
export interface Sample {
  readonly _tag: "Sample"
  readonly withReplacement: boolean
  readonly fraction: number
  readonly seed: number
  readonly partition: number
  readonly child: PlanNode
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
export type PlanNode = Slice | Range | TextSplit | MapOp | MapPartitionsWithIndex | Glom | Sample | ZipWithIndex

const child = Schema.suspend((): Schema.Schema<PlanNode, PlanNodeEncoded> => PlanNode)

interface MapOpEncoded {
  readonly _tag: MapOp["_tag"]
  readonly fn: typeof FunctionRef.Encoded
  readonly child: PlanNodeEncoded
}
type PlanNodeEncoded =
  | typeof Slice.Encoded
  | typeof Range.Encoded
  | typeof TextSplit.Encoded
  | MapOpEncoded
  | Omit<MapPartitionsWithIndex, "fn" | "child"> & { readonly fn: typeof FunctionRef.Encoded; child: PlanNodeEncoded }
  | Omit<Glom, "child"> & { readonly child: PlanNodeEncoded }
  | Omit<Sample, "child"> & { readonly child: PlanNodeEncoded }
  | Omit<ZipWithIndex, "child"> & { readonly child: PlanNodeEncoded }

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
  Schema.Struct({
    _tag: Schema.Literal("Map", "Filter", "FlatMap", "MapPartitions"),
    fn: FunctionRef,
    child
  }),
  Schema.Struct({ _tag: Schema.Literal("MapPartitionsWithIndex"), fn: FunctionRef, partition: Count, child }),
  Schema.Struct({ _tag: Schema.Literal("Glom"), child }),
  Schema.Struct({
    _tag: Schema.Literal("Sample"),
    withReplacement: Schema.Boolean,
    fraction: unit,
    seed: Schema.Int,
    partition: Count,
    child
  }),
  Schema.Struct({ _tag: Schema.Literal("ZipWithIndex"), offset: Count, child })
).annotations({ identifier: "PlanNode", description: "One partition's plan: operators over a source" })

/**
 * What a task makes of its partition's records; the driver combines the partitions' results.
 *
 * - `Collect`: the records; `Count`: how many; `Take`: the first `n`.
 * - `Reduce`: `fn(a, b, env)` over the records, nothing for an empty partition; `Fold`: the same from `zero`;
 *   `Aggregate`: `seqOp(acc, record, env)` from `zero` (the driver then merges with `combOp`).
 * - `Foreach`: `fn(record, env)` for each; `ForeachPartition`: `fn(records, env)` once.
 * - `SaveAsText`: writes the records, one per line, to `dir/part-NNNNN` (the partition index, five digits).
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
  Schema.TaggedStruct("SaveAsText", { dir: Schema.String, partition: Count })
).annotations({ identifier: "ResultOp", description: "What a task makes of its partition's records" })
/**
 * @since 0.1.0
 * @category results
 */
export type ResultOp = typeof ResultOp.Type

/**
 * A task: a partition's plan and what to make of its records. `LaunchTask.serializedTask` is this, encoded.
 *
 * @since 0.1.0
 * @category models
 */
export class Task extends Schema.Class<Task>("Task")({
  plan: PlanNode,
  result: ResultOp
}, { description: "A partition's plan and what to make of its records" }) {}

/**
 * A task's result, in `StatusUpdate.data` when it FINISHED: the value of its result operation.
 *
 * @since 0.1.0
 * @category results
 */
export class TaskResult extends Schema.TaggedClass<TaskResult>()("TaskResult", {
  value: Value,
  /** Records the task read from its sources. */
  recordsRead: Count
}, { description: "A finished task's result" }) {}

/**
 * Why a task attempt failed, in `StatusUpdate.data` when it FAILED or was KILLED: the error's class, message and
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
 * A finished task's result too large to travel in its `StatusUpdate` (over `kindling.task.maxDirectResultSize`):
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
 * What `StatusUpdate.data` holds once a task has ended.
 *
 * @since 0.1.0
 * @category results
 */
export const TaskOutcome = Schema.Union(TaskResult, IndirectTaskResult, TaskFailure)
/**
 * @since 0.1.0
 * @category results
 */
export type TaskOutcome = typeof TaskOutcome.Type
