/**
 * `Dataset<A>`: a distributed collection, Spark's RDD. Transformations are lazy and return a new dataset; they
 * check their function at once (`UserFunctions`). Actions are Effects that run a job — one task per partition,
 * each evaluating the partition's plan on an executor — and fail with typed errors.
 *
 * Every function is called with its ordinary arguments and then the environment given with it, so values from
 * the app travel explicitly: `ds.map((x, env) => x * env.k, { k: 3 })`.
 *
 * @since 0.1.0
 */
import { Records, type TaskPlan } from "@kindling/protocol"
import * as Effect from "effect/Effect"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import {
  EmptyDataset,
  type InputNotReadable,
  InvalidArgument,
  type JobFailed,
  OutputDirectoryExists
} from "./AppErrors.js"
import type * as UserFunctions from "./UserFunctions.js"

type PlanNode = typeof TaskPlan.PlanNode.Encoded
type FunctionRef = typeof TaskPlan.FunctionRef.Encoded
type ResultOp = typeof TaskPlan.ResultOp.Encoded

/**
 * What can stop a dataset's job: a job failure, or a source that cannot be read.
 *
 * @since 0.1.0
 * @category errors
 */
export type DatasetError = JobFailed | InputNotReadable

/**
 * What datasets need from their app context: a way to run a job and to ship a function.
 *
 * @since 0.1.0
 * @category models
 */
export interface Runtime {
  /** Runs one task per encoded task; the results come back in order. */
  readonly runJob: (tasks: ReadonlyArray<Uint8Array>) => Effect.Effect<Array<unknown>, JobFailed>
  /** How a function travels; throws when it cannot (see `UserFunctions.reference`). */
  readonly reference: (fn: UserFunctions.AnyFunction, env: unknown, transformation: string) => FunctionRef
}

// A fresh seed where the app gives none, as Spark draws one.
const randomSeed = () => Math.floor(Math.random() * 2 ** 31)

/**
 * @since 0.1.0
 * @category models
 */
export class Dataset<A> {
  /** @internal */
  constructor(
    /** @internal */
    readonly runtime: Runtime,
    /** The plan of each partition: computing it may run a job (zipWithIndex) or read a directory (textFile). */
    readonly plans: Effect.Effect<ReadonlyArray<PlanNode>, DatasetError>
  ) {}

  private derive<B>(f: (child: PlanNode, partition: number) => PlanNode): Dataset<B> {
    return new Dataset<B>(this.runtime, Effect.map(this.plans, (plans) => plans.map(f)))
  }

  private ref(fn: UserFunctions.AnyFunction, env: unknown, transformation: string): FunctionRef {
    return this.runtime.reference(fn, env, transformation)
  }

  /** How many partitions it has (tasks its jobs run). */
  get numPartitions(): Effect.Effect<number, DatasetError> {
    return Effect.map(this.plans, (plans) => plans.length)
  }

  // ---- transformations ----------------------------------------------------------------------------------------

  /** @since 0.1.0 */
  map<B, E = undefined>(f: (record: A, env: E) => B, env?: E): Dataset<B> {
    const fn = this.ref(f, env, "map")
    return this.derive((child) => ({ _tag: "Map", fn, child }))
  }

  /** @since 0.1.0 */
  filter<E = undefined>(f: (record: A, env: E) => boolean, env?: E): Dataset<A> {
    const fn = this.ref(f, env, "filter")
    return this.derive((child) => ({ _tag: "Filter", fn, child }))
  }

  /** @since 0.1.0 */
  flatMap<B, E = undefined>(f: (record: A, env: E) => Iterable<B>, env?: E): Dataset<B> {
    const fn = this.ref(f, env, "flatMap")
    return this.derive((child) => ({ _tag: "FlatMap", fn, child }))
  }

  /** @since 0.1.0 */
  mapPartitions<B, E = undefined>(f: (records: Iterable<A>, env: E) => Iterable<B>, env?: E): Dataset<B> {
    const fn = this.ref(f, env, "mapPartitions")
    return this.derive((child) => ({ _tag: "MapPartitions", fn, child }))
  }

  /** @since 0.1.0 */
  mapPartitionsWithIndex<B, E = undefined>(
    f: (partition: number, records: Iterable<A>, env: E) => Iterable<B>,
    env?: E
  ): Dataset<B> {
    const fn = this.ref(f, env, "mapPartitionsWithIndex")
    return this.derive((child, partition) => ({ _tag: "MapPartitionsWithIndex", fn, partition, child }))
  }

  /** The partitions of this dataset, then those of `other`. @since 0.1.0 */
  union(other: Dataset<A>): Dataset<A> {
    return new Dataset<A>(
      this.runtime,
      Effect.zipWith(this.plans, other.plans, (mine, theirs) => [...mine, ...theirs])
    )
  }

  /** Each partition's records as one array. @since 0.1.0 */
  glom(): Dataset<Array<A>> {
    return this.derive((child) => ({ _tag: "Glom", child }))
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
    return this.derive((child, partition) => ({
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
      const plans = yield* this.plans
      const counts = plans.length <= 1
        ? []
        : yield* this.runtime.runJob(plans.slice(0, -1).map((plan) => encode(plan, { _tag: "Count" })))
      let offset = 0
      return plans.map((child, i) => {
        const node: PlanNode = { _tag: "ZipWithIndex", offset, child }
        offset += (counts[i] as number | undefined) ?? 0
        return node
      })
    })
    return new Dataset(this.runtime, Effect.runSync(Effect.cached(counted)))
  }

  // ---- actions ------------------------------------------------------------------------------------------------

  private run(result: (partition: number) => ResultOp, partitions?: ReadonlyArray<number>) {
    return Effect.flatMap(this.plans, (plans) => {
      const which = partitions ?? plans.map((_, i) => i)
      return this.runtime.runJob(which.map((i) => encode(plans[i]!, result(i))))
    })
  }

  /** Every record, in partition order. @since 0.1.0 */
  collect(): Effect.Effect<Array<A>, DatasetError> {
    return Effect.map(this.run(() => ({ _tag: "Collect" })), (parts) => (parts as Array<Array<A>>).flat())
  }

  /** @since 0.1.0 */
  count(): Effect.Effect<number, DatasetError> {
    return Effect.map(
      this.run(() => ({ _tag: "Count" })),
      (counts) => (counts as Array<number>).reduce((a, b) => a + b, 0)
    )
  }

  /** Combines the records with `f`, which must be associative and commutative. @since 0.1.0 */
  reduce<E = undefined>(f: (a: A, b: A, env: E) => A, env?: E): Effect.Effect<A, DatasetError | EmptyDataset> {
    const fn = this.ref(f, env, "reduce")
    return Effect.flatMap(this.run(() => ({ _tag: "Reduce", fn })), (parts) => {
      const values = (parts as Array<Array<A>>).flat()
      if (values.length === 0) return Effect.fail(new EmptyDataset({ action: "reduce" }))
      return Effect.sync(() => values.reduce((a, b) => f(a, b, env as E)))
    })
  }

  /** Folds each partition from `zero`, then the partitions' results from `zero`, with `f`. @since 0.1.0 */
  fold<E = undefined>(zero: A, f: (a: A, b: A, env: E) => A, env?: E): Effect.Effect<A, DatasetError> {
    const fn = this.ref(f, env, "fold")
    return Effect.map(
      this.run(() => ({ _tag: "Fold", zero, fn })),
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
      this.run(() => ({ _tag: "Aggregate", zero, seqOp: fn })),
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
      const total = (yield* this.plans).length
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
        const parts = yield* this.run(() => ({ _tag: "Take", n: left }), partitions)
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
    return Effect.asVoid(this.run(() => ({ _tag: "Foreach", fn })))
  }

  /** Calls `f` once per partition with its records, on the executors. @since 0.1.0 */
  foreachPartition<E = undefined>(
    f: (records: Iterable<A>, env: E) => void,
    env?: E
  ): Effect.Effect<void, DatasetError> {
    const fn = this.ref(f, env, "foreachPartition")
    return Effect.asVoid(this.run(() => ({ _tag: "ForeachPartition", fn })))
  }

  /**
   * Writes the records, one per line (strings as they are, objects as JSON), to `dir/part-00000`, … — one file
   * per partition — then `dir/_SUCCESS`. The directory must not exist.
   *
   * @since 0.1.0
   */
  saveAsTextFile(dir: string): Effect.Effect<void, DatasetError | OutputDirectoryExists> {
    const path = Path.resolve(dir)
    return Effect.gen(this, function*() {
      const exists = yield* Effect.promise(() => Fs.stat(path).then(() => true, () => false))
      if (exists) return yield* new OutputDirectoryExists({ path })
      yield* Effect.promise(() => Fs.mkdir(path, { recursive: true }))
      yield* this.run((partition) => ({ _tag: "SaveAsText", dir: path, partition }))
      // Attempts that were killed mid-write leave their hidden temporary files behind.
      const leftovers = (yield* Effect.promise(() => Fs.readdir(path))).filter((name) => name.startsWith(".part-"))
      yield* Effect.promise(() => Promise.all(leftovers.map((name) => Fs.rm(Path.join(path, name), { force: true }))))
      yield* Effect.promise(() => Fs.writeFile(Path.join(path, "_SUCCESS"), ""))
    })
  }
}

/**
 * A task's bytes: its partition's plan and what to make of the records.
 *
 * @since 0.1.0
 */
export const encode = (plan: PlanNode, result: ResultOp): Uint8Array => Records.encode({ plan, result })
