/**
 * `Dataset<A>`: a distributed collection, Spark's RDD. Transformations are lazy and return a new dataset; they
 * check their function at once (`UserFunctions`). Actions are Effects that run a job and fail with typed errors.
 * A job's tasks evaluate their partition's plan on the executors; a transformation that needs records of other
 * partitions (`reduceByKey`, `join`, `sortByKey`, `repartition`, …) shuffles them, and the DAG scheduler runs the
 * shuffle's map side as a stage of its own first.
 *
 * Keyed operations take datasets of `[key, value]` pairs; keys compare by structure (strings, numbers, bigints,
 * booleans and arrays of those — `Keys` in `@kindling/executor`), anything else as a key fails the job with
 * `InvalidKey`.
 *
 * Every function is called with its ordinary arguments and then the environment given with it, so values from
 * the app travel explicitly: `ds.map((x, env) => x * env.k, { k: 3 })`.
 *
 * @since 0.1.0
 */
import { type Disk, Keys } from "@kindling/executor"
import type { TaskPlan } from "@kindling/protocol"
import * as Effect from "effect/Effect"
import * as Crypto from "node:crypto"
import * as Path from "node:path"
import {
  EmptyDataset,
  type InputNotReadable,
  InvalidArgument,
  type JobFailed,
  OutputDirectoryExists,
  OutputNotWritable
} from "./AppErrors.js"
import * as Builtins from "./Builtins.js"
import type { JobGraph } from "./JobGraph.js"
import * as Lineage from "./Lineage.js"
import type * as UserFunctions from "./UserFunctions.js"

type PlanNode = typeof TaskPlan.PlanNode.Encoded
type FunctionRef = typeof TaskPlan.FunctionRef.Encoded
type ResultOp = typeof TaskPlan.ResultOp.Encoded
type ReadMode = typeof TaskPlan.ReadMode.Encoded
type Aggregator = typeof TaskPlan.Aggregator.Encoded
type CoGroupInput = Extract<PlanNode, { _tag: "CoGroup" }>["inputs"][number]

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
  /** The files its sources read and its output goes to. */
  readonly files: Disk.Files
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

// A fresh seed where the app gives none, as Spark draws one.
const randomSeed = () => Math.floor(Math.random() * 2 ** 31)

// A shuffle's token: random, so that only the app's own executors, told it in their tasks, can name its blocks.
const newToken = () => Crypto.randomBytes(16).toString("hex")

// How many keys a range partitioner samples per reduce partition (Spark's 20, before its 3× oversampling).
const samplesPerPartition = 60

const checkPartitions = (numPartitions: number, operation: string) => {
  if (!Number.isInteger(numPartitions) || numPartitions < 1) {
    throw new InvalidArgument({
      reason: `${operation}: the number of partitions must be a positive integer, got ${numPartitions}`
    })
  }
}

/**
 * @since 0.1.0
 * @category models
 */
export class Dataset<A> {
  /** Its id among the app's datasets. */
  readonly id: number
  private storage: StorageLevel | undefined

  /** @internal */
  constructor(
    /** @internal */
    readonly runtime: Runtime,
    /**
     * What it computes: the plan of each partition and the shuffles they need. Computing it may run a job (the
     * counts of zipWithIndex, a sort's sample) or read a directory (textFile).
     */
    private readonly computed: Effect.Effect<Lineage.Lineage, DatasetError>,
    /** @internal */
    readonly origin: Origin,
    /** Its pairs are hash-partitioned by key into its partitions (it comes out of a shuffle by key). */
    readonly hashPartitioned = false
  ) {
    this.id = runtime.newDatasetId()
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
      return Effect.map(this.computed, (computed) => {
        const lineage = Lineage.withDataset(computed, {
          id: this.id,
          name: this.origin.kind,
          operation: this.origin.operation,
          parentIds: [...this.origin.narrow, ...this.origin.shuffled].map((parent) => parent.id),
          numPartitions: computed.plans.length,
          ...(level === undefined ? {} : { storageLevel: level })
        })
        if (level === undefined) return lineage
        return Lineage.withPlans(
          lineage,
          lineage.plans.map((child, partition) => ({
            _tag: "Cached" as const,
            rddId: this.id,
            partition,
            level,
            child
          }))
        )
      })
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
    return this.derive("filter", (child) => ({ _tag: "Filter", fn, child }), true)
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
    return new Dataset<A>(
      this.runtime,
      Effect.zipWith(
        this.lineage,
        other.lineage,
        (mine, theirs) => Lineage.combine([mine, theirs], [...mine.plans, ...theirs.plans])
      ),
      { kind: "UnionDataset", operation: "union", narrow: [this, other] as Array<Dataset<unknown>>, shuffled: [] }
    )
  }

  /** Each partition's records as one array. @since 0.1.0 */
  glom(): Dataset<Array<A>> {
    return this.derive("glom", (child) => ({ _tag: "Glom", child }))
  }

  /**
   * A random sample: without replacement each record is kept with probability `fraction`; with replacement it
   * appears a Poisson(`fraction`) number of times. The same seed gives the same sample.
   *
   * @since 0.1.0
   */
  sample(withReplacement: boolean, fraction: number, seed: number = randomSeed()): Dataset<A> {
    if (!(fraction >= 0) || (!withReplacement && fraction > 1)) {
      throw new InvalidArgument({
        reason: `sample: the fraction must be ${withReplacement ? "≥ 0" : "in [0, 1]"}, got ${fraction}`
      })
    }
    return this.derive("sample", (child, partition) => ({
      _tag: "Sample",
      withReplacement,
      fraction,
      seed: Math.trunc(seed),
      partition,
      child
    }))
  }

  /**
   * Each record with its index in the dataset, `[record, index]`: partition 0's records first. Needs the sizes
   * of all partitions but the last, so its first use runs a job to count them, once.
   *
   * @since 0.1.0
   */
  zipWithIndex(): Dataset<[A, number]> {
    const counted = Effect.gen(this, function*() {
      const lineage = yield* this.lineage
      const counts = lineage.plans.length <= 1
        ? []
        : yield* this.runJob(
          lineage,
          () => ({ _tag: "Count" }),
          "zipWithIndex",
          lineage.plans.slice(0, -1).map((_, i) => i)
        )
      let offset = 0
      return Lineage.withPlans(
        lineage,
        lineage.plans.map((child, i) => {
          const node: PlanNode = { _tag: "ZipWithIndex", offset, child }
          offset += (counts[i] as number | undefined) ?? 0
          return node
        })
      )
    })
    return new Dataset(this.runtime, Lineage.once(counted), {
      kind: "ZippedWithIndexDataset",
      operation: "zipWithIndex",
      narrow: [this as Dataset<unknown>],
      shuffled: []
    })
  }

  // ---- actions ------------------------------------------------------------------------------------------------

  private runJob(
    lineage: Lineage.Lineage,
    result: (partition: number) => ResultOp,
    action: string,
    partitions?: ReadonlyArray<number>
  ): Effect.Effect<Array<unknown>, JobFailed> {
    const which = partitions ?? lineage.plans.map((_, i) => i)
    return this.runtime.runJob({
      tasks: which.map((i) => Lineage.encodeTask(lineage.plans[i]!, result(i))),
      preferredBlocks: which.map((i) => Lineage.preferredBlock(lineage.plans[i]!)),
      parents: lineage.parents,
      shuffles: lineage.shuffles,
      name: action,
      datasets: lineage.datasets
    })
  }

  private run(result: (partition: number) => ResultOp, action: string, partitions?: ReadonlyArray<number>) {
    return Effect.flatMap(this.lineage, (lineage) => this.runJob(lineage, result, action, partitions))
  }

  /** Every record, in partition order. @since 0.1.0 */
  collect(): Effect.Effect<Array<A>, DatasetError> {
    return Effect.map(this.run(() => ({ _tag: "Collect" }), "collect"), (parts) => (parts as Array<Array<A>>).flat())
  }

  /** @since 0.1.0 */
  count(): Effect.Effect<number, DatasetError> {
    return Effect.map(
      this.run(() => ({ _tag: "Count" }), "count"),
      (counts) => (counts as Array<number>).reduce((a, b) => a + b, 0)
    )
  }

  /** Combines the records with `f`, which must be associative and commutative. @since 0.1.0 */
  reduce<E = undefined>(f: (a: A, b: A, env: E) => A, env?: E): Effect.Effect<A, DatasetError | EmptyDataset> {
    const fn = this.ref(f, env, "reduce")
    return Effect.flatMap(this.run(() => ({ _tag: "Reduce", fn }), "reduce"), (parts) => {
      const values = (parts as Array<Array<A>>).flat()
      if (values.length === 0) return Effect.fail(new EmptyDataset({ action: "reduce" }))
      return Effect.sync(() => values.reduce((a, b) => f(a, b, env as E)))
    })
  }

  /** Folds each partition from `zero`, then the partitions' results from `zero`, with `f`. @since 0.1.0 */
  fold<E = undefined>(zero: A, f: (a: A, b: A, env: E) => A, env?: E): Effect.Effect<A, DatasetError> {
    const fn = this.ref(f, env, "fold")
    return Effect.map(
      this.run(() => ({ _tag: "Fold", zero, fn }), "fold"),
      (parts) => (parts as Array<A>).reduce((acc, part) => f(acc, part, env as E), structuredClone(zero))
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
    return Effect.map(
      this.run(() => ({ _tag: "Aggregate", zero, seqOp: fn }), "aggregate"),
      (parts) => (parts as Array<U>).reduce((acc, part) => combOp(acc, part, env as E), structuredClone(zero))
    )
  }

  /**
   * The first `n` records, reading as few partitions as it can: one first, then four times as many as it has
   * read each round, or as many as the records found so far suggest (Spark's `take`).
   *
   * @since 0.1.0
   */
  take(n: number): Effect.Effect<Array<A>, DatasetError> {
    return Effect.gen(this, function*() {
      const taken: Array<A> = []
      if (n <= 0) return taken
      const total = yield* this.numPartitions
      let scanned = 0
      while (taken.length < n && scanned < total) {
        let tries = 1
        if (scanned > 0) {
          tries = taken.length === 0
            ? scanned * 4
            : Math.min(Math.max(Math.ceil((1.5 * n * scanned) / taken.length) - scanned, 1), scanned * 4)
        }
        const partitions = Array.from({ length: Math.min(tries, total - scanned) }, (_, i) => scanned + i)
        const left = n - taken.length
        const parts = yield* this.run(() => ({ _tag: "Take", n: left }), "take", partitions)
        for (const part of parts as Array<Array<A>>) taken.push(...part.slice(0, n - taken.length))
        scanned += partitions.length
      }
      return taken
    })
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
    return Effect.asVoid(this.run(() => ({ _tag: "Foreach", fn }), "foreach"))
  }

  /** Calls `f` once per partition with its records, on the executors. @since 0.1.0 */
  foreachPartition<E = undefined>(
    f: (records: Iterable<A>, env: E) => void,
    env?: E
  ): Effect.Effect<void, DatasetError> {
    const fn = this.ref(f, env, "foreachPartition")
    return Effect.asVoid(this.run(() => ({ _tag: "ForeachPartition", fn }), "foreachPartition"))
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
    const path = Path.resolve(dir)
    const { files } = this.runtime
    // What the driver itself does to the directory; the reason (a DiskError's) names the file and the operation.
    const onOutput = <A>(operation: () => A) =>
      Effect.try({
        try: operation,
        catch: (error) =>
          new OutputNotWritable({ path, reason: error instanceof Error ? error.message : String(error) })
      })
    return Effect.gen(this, function*() {
      if ((yield* onOutput(() => files.stat(path))) !== undefined) return yield* new OutputDirectoryExists({ path })
      yield* onOutput(() => files.makeDirectory(path))
      yield* this.run((partition) => ({ _tag: "SaveAsText", dir: path, partition }), "saveAsTextFile")
      yield* onOutput(() => {
        // Attempts that were killed mid-write leave their hidden temporary files behind.
        for (const name of files.list(path)) if (name.startsWith(".part-")) files.remove(Path.join(path, name))
        files.writeFile(Path.join(path, "_SUCCESS"), new Uint8Array(0))
      })
    })
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

  /** How it is persisted, if it is. @since 0.1.0 */
  get storageLevel(): StorageLevel | undefined {
    return this.storage
  }

  // ---- shuffles -------------------------------------------------------------------------------------------------

  // A dataset over a new shuffle of this one's records: `numReduces` (this one's partitions when undefined)
  // reduce partitions, read as `read` says.
  private shuffle<B>(options: {
    readonly operation: string
    readonly numPartitions: number | undefined
    readonly partitioner: (lineage: Lineage.Lineage) => Effect.Effect<typeof TaskPlan.Partitioner.Encoded, DatasetError>
    readonly combine?: Aggregator
    readonly read: ReadMode
    readonly partitioned: boolean
  }): Dataset<B> {
    if (options.numPartitions !== undefined) checkPartitions(options.numPartitions, options.operation)
    const shuffleId = this.runtime.newShuffleId()
    const token = newToken()
    const computed = Effect.gen(this, function*() {
      const parent = yield* this.lineage
      const numReduces = options.numPartitions ?? Math.max(1, parent.plans.length)
      const { lineage, shuffle } = Lineage.shuffled(parent, {
        shuffleId,
        token,
        numReduces,
        partitioner: yield* options.partitioner(parent),
        name: options.operation,
        ...(options.combine === undefined ? {} : { combine: options.combine })
      })
      return Lineage.withPlans(
        lineage,
        Array.from({ length: numReduces }, (_, reduceId) => ({
          _tag: "ShuffleRead" as const,
          shuffle,
          reduceId,
          read: options.read
        }))
      )
    })
    return new Dataset<B>(
      this.runtime,
      computed,
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
    const partitioner = Lineage.once(Effect.suspend(() => this.rangeBounds(ascending, numPartitions)))
    return this.shuffle({
      operation: "sortByKey",
      numPartitions,
      partitioner: () => partitioner,
      read: { _tag: "Sort", ascending },
      partitioned: false
    })
  }

  // Spark's RangePartitioner: a sample of keys per partition, weighted by how many records each stands for,
  // cut into ranges of equal weight.
  private rangeBounds(
    ascending: boolean,
    numPartitions: number | undefined
  ): Effect.Effect<typeof TaskPlan.Partitioner.Encoded, DatasetError> {
    return Effect.gen(this, function*() {
      const lineage = yield* this.lineage
      const partitions = numPartitions ?? Math.max(1, lineage.plans.length)
      if (partitions <= 1 || lineage.plans.length === 0) return { _tag: "Range", bounds: [], ascending }
      const size = Math.ceil((samplesPerPartition * partitions) / lineage.plans.length)
      // Seeded by the dataset, as Spark's RangePartitioner is: the same data gives the same bounds on every run.
      const seed = Math.imul(this.id + 1, 0x9e3779b1) >>> 0
      const samples = (yield* this.runJob(
        lineage,
        (partition) => ({ _tag: "SampleKeys", size, seed: seed + partition }),
        "sortByKey"
      )) as Array<{ readonly count: number; readonly keys: Array<Keys.Key> }>
      const weighted = samples.flatMap(({ count, keys }) => keys.map((key) => [key, count / keys.length] as const))
      weighted.sort((a, b) => Keys.compare(a[0], b[0]))
      const total = weighted.reduce((sum, [, weight]) => sum + weight, 0)
      const step = total / partitions
      const bounds: Array<Keys.Key> = []
      let cumulative = 0
      let target = step
      for (const [key, weight] of weighted) {
        cumulative += weight
        if (cumulative < target) continue
        if (bounds.length === 0 || Keys.compare(key, bounds[bounds.length - 1]!) > 0) bounds.push(key)
        target += step
        if (bounds.length === partitions - 1) break
      }
      // A descending sort sends the largest keys to partition 0: the bounds are read from the other end.
      return { _tag: "Range", bounds, ascending }
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
    return this.shuffle({
      operation: "repartition",
      numPartitions,
      partitioner: () => Effect.succeed({ _tag: "RoundRobin" }),
      read: { _tag: "Records" },
      partitioned: false
    })
  }

  /**
   * At most `numPartitions` partitions: consecutive partitions merged without a shuffle, or with one (as
   * `repartition`) when `shuffle` is true, which can also make more partitions.
   *
   * @since 0.1.0
   */
  coalesce(numPartitions: number, shuffle = false): Dataset<A> {
    checkPartitions(numPartitions, "coalesce")
    if (shuffle) return this.repartition(numPartitions)
    return new Dataset<A>(
      this.runtime,
      Effect.map(this.lineage, (lineage) => {
        const parents = lineage.plans.length
        if (parents <= numPartitions) return lineage
        return Lineage.withPlans(
          lineage,
          Array.from({ length: numPartitions }, (_, i) => ({
            _tag: "Concat" as const,
            children: lineage.plans.slice(
              Math.floor((i * parents) / numPartitions),
              Math.floor(((i + 1) * parents) / numPartitions)
            )
          }))
        )
      }),
      { kind: "CoalescedDataset", operation: "coalesce", narrow: [this as Dataset<unknown>], shuffled: [] }
    )
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
    const runtime = datasets[0]!.runtime
    if (numPartitions !== undefined) checkPartitions(numPartitions, operation)
    // Shuffle ids are taken now, so that every job over this dataset reuses the same shuffles.
    const shuffleIds = datasets.map(() => runtime.newShuffleId())
    const tokens = datasets.map(newToken)
    const computed = Effect.gen(function*() {
      const lineages = yield* Effect.forEach(datasets, (dataset) => dataset.lineage)
      const partitionings = yield* Effect.forEach(datasets, (dataset) => dataset.hashPartitions)
      const n = numPartitions ??
        partitionings.find((p) => p !== undefined) ??
        Math.max(1, ...lineages.map((lineage) => lineage.plans.length))
      const parts: Array<Lineage.Lineage> = []
      const inputs = lineages.map((lineage, i) => {
        if (partitionings[i] === n) {
          parts.push(lineage)
          return (reduceId: number): CoGroupInput => ({ _tag: "InPlace", plan: lineage.plans[reduceId]! })
        }
        const { lineage: shuffledLineage, shuffle } = Lineage.shuffled(lineage, {
          shuffleId: shuffleIds[i]!,
          token: tokens[i]!,
          numReduces: n,
          partitioner: { _tag: "Hash" },
          name: operation
        })
        parts.push(shuffledLineage)
        return (): CoGroupInput => ({ _tag: "Shuffled", shuffle })
      })
      const plans = Array.from({ length: n }, (_, reduceId): PlanNode => ({
        _tag: "CoGroup",
        inputs: inputs.map((input) => input(reduceId)),
        reduceId
      }))
      return Lineage.combine(parts, plans)
    })
    // As the debug string shows it: hash-partitioned inputs are taken to be read in place (they are, unless their
    // partition count differs from the cogroup's).
    const narrow = datasets.filter((dataset) => dataset.hashPartitioned)
    return new Dataset<[K, Array<Array<unknown>>]>(
      runtime,
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
    return Effect.gen(this, function*() {
      const lineage = yield* this.lineage
      const partitions = yield* this.hashPartitions
      const only = partitions === undefined ? undefined : [Keys.partitionOf(Keys.check(key, "lookup"), partitions)]
      const matching = Lineage.withPlans(
        lineage,
        lineage.plans.map((child): PlanNode => ({
          _tag: "Map",
          fn: Builtins.value,
          child: { _tag: "Filter", fn: Builtins.hasKey(key), child }
        }))
      )
      const parts = yield* this.runJob(matching, () => ({ _tag: "Collect" }), "lookup", only)
      return (parts as Array<Array<V>>).flat()
    })
  }

  /** The `n` smallest records in structural key order, sorted. @since 0.1.0 */
  takeOrdered(n: number): Effect.Effect<Array<A>, DatasetError> {
    return this.ordered(n, true, "takeOrdered")
  }

  /** The `n` largest records in structural key order, largest first. @since 0.1.0 */
  top(n: number): Effect.Effect<Array<A>, DatasetError> {
    return this.ordered(n, false, "top")
  }

  private ordered(n: number, ascending: boolean, action: string): Effect.Effect<Array<A>, DatasetError> {
    if (!Number.isInteger(n) || n < 0) {
      throw new InvalidArgument({ reason: `${action}: n must be a non-negative integer, got ${n}` })
    }
    return Effect.map(this.run(() => ({ _tag: "TakeOrdered", n, ascending }), action), (parts) => {
      const all = (parts as Array<Array<Keys.Key>>).flat()
      all.sort(ascending ? Keys.compare : (a, b) => Keys.compare(b, a))
      return all.slice(0, n) as Array<A>
    })
  }

  /**
   * Its lineage as Spark prints it: one line per dataset, `(partitions) Kind[id] at operation [storage]`, the
   * datasets of one stage under each other, a shuffle's map side indented after `+-`.
   *
   * @since 0.1.0
   */
  toDebugString(): Effect.Effect<string, DatasetError> {
    return Effect.map(firstLines(this as Dataset<unknown>), (lines) => lines.join("\n"))
  }
}

const describe = (dataset: Dataset<unknown>) =>
  `${dataset.origin.kind}[${dataset.id}] at ${dataset.origin.operation} [${dataset.storageLevel ?? ""}]`

// Spark's RDD.toDebugString, line for line: a stage's datasets under each other behind its bar, a shuffle's map
// side one level in after `+-`.
const firstLines = (dataset: Dataset<unknown>): Effect.Effect<Array<string>, DatasetError> =>
  Effect.gen(function*() {
    const partitions = `(${yield* dataset.numPartitions})`
    const offset = Math.floor((partitions.length - 1) / 2)
    const nextPrefix = `${" ".repeat(offset)}|${" ".repeat(partitions.length - offset)}`
    return [`${partitions} ${describe(dataset)}`, ...(yield* childLines(dataset, nextPrefix))]
  })

const shuffleLines = (
  dataset: Dataset<unknown>,
  prefix: string,
  last: boolean
): Effect.Effect<Array<string>, DatasetError> =>
  Effect.gen(function*() {
    const partitions = `(${yield* dataset.numPartitions})`
    const offset = Math.floor((partitions.length - 1) / 2)
    const thisPrefix = prefix.replace(/\|\s+$/, "")
    const nextPrefix = `${thisPrefix}${last ? "  " : "| "}${" ".repeat(offset)}|${
      " ".repeat(partitions.length - offset)
    }`
    return [`${thisPrefix}+-${partitions} ${describe(dataset)}`, ...(yield* childLines(dataset, nextPrefix))]
  })

const childLines = (dataset: Dataset<unknown>, prefix: string): Effect.Effect<Array<string>, DatasetError> => {
  const parents = [
    ...dataset.origin.narrow.map((parent) => [parent, false] as const),
    ...dataset.origin.shuffled.map((parent) => [parent, true] as const)
  ]
  return Effect.map(
    Effect.forEach(parents, ([parent, shuffle], i) =>
      shuffle
        ? shuffleLines(parent, prefix, i === parents.length - 1)
        : Effect.map(childLines(parent, prefix), (lines) => [`${prefix}${describe(parent)}`, ...lines])),
    (lines) => lines.flat()
  )
}
