/**
 * `Dataset<A>`: a distributed collection, Spark's RDD. Transformations are lazy and return a new dataset; they
 * check their function at once (`UserFunctions`). Actions are Effects that run a job and fail with typed errors.
 * A job's tasks evaluate their partition's plan on the executors; a transformation that needs records of other
 * partitions (`reduceByKey`, `join`, `sortByKey`, `repartition`, …) shuffles them, and the DAG scheduler runs the
 * shuffle's map side as a stage of its own first.
 *
 * Keyed operations take datasets of `[key, value]` pairs; keys compare by structure (strings, numbers, bigints,
 * booleans and arrays of those — `Keys` in `@kindling/data`), anything else as a key fails the job with
 * `InvalidKey`.
 *
 * Every function is called with its ordinary arguments and then the environment given with it, so values from
 * the app travel explicitly: `ds.map((x, env) => x * env.k, { k: 3 })`.
 *
 * The methods' longer bodies are in `internal/`: running jobs and the actions' driver side (`actions.ts`,
 * `textOutput.ts`), shuffles and cogroups (`shuffles.ts`), the sort's range partitioner, partition arithmetic, a
 * dataset's entry in its lineage, and the debug string.
 *
 * @since 0.1.0
 */
import { type Disk, FilePaths, PartFiles, SparkRandom } from "@kindling/data"
import type { DataFormats, TaskPlan } from "@kindling/protocol"
import * as Effect from "effect/Effect"
import {
  EmptyDataset,
  type InputNotReadable,
  InvalidArgument,
  JobFailed,
  type OutputDirectoryExists,
  type OutputNotWritable
} from "./AppErrors.js"
import * as Builtins from "./Builtins.js"
import * as CallSites from "./CallSites.js"
import * as DatasetWriter from "./DatasetWriter.js"
import * as Actions from "./internal/actions.js"
import * as Checkpoints from "./internal/checkpoints.js"
import * as DatasetLineage from "./internal/datasetLineage.js"
import * as DebugString from "./internal/debugString.js"
import * as FileOutput from "./internal/fileOutput.js"
import * as NumericActions from "./internal/numericActions.js"
import * as Partitions from "./internal/partitions.js"
import * as RangePartitioner from "./internal/rangePartitioner.js"
import * as Sampling from "./internal/sampling.js"
import * as Shuffles from "./internal/shuffles.js"
import type { UnrunActions } from "./internal/unrunActions.js"
import type { JobGraph } from "./JobGraph.js"
import * as Lineage from "./Lineage.js"
import type * as UserFunctions from "./UserFunctions.js"

type PlanNode = typeof TaskPlan.PlanNode.Encoded
type FunctionRef = typeof TaskPlan.FunctionRef.Encoded

/**
 * What `stats` gives: count, mean, sum, extremes and variances, as Spark's `StatCounter`.
 *
 * @since 0.1.0
 * @category models
 */
export type Stats = NumericActions.Stats
type Aggregator = typeof TaskPlan.Aggregator.Encoded

/**
 * What can stop a dataset's job: a job failure, or a source that cannot be read.
 *
 * @since 0.1.0
 * @category errors
 */
export type DatasetError = JobFailed | InputNotReadable

/**
 * What datasets need from their app context: a way to run a job, to ship a function, and ids.
 *
 * @since 0.1.0
 * @category models
 */
export interface Runtime {
  /** Runs a job; the results of its result tasks come back in order. */
  readonly runJob: (job: JobGraph) => Effect.Effect<Array<unknown>, JobFailed>
  /** How a function travels; throws when it cannot (see `UserFunctions.reference`). */
  readonly reference: (fn: UserFunctions.AnyFunction, env: unknown, transformation: string) => FunctionRef
  /** A fresh dataset id (Spark's RDD id). */
  readonly newDatasetId: () => number
  /** A fresh shuffle id. */
  readonly newShuffleId: () => number
  /** Tells the executors to drop the persisted partitions of a dataset. */
  readonly unpersist: (datasetId: number) => Effect.Effect<void>
  /**
   * The partitions of a shuffle given no count, when the app sets them (`kindling.default.parallelism`); unset, a
   * shuffle's count follows the datasets it reads.
   */
  readonly defaultPartitions: () => number | undefined
  /** The files its sources read and its output goes to. */
  readonly files: Disk.Files
  /** Where checkpoints are written (`kc.setCheckpointDir`), once the app says. */
  readonly checkpoints: { dir: string | undefined }
  /** The actions made and not run yet. */
  readonly unrun: UnrunActions
}

/**
 * How a persisted dataset keeps its partitions on the executors that computed them: in memory only (a partition
 * that does not fit is computed again when needed), in memory and on the local disk when memory is short, or on
 * disk only.
 *
 * @since 0.1.0
 * @category models
 */
export type StorageLevel = "MEMORY_ONLY" | "MEMORY_AND_DISK" | "DISK_ONLY"

/**
 * Where a dataset comes from, for `toDebugString`: its kind, the operation that made it, and the datasets it
 * depends on narrowly (in the same stage) or through a shuffle.
 *
 * @since 0.1.0
 * @category models
 */
export interface Origin {
  readonly kind: string
  readonly operation: string
  readonly narrow: ReadonlyArray<Dataset<unknown>>
  readonly shuffled: ReadonlyArray<Dataset<unknown>>
}

const validDepth = (depth: number) => Number.isSafeInteger(depth) && depth >= 1
const badDepth = (depth: number) => new InvalidArgument({ reason: `the depth of a tree must be ≥ 1, got ${depth}` })

// A fresh seed where the app gives none, as Spark draws one.
const randomSeed = () => Math.floor(Math.random() * 2 ** 31)

// A seed is Spark's long, here an integer a number holds exactly.
const badSeed = (seed: number, operation: string) =>
  Number.isSafeInteger(seed)
    ? undefined
    : new InvalidArgument({
      reason: `${operation}: the seed must be an integer of at most 2^53 - 1 in size, got ${seed}`
    })

/**
 * @since 0.1.0
 * @category models
 */
export class Dataset<A> {
  /** Its id among the app's datasets. */
  readonly id: number
  private storage: StorageLevel | undefined
  private label: string | undefined
  // Asked for by `checkpoint()`; then written, in a folder.
  private checkpointState:
    | { readonly _tag: "Requested" }
    | { readonly _tag: "Written"; readonly dir: string }
    | undefined

  /** @internal */
  constructor(
    /** @internal */
    readonly runtime: Runtime,
    /**
     * What it computes: the plan of each partition and the shuffles they need. Computing it may run a job (the
     * counts of zipWithIndex, a sort's sample) or read a directory (textFile).
     */
    private computed: Effect.Effect<Lineage.Lineage, DatasetError>,
    /** @internal */
    readonly origin: Origin,
    /** Its pairs are hash-partitioned by key into its partitions (it comes out of a shuffle by key). */
    readonly hashPartitioned = false
  ) {
    this.id = runtime.newDatasetId()
    this.creation = CallSites.capture(origin.operation)
  }

  /** @internal Where the app made it (Spark's creation site). */
  readonly creation: () => CallSites.CallSite

  private recordFields: DataFormats.Fields | undefined

  /**
   * The fields of its records, when they are known: read from CSV, JSON lines with fields, or Parquet, and
   * kept by the transformations that keep records as they are (`filter`, `sample`, `repartition`, `coalesce`,
   * `distinct`, `persist`). Writers write these types; for records of other datasets they infer them.
   *
   * @since 0.1.0
   */
  get fields(): DataFormats.Fields | undefined {
    return this.recordFields
  }

  /** @internal Says what the fields of its records are. */
  withFields(fields: DataFormats.Fields | undefined): this {
    this.recordFields = fields
    return this
  }

  /**
   * Writes the records as files — CSV, JSON lines, Parquet or text — one part per partition, as Spark's
   * `DataFrameWriter` does.
   *
   * @since 0.1.0
   */
  get write(): DatasetWriter.DatasetWriter {
    return DatasetWriter.make(this as Dataset<unknown>, this.action.bind(this))
  }

  /** @internal */
  static of<A>(
    runtime: Runtime,
    plans: Effect.Effect<ReadonlyArray<PlanNode>, DatasetError>,
    kind: string,
    operation: string
  ) {
    return new Dataset<A>(runtime, Effect.map(plans, Lineage.fromPlans), { kind, operation, narrow: [], shuffled: [] })
  }

  /** @internal What it computes, with its persisted partitions read from (or stored on) the executors. */
  get lineage(): Effect.Effect<Lineage.Lineage, DatasetError> {
    return Effect.suspend(() => {
      const level = this.storage
      return Effect.map(this.computed, (computed) => DatasetLineage.recorded(this, computed, level))
    })
  }

  /** The plan of each partition. */
  get plans(): Effect.Effect<ReadonlyArray<PlanNode>, DatasetError> {
    return Effect.map(this.lineage, (lineage) => lineage.plans)
  }

  private derive<B>(
    operation: string,
    f: (child: PlanNode, partition: number) => PlanNode,
    keepsPartitioning = false
  ): Dataset<B> {
    return new Dataset<B>(
      this.runtime,
      Effect.map(this.lineage, (lineage) => Lineage.withPlans(lineage, lineage.plans.map(f))),
      { kind: "MapPartitionsDataset", operation, narrow: [this as Dataset<unknown>], shuffled: [] },
      keepsPartitioning && this.hashPartitioned
    )
  }

  // An action's effect: its jobs named after where the app called it (`CallSites.action`), and followed by the
  // checkpoints its lineage asks for.
  private action<X, E>(name: string, effect: Effect.Effect<X, E>): Effect.Effect<X, E | DatasetError> {
    return CallSites.action(
      name,
      Effect.tap(effect, () => Checkpoints.writeRequested(this as Dataset<unknown>)),
      this.runtime.unrun
    )
  }

  private ref(fn: UserFunctions.AnyFunction, env: unknown, transformation: string): FunctionRef {
    return this.runtime.reference(fn, env, transformation)
  }

  /** How many partitions it has (tasks its jobs run). */
  get numPartitions(): Effect.Effect<number, DatasetError> {
    return Effect.map(this.computed, (lineage) => lineage.plans.length)
  }

  // ---- transformations ----------------------------------------------------------------------------------------

  /** @since 0.1.0 */
  map<B, E = undefined>(f: (record: A, env: E) => B, env?: E): Dataset<B> {
    const fn = this.ref(f, env, "map")
    return this.derive("map", (child) => ({ _tag: "Map", fn, child }))
  }

  /** @since 0.1.0 */
  filter<E = undefined>(f: (record: A, env: E) => boolean, env?: E): Dataset<A> {
    const fn = this.ref(f, env, "filter")
    return this.derive<A>("filter", (child) => ({ _tag: "Filter", fn, child }), true).withFields(this.recordFields)
  }

  /** @since 0.1.0 */
  flatMap<B, E = undefined>(f: (record: A, env: E) => Iterable<B>, env?: E): Dataset<B> {
    const fn = this.ref(f, env, "flatMap")
    return this.derive("flatMap", (child) => ({ _tag: "FlatMap", fn, child }))
  }

  /** @since 0.1.0 */
  mapPartitions<B, E = undefined>(f: (records: Iterable<A>, env: E) => Iterable<B>, env?: E): Dataset<B> {
    const fn = this.ref(f, env, "mapPartitions")
    return this.derive("mapPartitions", (child) => ({ _tag: "MapPartitions", fn, child }))
  }

  /** @since 0.1.0 */
  mapPartitionsWithIndex<B, E = undefined>(
    f: (partition: number, records: Iterable<A>, env: E) => Iterable<B>,
    env?: E
  ): Dataset<B> {
    const fn = this.ref(f, env, "mapPartitionsWithIndex")
    return this.derive(
      "mapPartitionsWithIndex",
      (child, partition) => ({ _tag: "MapPartitionsWithIndex", fn, partition, child })
    )
  }

  /** The partitions of this dataset, then those of `other`. @since 0.1.0 */
  union(other: Dataset<A>): Dataset<A> {
    return Dataset.unionAll([this, other])
  }

  /** @internal The partitions of each of the datasets, in turn (`union`, `kc.union`). */
  static unionAll<A>(datasets: ReadonlyArray<Dataset<A>>): Dataset<A> {
    return new Dataset<A>(
      datasets[0]!.runtime,
      Effect.map(
        Effect.forEach(datasets, (dataset) => dataset.lineage),
        (lineages) => Lineage.combine(lineages, lineages.flatMap((lineage) => lineage.plans))
      ),
      { kind: "UnionDataset", operation: "union", narrow: datasets as ReadonlyArray<Dataset<unknown>>, shuffled: [] }
    )
  }

  /**
   * Random samples that split the records by `weights` (normalized to sum to 1; Spark's `randomSplit`): each
   * record is in exactly one, and the same seed gives the same split, Spark's.
   *
   * @since 0.1.0
   */
  randomSplit(weights: ReadonlyArray<number>, seed: number = randomSeed()): Array<Dataset<A>> {
    const total = weights.reduce((sum, weight) => sum + weight, 0)
    if (weights.length === 0 || weights.some((weight) => !(weight >= 0)) || !(total > 0)) {
      throw new InvalidArgument({
        reason: `randomSplit: the weights must be non-negative, and not all 0; got [${weights.join(", ")}]`
      })
    }
    const invalid = badSeed(seed, "randomSplit")
    if (invalid) throw invalid
    let lowerBound = 0
    return weights.map((weight, i) => {
      const lower = lowerBound
      // The last range ends at 1 itself, so that no record falls past the sum's rounding.
      const upper = i === weights.length - 1 ? 1 : lower + weight / total
      lowerBound = upper
      return this.derive<A>("randomSplit", (child, partition) => ({
        _tag: "Sample",
        withReplacement: false,
        fraction: upper,
        lowerBound: lower,
        seed,
        partition,
        child
      }))
    })
  }

  /**
   * Each record paired with the record at the same place of `other` (Spark's `zip`): the two must have as many
   * partitions, and as many records in each, or the job fails.
   *
   * @since 0.1.0
   */
  zip<B>(other: Dataset<B>): Dataset<[A, B]> {
    return this.zipped(other, Builtins.zip, "zip")
  }

  /**
   * `f(records of a partition here, records of the same partition of other, env)` for each partition (Spark's
   * `zipPartitions`): the two must have as many partitions.
   *
   * @since 0.1.0
   */
  zipPartitions<B, R, E = undefined>(
    other: Dataset<B>,
    f: (mine: Iterable<A>, theirs: Iterable<B>, env: E) => Iterable<R>,
    env?: E
  ): Dataset<R> {
    return this.zipped(other, this.ref(f, env, "zipPartitions"), "zipPartitions")
  }

  private zipped<R>(other: Dataset<unknown>, fn: FunctionRef, operation: string): Dataset<R> {
    return new Dataset<R>(
      this.runtime,
      Effect.flatMap(
        Effect.all([this.lineage, other.lineage]),
        ([mine, theirs]) =>
          mine.plans.length === theirs.plans.length
            ? Effect.succeed(
              Lineage.combine(
                [mine, theirs],
                mine.plans.map((plan, i) => ({
                  _tag: "ZipPartitions" as const,
                  fn,
                  children: [plan, theirs.plans[i]!]
                }))
              )
            )
            : Effect.fail(
              new JobFailed({
                reason: `${operation}: datasets of unequal numbers of partitions (${mine.plans.length} and ` +
                  `${theirs.plans.length}) cannot be zipped`
              })
            )
      ),
      { kind: "ZippedPartitionsDataset", operation, narrow: [this, other] as Array<Dataset<unknown>>, shuffled: [] }
    )
  }

  /** Each partition's records as one array. @since 0.1.0 */
  glom(): Dataset<Array<A>> {
    return this.derive("glom", (child) => ({ _tag: "Glom", child }))
  }

  /**
   * A random sample: without replacement each record is kept with probability `fraction`; with replacement it
   * appears a Poisson(`fraction`) number of times. The same seed gives the same sample, and the sample Spark's
   * `RDD.sample` draws from the same records in the same partitions (its generators and samplers).
   *
   * @since 0.1.0
   */
  sample(withReplacement: boolean, fraction: number, seed: number = randomSeed()): Dataset<A> {
    if (!(fraction >= 0) || (!withReplacement && fraction > 1)) {
      throw new InvalidArgument({
        reason: `sample: the fraction must be ${withReplacement ? "≥ 0" : "in [0, 1]"}, got ${fraction}`
      })
    }
    const invalid = badSeed(seed, "sample")
    if (invalid) throw invalid
    return this.derive<A>("sample", (child, partition) => ({
      _tag: "Sample",
      withReplacement,
      fraction,
      seed,
      partition,
      child
    })).withFields(this.recordFields)
  }

  /**
   * Each record with its index in the dataset, `[record, index]`: partition 0's records first. Needs the sizes
   * of all partitions but the last, so its first use runs a job to count them, once.
   *
   * @since 0.1.0
   */
  zipWithIndex(): Dataset<[A, number]> {
    return new Dataset(this.runtime, Lineage.once(Partitions.indexed(this)), {
      kind: "ZippedWithIndexDataset",
      operation: "zipWithIndex",
      narrow: [this as Dataset<unknown>],
      shuffled: []
    })
  }

  // ---- actions ------------------------------------------------------------------------------------------------

  /** Every record, in partition order. @since 0.1.0 */
  collect(): Effect.Effect<Array<A>, DatasetError> {
    return this.action(
      "collect",
      Effect.map(
        Actions.run(this, () => ({ _tag: "Collect" }), "collect"),
        (parts) => (parts as Array<Array<A>>).flat()
      )
    )
  }

  /** @since 0.1.0 */
  count(): Effect.Effect<number, DatasetError> {
    return this.action(
      "count",
      Effect.map(
        Actions.run(this, () => ({ _tag: "Count" }), "count"),
        (counts) => (counts as Array<number>).reduce((a, b) => a + b, 0)
      )
    )
  }

  /** Combines the records with `f`, which must be associative and commutative. @since 0.1.0 */
  reduce<E = undefined>(f: (a: A, b: A, env: E) => A, env?: E): Effect.Effect<A, DatasetError | EmptyDataset> {
    const fn = this.ref(f, env, "reduce")
    return this.action(
      "reduce",
      Effect.flatMap(Actions.run(this, () => ({ _tag: "Reduce", fn }), "reduce"), (parts) => {
        const values = (parts as Array<Array<A>>).flat()
        if (values.length === 0) return Effect.fail(new EmptyDataset({ action: "reduce" }))
        return Effect.sync(() => values.reduce((a, b) => f(a, b, env as E)))
      })
    )
  }

  /** Folds each partition from `zero`, then the partitions' results from `zero`, with `f`. @since 0.1.0 */
  fold<E = undefined>(zero: A, f: (a: A, b: A, env: E) => A, env?: E): Effect.Effect<A, DatasetError> {
    const fn = this.ref(f, env, "fold")
    return this.action(
      "fold",
      Effect.map(
        Actions.run(this, () => ({ _tag: "Fold", zero, fn }), "fold"),
        (parts) => (parts as Array<A>).reduce((acc, part) => f(acc, part, env as E), structuredClone(zero))
      )
    )
  }

  /**
   * Folds each partition with `seqOp` from `zero`, then merges the partitions' results with `combOp` (on the
   * driver) from `zero`.
   *
   * @since 0.1.0
   */
  aggregate<U, E = undefined>(
    zero: U,
    seqOp: (acc: U, record: A, env: E) => U,
    combOp: (a: U, b: U, env: E) => U,
    env?: E
  ): Effect.Effect<U, DatasetError> {
    const fn = this.ref(seqOp, env, "aggregate")
    return this.action(
      "aggregate",
      Effect.map(
        Actions.run(this, () => ({ _tag: "Aggregate", zero, seqOp: fn }), "aggregate"),
        (parts) => (parts as Array<U>).reduce((acc, part) => combOp(acc, part, env as E), structuredClone(zero))
      )
    )
  }

  /**
   * `aggregate` in a tree (Spark's `treeAggregate`): each partition folded with `seqOp` from `zero`, then the
   * partitions' results merged with `combOp` on the executors, level after level (`depth` levels at most), so
   * that the driver merges a few rather than one per partition. The same answer as `aggregate`'s.
   *
   * @since 0.1.0
   */
  treeAggregate<U, E = undefined>(
    zero: U,
    seqOp: (acc: U, record: A, env: E) => U,
    combOp: (a: U, b: U, env: E) => U,
    depth = 2,
    env?: E
  ): Effect.Effect<U, DatasetError | InvalidArgument> {
    if (!validDepth(depth)) return Effect.fail(badDepth(depth))
    const fold = this.ref(seqOp, env, "treeAggregate")
    const folded = this.derive<U>("treeAggregate", (child) => ({ _tag: "FoldPartition", zero, fn: fold, child }))
    return this.action(
      "treeAggregate",
      Effect.flatMap(
        this.treeLevels(folded, depth, (level, n) => level.foldByKey(zero, combOp, env, n)),
        (top) => top.fold(zero, combOp, env)
      )
    )
  }

  /**
   * `reduce` in a tree (Spark's `treeReduce`), as `treeAggregate` folds: the same answer as `reduce`'s.
   *
   * @since 0.1.0
   */
  treeReduce<E = undefined>(
    f: (a: A, b: A, env: E) => A,
    depth = 2,
    env?: E
  ): Effect.Effect<A, DatasetError | EmptyDataset | InvalidArgument> {
    if (!validDepth(depth)) return Effect.fail(badDepth(depth))
    const fn = this.ref(f, env, "treeReduce")
    const reduced = this.derive<A>("treeReduce", (child) => ({ _tag: "ReducePartition", fn, child }))
    return this.action(
      "treeReduce",
      Effect.flatMap(
        this.treeLevels(reduced, depth, (level, n) => level.reduceByKey(f, env, n)),
        (top) => top.reduce(f, env)
      )
    )
  }

  // The levels of a tree aggregation over one value per partition: while a level saves the driver enough merges,
  // the values are merged by partition index modulo a scale (`depth` levels in all, as Spark's).
  private treeLevels<U>(
    partial: Dataset<U>,
    depth: number,
    merge: (keyed: Dataset<readonly [number, U]>, numPartitions: number) => Dataset<[number, U]>
  ): Effect.Effect<Dataset<U>, DatasetError> {
    return Effect.map(partial.numPartitions, (partitions) => {
      const scale = Math.max(Math.ceil(partitions ** (1 / depth)), 2)
      let level = partial
      let n = partitions
      while (n > scale + Math.ceil(n / scale)) {
        n = Math.floor(n / scale)
        const keyed = level.derive<readonly [number, U]>("treeAggregate", (child, partition) => ({
          _tag: "MapPartitionsWithIndex",
          fn: Builtins.keyedByPartition(n),
          partition,
          child
        }))
        level = merge(keyed, n).values()
      }
      return level
    })
  }

  /** How many partitions it has, as Spark's `getNumPartitions`. @since 0.1.0 */
  getNumPartitions(): Effect.Effect<number, DatasetError> {
    return CallSites.action("getNumPartitions", this.numPartitions, this.runtime.unrun)
  }

  /** Whether it has no record: no partition, or none where `take(1)` looks (Spark's `isEmpty`). @since 0.1.0 */
  isEmpty(): Effect.Effect<boolean, DatasetError> {
    return this.action(
      "isEmpty",
      Effect.flatMap(
        this.numPartitions,
        (n) => (n === 0 ? Effect.succeed(true) : Effect.map(this.take(1), (records) => records.length === 0))
      )
    )
  }

  /**
   * The pairs as a `Map`; of a key's several values, the last in partition order, as Spark's `collectAsMap`. Keys
   * are compared as a `Map` compares them: primitives by value, arrays and objects by identity.
   *
   * @since 0.1.0
   */
  collectAsMap<K, V>(this: Dataset<readonly [K, V]>): Effect.Effect<Map<K, V>, DatasetError> {
    return Effect.map(this.collect(), (pairs) => new Map(pairs))
  }

  /** The sum of the numbers; 0 of none. @since 0.1.0 */
  sum(this: Dataset<number>): Effect.Effect<number, DatasetError> {
    return this.action(
      "sum",
      Effect.map(
        Actions.run(this, () => ({ _tag: "Fold", zero: 0, fn: Builtins.sum }), "sum"),
        (parts) => (parts as Array<number>).reduce((a, b) => a + b, 0)
      )
    )
  }

  /** The greatest number (NaN is the greatest, as in Spark). @since 0.1.0 */
  max(this: Dataset<number>): Effect.Effect<number, DatasetError | EmptyDataset> {
    return this.extreme("max", NumericActions.greater)
  }

  /** The least number. @since 0.1.0 */
  min(this: Dataset<number>): Effect.Effect<number, DatasetError | EmptyDataset> {
    return this.extreme("min", NumericActions.lesser)
  }

  private extreme(
    this: Dataset<number>,
    action: string,
    pick: { readonly ref: FunctionRef; readonly f: (a: number, b: number) => number }
  ): Effect.Effect<number, DatasetError | EmptyDataset> {
    return this.action(
      "extreme",
      Effect.flatMap(Actions.run(this, () => ({ _tag: "Reduce", fn: pick.ref }), action), (parts) => {
        const values = (parts as Array<Array<number>>).flat()
        return values.length === 0 ? Effect.fail(new EmptyDataset({ action })) : Effect.succeed(values.reduce(pick.f))
      })
    )
  }

  /**
   * Count, mean, sum, extremes and variances of the numbers in one job, as Spark's `stats` (its `StatCounter`;
   * of no number, a mean of 0 and variances NaN).
   *
   * @since 0.1.0
   */
  stats(this: Dataset<number>): Effect.Effect<Stats, DatasetError> {
    return this.action(
      "stats",
      Effect.map(
        Actions.run(
          this,
          () => ({ _tag: "Aggregate", zero: NumericActions.emptyCounter, seqOp: NumericActions.add.ref }),
          "stats"
        ),
        (parts) =>
          NumericActions.stats(
            (parts as Array<NumericActions.Counter>).reduce(NumericActions.merge, NumericActions.emptyCounter)
          )
      )
    )
  }

  /** The mean of the numbers; 0 of none, as Spark's. @since 0.1.0 */
  mean(this: Dataset<number>): Effect.Effect<number, DatasetError> {
    return Effect.map(this.stats(), (stats) => stats.mean)
  }

  /**
   * How many numbers fall in each bucket (PySpark's `histogram`): `buckets` is a count of evenly spaced buckets
   * between the least and greatest number, or their bounds, increasing. A number in `[bound i, bound i+1)` counts
   * in bucket i, the last bucket closed; NaN and numbers outside the bounds are not counted. Gives the bounds and
   * the counts. A count of buckets over no number, or over infinite ones, fails.
   *
   * @since 0.1.0
   */
  histogram(
    this: Dataset<number>,
    buckets: number | ReadonlyArray<number>
  ): Effect.Effect<[Array<number>, Array<number>], DatasetError | EmptyDataset | InvalidArgument> {
    const counted = (chosen: NumericActions.Buckets) =>
      Effect.map(
        Actions.run(this, () => ({
          _tag: "Aggregate",
          zero: Array.from({ length: chosen.bounds.length - 1 }, () => 0),
          seqOp: { ...NumericActions.countBuckets.ref, env: chosen }
        }), "histogram"),
        (parts): [Array<number>, Array<number>] => [
          [...chosen.bounds],
          (parts as Array<Array<number>>).reduce((sum, part) => sum.map((n, i) => n + part[i]!))
        ]
      )
    if (typeof buckets !== "number") {
      const chosen = NumericActions.bucketsOf(buckets)
      if (typeof chosen === "string") return Effect.fail(new InvalidArgument({ reason: `histogram: ${chosen}` }))
      return this.action("histogram", counted(chosen))
    }
    if (!Number.isSafeInteger(buckets) || buckets < 1) {
      return Effect.fail(
        new InvalidArgument({ reason: `histogram: the number of buckets must be ≥ 1, got ${buckets}` })
      )
    }
    const numbers = this.filter((x: number) => typeof x === "number" && !Number.isNaN(x))
    return this.action(
      "histogram",
      Effect.flatMap(numbers.stats(), ({ count, max, min }): Effect.Effect<
        [Array<number>, Array<number>],
        DatasetError | EmptyDataset | InvalidArgument
      > => {
        if (count === 0) return Effect.fail(new EmptyDataset({ action: "histogram" }))
        if (!Number.isFinite(min) || !Number.isFinite(max)) {
          return Effect.fail(new InvalidArgument({ reason: "histogram: cannot make buckets of infinite numbers" }))
        }
        // One bucket, or one value: all the numbers in one bucket, as PySpark answers.
        if (min === max || buckets === 1) return Effect.succeed([[min, max], [count]])
        return counted(NumericActions.evenBuckets(min, max, buckets))
      })
    )
  }

  /**
   * The first `n` records, reading as few partitions as it can: one first, then four times as many as it has
   * read each round, or as many as the records found so far suggest (Spark's `take`).
   *
   * @since 0.1.0
   */
  take(n: number): Effect.Effect<Array<A>, DatasetError> {
    return this.action("take", Actions.take(this, n))
  }

  /**
   * `num` records drawn at random (Spark's `takeSample`): without replacement, distinct records, all of them
   * (shuffled) when there are no more than `num`; with replacement, a record may come more than once. It counts
   * the records, then samples a fraction that gives `num` with very high probability (again in the rare case it
   * does not). The same seed gives the same records, those Spark's `RDD.takeSample` gives, in the same order.
   *
   * @since 0.1.0
   */
  takeSample(
    withReplacement: boolean,
    num: number,
    seed: number = randomSeed()
  ): Effect.Effect<Array<A>, DatasetError | InvalidArgument> {
    if (!Number.isSafeInteger(num) || num < 0) {
      return Effect.fail(new InvalidArgument({ reason: `takeSample: the number of records must be ≥ 0, got ${num}` }))
    }
    const invalid = badSeed(seed, "takeSample")
    if (invalid) return Effect.fail(invalid)
    // Made when they run: one made and never run would stay among the app's unrun actions for as long as it runs.
    const count = () => this.count()
    const collect = () => this.collect()
    const sample = (fraction: number, seed: number) => this.sample(withReplacement, fraction, seed).collect()
    return this.action(
      "takeSample",
      Effect.gen(function*() {
        if (num === 0) return []
        const total = yield* count()
        if (total === 0) return []
        // As Spark's: the seeds of its samples and its shuffle drawn from java.util.Random(seed), on each run.
        const random = new SparkRandom.JavaRandom(seed)
        if (!withReplacement && num >= total) return Sampling.shuffle(yield* collect(), random)
        const fraction = Sampling.fractionFor(num, total, withReplacement)
        // Short one time in ten thousand: drawn again then (with the generator's next seed), a bounded number of
        // times where Spark's tries for ever.
        for (let attempt = 0; attempt < 100; attempt++) {
          const drawn = yield* sample(fraction, random.nextInt())
          if (drawn.length >= num) return Sampling.shuffle(drawn, random).slice(0, num)
        }
        return yield* new JobFailed({ reason: `takeSample: 100 samples of ${total} records all had fewer than ${num}` })
      })
    )
  }

  /** @since 0.1.0 */
  first(): Effect.Effect<A, DatasetError | EmptyDataset> {
    return Effect.flatMap(
      this.take(1),
      (records) =>
        records.length === 0 ? Effect.fail(new EmptyDataset({ action: "first" })) : Effect.succeed(records[0]!)
    )
  }

  /** Calls `f` on every record, on the executors. @since 0.1.0 */
  foreach<E = undefined>(f: (record: A, env: E) => void, env?: E): Effect.Effect<void, DatasetError> {
    const fn = this.ref(f, env, "foreach")
    return this.action("foreach", Effect.asVoid(Actions.run(this, () => ({ _tag: "Foreach", fn }), "foreach")))
  }

  /** Calls `f` once per partition with its records, on the executors. @since 0.1.0 */
  foreachPartition<E = undefined>(
    f: (records: Iterable<A>, env: E) => void,
    env?: E
  ): Effect.Effect<void, DatasetError> {
    const fn = this.ref(f, env, "foreachPartition")
    return this.action(
      "foreachPartition",
      Effect.asVoid(Actions.run(this, () => ({ _tag: "ForeachPartition", fn }), "foreachPartition"))
    )
  }

  /**
   * Writes the records, one per line (strings as they are, objects as JSON), to `dir/part-00000`, … — one file
   * per partition — then `dir/_SUCCESS`. The directory must not exist. What the driver cannot do to the
   * directory (make it, finish it) is `OutputNotWritable`; a part an executor cannot write fails its task, and
   * the job (`JobFailed`) says which file and why.
   *
   * @since 0.1.0
   */
  saveAsTextFile(dir: string): Effect.Effect<void, DatasetError | OutputDirectoryExists | OutputNotWritable> {
    return this.action(
      "saveAsTextFile",
      FileOutput.save(this, dir, { format: { _tag: "Text" }, mode: "error", extension: "", plainNames: true })
    )
  }

  // ---- persistence ----------------------------------------------------------------------------------------------

  /**
   * Keeps its partitions, once computed, on the executors that computed them, for later jobs (`level` defaults
   * to `MEMORY_ONLY`); a partition that is lost (its executor died) or was not kept is computed again from its
   * lineage. Returns this dataset.
   *
   * @since 0.1.0
   */
  persist(level: StorageLevel = "MEMORY_ONLY"): this {
    if (this.storage !== undefined && this.storage !== level) {
      throw new InvalidArgument({
        reason: `persist: dataset ${this.id} is persisted at ${this.storage} already; unpersist it first`
      })
    }
    this.storage = level
    return this
  }

  /** `persist("MEMORY_ONLY")`. @since 0.1.0 */
  cache(): this {
    return this.persist("MEMORY_ONLY")
  }

  /** Drops its persisted partitions; later jobs compute them again. @since 0.1.0 */
  unpersist(): Effect.Effect<this> {
    return Effect.suspend(() => {
      if (this.storage === undefined) return Effect.succeed(this)
      this.storage = undefined
      return Effect.as(this.runtime.unpersist(this.id), this)
    })
  }

  /**
   * Marks it to be checkpointed (Spark's `checkpoint`): after the next action that computes it, its partitions are
   * saved in the app's checkpoint directory (`kc.setCheckpointDir`, which must be set first), and later jobs read
   * them from there rather than computing its lineage again — what a long iterative lineage needs. Persist it too,
   * or the saving computes it once more. On a cluster the directory must be one every executor and the driver
   * share.
   *
   * @since 0.1.0
   */
  checkpoint(): void {
    if (this.runtime.checkpoints.dir === undefined) {
      throw new InvalidArgument({
        reason: "checkpoint: the checkpoint directory has not been set: call kc.setCheckpointDir(dir) first"
      })
    }
    this.checkpointState ??= { _tag: "Requested" }
  }

  /** Whether it is checkpointed: written, and read from its checkpoint. @since 0.1.0 */
  get isCheckpointed(): boolean {
    return this.checkpointState?._tag === "Written"
  }

  /** The folder of its checkpoint, once written. @since 0.1.0 */
  get checkpointFile(): string | undefined {
    return this.checkpointState?._tag === "Written" ? this.checkpointState.dir : undefined
  }

  /** @internal Marked for checkpointing, and not written yet. */
  get checkpointRequested(): boolean {
    return this.checkpointState?._tag === "Requested"
  }

  /** @internal Its checkpoint is written, in `partitions` files in `dir`: its lineage ends there. */
  checkpointed(dir: string, partitions: number): void {
    this.checkpointState = { _tag: "Written", dir }
    this.computed = Effect.succeed(Lineage.fromPlans(Array.from({ length: partitions }, (_, partition) => ({
      _tag: "RecordFile" as const,
      path: FilePaths.join(dir, PartFiles.partFile(partition))
    }))))
  }

  /** Names it, for the UI's Storage tab and `toDebugString` (Spark's `setName`); returns this dataset. @since 0.1.0 */
  setName(name: string): this {
    this.label = name
    return this
  }

  /** The name `setName` gave it, if any. @since 0.1.0 */
  get name(): string | undefined {
    return this.label
  }

  /** How it is persisted, if it is. @since 0.1.0 */
  get storageLevel(): StorageLevel | undefined {
    return this.storage
  }

  // ---- shuffles -------------------------------------------------------------------------------------------------

  // A dataset over a new shuffle of this one's records.
  private shuffle<B>(options: Shuffles.Options): Dataset<B> {
    return new Dataset<B>(
      this.runtime,
      Shuffles.shuffled(this, options),
      { kind: "ShuffledDataset", operation: options.operation, narrow: [], shuffled: [this as Dataset<unknown>] },
      options.partitioned
    )
  }

  /** @internal The number of partitions its pairs are hash-partitioned into, if they are. */
  get hashPartitions(): Effect.Effect<number | undefined, DatasetError> {
    return this.hashPartitioned ? this.numPartitions : Effect.succeed(undefined)
  }

  /**
   * Combines the values of each key (Spark's `combineByKey`): `createCombiner` makes a key's first value its
   * combiner, `mergeValue` adds a value to one, `mergeCombiners` merges two made apart. Values are combined on
   * the map side before the shuffle, then per key on the reduce side.
   *
   * @since 0.1.0
   */
  combineByKey<K, V, C, E = undefined>(
    this: Dataset<readonly [K, V]>,
    createCombiner: (value: V, env: E) => C,
    mergeValue: (combiner: C, value: V, env: E) => C,
    mergeCombiners: (a: C, b: C, env: E) => C,
    env?: E,
    numPartitions?: number
  ): Dataset<[K, C]> {
    return this.aggregated("combineByKey", {
      createCombiner: this.ref(createCombiner, env, "combineByKey"),
      mergeValue: this.ref(mergeValue, env, "combineByKey"),
      mergeCombiners: this.ref(mergeCombiners, env, "combineByKey")
    }, numPartitions)
  }

  private aggregated<B>(operation: string, aggregator: Aggregator, numPartitions: number | undefined): Dataset<B> {
    return this.shuffle<B>({
      operation,
      numPartitions,
      partitioner: () => Effect.succeed({ _tag: "Hash" }),
      combine: aggregator,
      read: { _tag: "Merge", mergeCombiners: aggregator.mergeCombiners },
      partitioned: true
    })
  }

  /** Merges the values of each key with `f`, associative and commutative. @since 0.1.0 */
  reduceByKey<K, V, E = undefined>(
    this: Dataset<readonly [K, V]>,
    f: (a: V, b: V, env: E) => V,
    env?: E,
    numPartitions?: number
  ): Dataset<[K, V]> {
    const fn = this.ref(f, env, "reduceByKey")
    return this.aggregated(
      "reduceByKey",
      { createCombiner: Builtins.identity, mergeValue: fn, mergeCombiners: fn },
      numPartitions
    )
  }

  /** Folds the values of each key from (a copy of) `zero` with `f`. @since 0.1.0 */
  foldByKey<K, V, E = undefined>(
    this: Dataset<readonly [K, V]>,
    zero: V,
    f: (a: V, b: V, env: E) => V,
    env?: E,
    numPartitions?: number
  ): Dataset<[K, V]> {
    const fn = this.ref(f, env, "foldByKey")
    return this.aggregated("foldByKey", { zero, mergeValue: fn, mergeCombiners: fn }, numPartitions)
  }

  /**
   * Aggregates the values of each key: `seqOp` folds values into (a copy of) `zero` within a partition,
   * `combOp` merges the partial results.
   *
   * @since 0.1.0
   */
  aggregateByKey<K, V, U, E = undefined>(
    this: Dataset<readonly [K, V]>,
    zero: U,
    seqOp: (acc: U, value: V, env: E) => U,
    combOp: (a: U, b: U, env: E) => U,
    env?: E,
    numPartitions?: number
  ): Dataset<[K, U]> {
    return this.aggregated("aggregateByKey", {
      zero,
      mergeValue: this.ref(seqOp, env, "aggregateByKey"),
      mergeCombiners: this.ref(combOp, env, "aggregateByKey")
    }, numPartitions)
  }

  /** The values of each key, in an array (no map-side combining: it would not shrink anything). @since 0.1.0 */
  groupByKey<K, V>(this: Dataset<readonly [K, V]>, numPartitions?: number): Dataset<[K, Array<V>]> {
    return this.shuffle({
      operation: "groupByKey",
      numPartitions,
      partitioner: () => Effect.succeed({ _tag: "Hash" }),
      read: { _tag: "Combine", aggregator: Builtins.grouping },
      partitioned: true
    })
  }

  /** The pairs, hash-partitioned by key into `numPartitions` partitions. @since 0.1.0 */
  partitionBy<K, V>(this: Dataset<readonly [K, V]>, numPartitions: number): Dataset<[K, V]> {
    return this.shuffle({
      operation: "partitionBy",
      numPartitions,
      partitioner: () => Effect.succeed({ _tag: "Hash" }),
      read: { _tag: "Records" },
      partitioned: true
    })
  }

  /**
   * The pairs sorted by key (structural order): a range partitioner cuts the keys into `numPartitions` ranges
   * (bounds drawn from a sample, which takes a job the first time), each partition sorted.
   *
   * @since 0.1.0
   */
  sortByKey<K, V>(this: Dataset<readonly [K, V]>, ascending = true, numPartitions?: number): Dataset<[K, V]> {
    const partitioner = Lineage.once(Effect.suspend(() => RangePartitioner.rangeBounds(this, ascending, numPartitions)))
    return this.shuffle({
      operation: "sortByKey",
      numPartitions,
      partitioner: () => partitioner,
      read: { _tag: "Sort", ascending },
      partitioned: false
    })
  }

  /** The records sorted by `f(record)`, as `sortByKey` sorts keys. @since 0.1.0 */
  sortBy<K, E = undefined>(f: (record: A, env: E) => K, ascending = true, numPartitions?: number, env?: E): Dataset<A> {
    return this.keyBy(f, env).sortByKey(ascending, numPartitions).values()
  }

  /**
   * The records in `numPartitions` partitions, dealt round-robin through a shuffle (Spark's
   * `repartition`).
   *
   * @since 0.1.0
   */
  repartition(numPartitions: number): Dataset<A> {
    return this.shuffle<A>({
      operation: "repartition",
      numPartitions,
      partitioner: () => Effect.succeed({ _tag: "RoundRobin" }),
      read: { _tag: "Records" },
      partitioned: false
    }).withFields(this.recordFields)
  }

  /**
   * At most `numPartitions` partitions: consecutive partitions merged without a shuffle, or with one (as
   * `repartition`) when `shuffle` is true, which can also make more partitions.
   *
   * @since 0.1.0
   */
  coalesce(numPartitions: number, shuffle = false): Dataset<A> {
    Partitions.checkPartitions(numPartitions, "coalesce")
    if (shuffle) return this.repartition(numPartitions)
    return new Dataset<A>(
      this.runtime,
      Effect.map(this.lineage, (lineage) => Partitions.coalesced(lineage, numPartitions)),
      { kind: "CoalescedDataset", operation: "coalesce", narrow: [this as Dataset<unknown>], shuffled: [] }
    ).withFields(this.recordFields)
  }

  /**
   * For each key of this dataset or the others, its values in each (`[key, [values here, values in other, …]]`).
   * A dataset hash-partitioned the same way already is read in place; the others are shuffled.
   *
   * @since 0.1.0
   */
  cogroup<K, V, W>(
    this: Dataset<readonly [K, V]>,
    other: Dataset<readonly [K, W]>,
    numPartitions?: number
  ): Dataset<[K, [Array<V>, Array<W>]]> {
    return Dataset.cogroupAll<K>(
      [this, other] as Array<Dataset<readonly [K, unknown]>>,
      "cogroup",
      numPartitions
    ) as never
  }

  private static cogroupAll<K>(
    datasets: ReadonlyArray<Dataset<readonly [K, unknown]>>,
    operation: string,
    numPartitions: number | undefined
  ): Dataset<[K, Array<Array<unknown>>]> {
    const computed = Shuffles.cogrouped(datasets, operation, numPartitions)
    // As the debug string shows it: hash-partitioned inputs are taken to be read in place (they are, unless their
    // partition count differs from the cogroup's).
    const narrow = datasets.filter((dataset) => dataset.hashPartitioned)
    return new Dataset<[K, Array<Array<unknown>>]>(
      datasets[0]!.runtime,
      computed,
      {
        kind: "CoGroupedDataset",
        operation,
        narrow: narrow as Array<Dataset<unknown>>,
        shuffled: datasets.filter((dataset) => !narrow.includes(dataset)) as Array<Dataset<unknown>>
      },
      true
    )
  }

  private joinWith<K, V, W, R>(
    other: Dataset<readonly [K, W]>,
    operation: string,
    outer: { readonly left: boolean; readonly right: boolean },
    numPartitions: number | undefined
  ): Dataset<[K, R]> {
    const grouped = Dataset.cogroupAll<K>(
      [this as unknown as Dataset<readonly [K, V]>, other] as Array<Dataset<readonly [K, unknown]>>,
      operation,
      numPartitions
    )
    return grouped.flatMapValuesWith(Builtins.joined(outer), operation)
  }

  private flatMapValuesWith<B>(fn: FunctionRef, operation: string): Dataset<B> {
    return this.derive(operation, (child) => ({ _tag: "FlatMapValues", fn, child }), true)
  }

  /** For each key in both, every pair of its values: `[key, [v, w]]`. @since 0.1.0 */
  join<K, V, W>(
    this: Dataset<readonly [K, V]>,
    other: Dataset<readonly [K, W]>,
    numPartitions?: number
  ): Dataset<[K, [V, W]]> {
    return this.joinWith(other, "join", { left: false, right: false }, numPartitions)
  }

  /** As `join`, and the keys only here with `undefined` for `w`. @since 0.1.0 */
  leftOuterJoin<K, V, W>(
    this: Dataset<readonly [K, V]>,
    other: Dataset<readonly [K, W]>,
    numPartitions?: number
  ): Dataset<[K, [V, W | undefined]]> {
    return this.joinWith(other, "leftOuterJoin", { left: true, right: false }, numPartitions)
  }

  /** As `join`, and the keys only in `other` with `undefined` for `v`. @since 0.1.0 */
  rightOuterJoin<K, V, W>(
    this: Dataset<readonly [K, V]>,
    other: Dataset<readonly [K, W]>,
    numPartitions?: number
  ): Dataset<[K, [V | undefined, W]]> {
    return this.joinWith(other, "rightOuterJoin", { left: false, right: true }, numPartitions)
  }

  /** As `join`, with the keys of either side only, paired with `undefined`. @since 0.1.0 */
  fullOuterJoin<K, V, W>(
    this: Dataset<readonly [K, V]>,
    other: Dataset<readonly [K, W]>,
    numPartitions?: number
  ): Dataset<[K, [V | undefined, W | undefined]]> {
    return this.joinWith(other, "fullOuterJoin", { left: true, right: true }, numPartitions)
  }

  /** `f` applied to each value; keys (and the partitioning) stay. @since 0.1.0 */
  mapValues<K, V, B, E = undefined>(
    this: Dataset<readonly [K, V]>,
    f: (value: V, env: E) => B,
    env?: E
  ): Dataset<[K, B]> {
    const fn = this.ref(f, env, "mapValues")
    return this.derive("mapValues", (child) => ({ _tag: "MapValues", fn, child }), true)
  }

  /** `[key, b]` for each `b` of `f(value)`; keys (and the partitioning) stay. @since 0.1.0 */
  flatMapValues<K, V, B, E = undefined>(
    this: Dataset<readonly [K, V]>,
    f: (value: V, env: E) => Iterable<B>,
    env?: E
  ): Dataset<[K, B]> {
    return this.flatMapValuesWith(this.ref(f, env, "flatMapValues"), "flatMapValues")
  }

  /** The keys. @since 0.1.0 */
  keys<K, V>(this: Dataset<readonly [K, V]>): Dataset<K> {
    return this.derive("keys", (child) => ({ _tag: "Map", fn: Builtins.key, child }))
  }

  /** The values. @since 0.1.0 */
  values<K, V>(this: Dataset<readonly [K, V]>): Dataset<V> {
    return this.derive("values", (child) => ({ _tag: "Map", fn: Builtins.value, child }))
  }

  /** Each record as `[f(record), record]`. @since 0.1.0 */
  keyBy<K, E = undefined>(f: (record: A, env: E) => K, env?: E): Dataset<[K, A]> {
    const fn = this.ref(f, env, "keyBy")
    return this.derive("keyBy", (child) => ({ _tag: "KeyBy", fn, child }))
  }

  /** The records grouped by `f(record)`: `[key, records]`. @since 0.1.0 */
  groupBy<K, E = undefined>(f: (record: A, env: E) => K, env?: E, numPartitions?: number): Dataset<[K, Array<A>]> {
    return this.keyBy(f, env).groupByKey(numPartitions)
  }

  /** Each distinct record once (records must be valid keys). @since 0.1.0 */
  distinct(numPartitions?: number): Dataset<A> {
    return this.derive<readonly [A, null]>("distinct", (child) => ({ _tag: "Map", fn: Builtins.withNull, child }))
      .aggregated<[A, null]>(
        "distinct",
        { createCombiner: Builtins.identity, mergeValue: Builtins.keepFirst, mergeCombiners: Builtins.keepFirst },
        numPartitions
      )
      .keys()
      .withFields(this.recordFields)
  }

  /** The distinct records found in both (records must be valid keys). @since 0.1.0 */
  intersection(other: Dataset<A>, numPartitions?: number): Dataset<A> {
    const pairs = (dataset: Dataset<A>) =>
      dataset.derive<readonly [A, null]>("intersection", (child) => ({ _tag: "Map", fn: Builtins.withNull, child }))
    return Dataset.cogroupAll<A>([pairs(this), pairs(other)], "intersection", numPartitions)
      .derive<[A, unknown]>("intersection", (child) => ({ _tag: "Filter", fn: Builtins.inAll, child }))
      .keys()
  }

  /** The records of this one not found in `other`, duplicates kept (records must be valid keys). @since 0.1.0 */
  subtract(other: Dataset<A>, numPartitions?: number): Dataset<A> {
    const pairs = (dataset: Dataset<A>) =>
      dataset.derive<readonly [A, null]>("subtract", (child) => ({ _tag: "Map", fn: Builtins.withNull, child }))
    return Dataset.cogroupAll<A>([pairs(this), pairs(other)], "subtract", numPartitions)
      .derive<A>("subtract", (child) => ({ _tag: "FlatMap", fn: Builtins.onlyLeft, child }))
  }

  /** The pairs whose key `other` does not have (Spark's `subtractByKey`). @since 0.1.0 */
  subtractByKey<K, V, W>(
    this: Dataset<readonly [K, V]>,
    other: Dataset<readonly [K, W]>,
    numPartitions?: number
  ): Dataset<[K, V]> {
    return Dataset.cogroupAll<K>(
      [this, other] as Array<Dataset<readonly [K, unknown]>>,
      "subtractByKey",
      numPartitions
    ).flatMapValuesWith(Builtins.leftWithoutRight, "subtractByKey")
  }

  /** Every pair `[a, b]` of a record here and one of `other`. @since 0.1.0 */
  cartesian<B>(other: Dataset<B>): Dataset<[A, B]> {
    return new Dataset<[A, B]>(
      this.runtime,
      Effect.zipWith(this.lineage, other.lineage, (mine, theirs) =>
        Lineage.combine(
          [mine, theirs],
          mine.plans.flatMap((left) => theirs.plans.map((right): PlanNode => ({ _tag: "Cartesian", left, right })))
        )),
      {
        kind: "CartesianDataset",
        operation: "cartesian",
        narrow: [this, other] as Array<Dataset<unknown>>,
        shuffled: []
      }
    )
  }

  /** How many records each key has. @since 0.1.0 */
  countByKey<K, V>(this: Dataset<readonly [K, V]>): Effect.Effect<Map<K, number>, DatasetError> {
    return Effect.map(
      this.derive<readonly [K, number]>("countByKey", (child) => ({ _tag: "MapValues", fn: Builtins.one, child }))
        .aggregated<[K, number]>(
          "countByKey",
          { createCombiner: Builtins.identity, mergeValue: Builtins.sum, mergeCombiners: Builtins.sum },
          undefined
        )
        .collect(),
      (pairs) => new Map(pairs)
    )
  }

  /** How many times each distinct record occurs. @since 0.1.0 */
  countByValue(): Effect.Effect<Map<A, number>, DatasetError> {
    return this.derive<readonly [A, null]>("countByValue", (child) => ({ _tag: "Map", fn: Builtins.withNull, child }))
      .countByKey()
  }

  /**
   * The values of `key`: when the dataset is hash-partitioned, only the key's partition is read.
   *
   * @since 0.1.0
   */
  lookup<K, V>(this: Dataset<readonly [K, V]>, key: K): Effect.Effect<Array<V>, DatasetError> {
    return this.action("lookup", Actions.lookup(this, key))
  }

  /**
   * The `n` smallest records, sorted: in structural key order, or by `key(record, env)` when given (PySpark's
   * `takeOrdered(n, key)`; the records themselves then need not be keys).
   *
   * @since 0.1.0
   */
  takeOrdered<K, E = undefined>(
    n: number,
    key?: (record: A, env: E) => K,
    env?: E
  ): Effect.Effect<Array<A>, DatasetError> {
    return this.action("takeOrdered", Actions.ordered(this, n, true, "takeOrdered", this.keyedBy(key, env)))
  }

  /** The `n` largest records, largest first: by structural key order, or by `key(record, env)`. @since 0.1.0 */
  top<K, E = undefined>(n: number, key?: (record: A, env: E) => K, env?: E): Effect.Effect<Array<A>, DatasetError> {
    return this.action("top", Actions.ordered(this, n, false, "top", this.keyedBy(key, env)))
  }

  private keyedBy<K, E>(key: ((record: A, env: E) => K) | undefined, env: E | undefined) {
    return key === undefined ? undefined : this.keyBy(key, env) as Dataset<readonly [unknown, A]>
  }

  /**
   * Its lineage as Spark prints it: one line per dataset, `(partitions) Kind[id] at operation [storage]`, the
   * datasets of one stage under each other, a shuffle's map side indented after `+-`.
   *
   * @since 0.1.0
   */
  toDebugString(): Effect.Effect<string, DatasetError> {
    return CallSites.action(
      "toDebugString",
      Effect.map(DebugString.firstLines(this as Dataset<unknown>), (lines) => lines.join("\n")),
      this.runtime.unrun
    )
  }
}
