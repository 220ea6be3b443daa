/**
 * Runs a task: evaluates its partition's plan lazily (records flow through generators, so `take` reads no more
 * than it needs) and applies its result operation. It is synchronous and self-contained, so that it can run on
 * a worker thread that is simply terminated when its task is killed.
 *
 * @since 0.1.0
 */
import type { TaskPlan } from "@kindling/protocol"
import * as Records from "@kindling/protocol/records"
import { SharedVariables } from "@kindling/protocol/records"
import * as Path from "node:path"
import * as Aggregators from "./Aggregators.js"
import * as BlockStore from "./BlockStore.js"
import type { Files } from "./Disk.js"
import * as Keys from "./Keys.js"
import * as RecordFiles from "./RecordFiles.js"
import * as ShuffleWriter from "./ShuffleWriter.js"
import * as Spill from "./Spill.js"
import * as TaskContext from "./TaskContext.js"
import { lines } from "./TextSplits.js"

// What a thread receives: the MessagePack form of a task, plain objects tagged as the schemas describe.
/**
 * A task as it is decoded from `LaunchTask.serializedTask`.
 *
 * @since 0.1.0
 */
export type Task = typeof TaskPlan.Task.Encoded
type PlanNode = Task["plan"]
type FunctionRef = typeof TaskPlan.FunctionRef.Encoded

/**
 * Turns a function reference into the function. Named functions come from the app module; source text is
 * compiled once per text.
 *
 * @since 0.1.0
 */
export class Functions {
  private readonly compiled = new Map<string, (...args: Array<any>) => any>()

  constructor(private readonly named: (name: string) => unknown) {}

  /**
   * The function with its environment bound as its last argument, for calls with `arity` ordinary arguments
   * (a wrapper of fixed arity: it is called once per record, and spreading arguments would allocate each time).
   */
  bind(ref: FunctionRef, arity: 1 | 2 = 1): (...args: Array<any>) => any {
    const fn = ref._tag === "NamedFunction" ? this.byName(ref.name) : this.compile(ref.source)
    const env = ref.env
    // No environment: called as it is, its last parameter is undefined all the same.
    if (env === undefined) return fn
    return arity === 1 ? (a: unknown) => fn(a, env) : (a: unknown, b: unknown) => fn(a, b, env)
  }

  private byName(name: string): (...args: Array<any>) => any {
    const fn = this.named(name)
    if (typeof fn !== "function") throw new Error(`The app module has no function named ${name}`)
    return fn as (...args: Array<any>) => any
  }

  private compile(source: string): (...args: Array<any>) => any {
    let fn = this.compiled.get(source)
    if (fn === undefined) {
      // Indirect eval runs in the global scope: the function sees nothing of this module. The driver admitted it
      // only after checking that it refers to no variable of its surroundings.
      fn = (0, eval)(`(${source})`) as (...args: Array<any>) => any
      if (typeof fn !== "function") throw new Error(`Not a function: ${source.slice(0, 200)}`)
      this.compiled.set(source, fn)
    }
    return fn
  }
}

/**
 * What a task produced, and how many records it read from its sources.
 *
 * @since 0.1.0
 */
export interface Outcome {
  readonly value: unknown
  readonly recordsRead: number
  readonly metrics: Readonly<Record<string, number>>
}

/**
 * Where a running task counts the records it has read from its sources; a task thread's is in memory its pool
 * can read while the task runs.
 *
 * @since 0.1.0
 */
export interface Counter {
  read: number
}

// Everything one evaluation needs, passed down the plan.
interface Run {
  readonly functions: Functions
  readonly counter: Counter
  readonly context: TaskContext.TaskContext
}

/**
 * Runs the task against `functions` in `context`, counting what it reads in `counter`; throws whatever the
 * user's functions throw. The task's scratch files are gone when it returns or throws.
 *
 * @since 0.1.0
 */
export const run = (
  task: Task,
  functions: Functions,
  context: TaskContext.TaskContext,
  counter: Counter = { read: 0 }
): Outcome => {
  const env: Run = { functions, counter, context }
  try {
    return SharedVariables.withinTask(variablesOf(context), () => {
      const records = evaluate(task.plan, env)
      const value = apply(task.result, records, env)
      return { value, recordsRead: counter.read, metrics: context.metrics }
    })
  } finally {
    TaskContext.cleanUp(context)
  }
}

// Broadcast values, decoded once per thread (each thread has its own copy of this module).
const decodedBroadcasts = new Map<number, unknown>()

// Shared variables as a task sees them: broadcasts from what its executor fetched, accumulators its own, and the
// task context its own attempt.
const variablesOf = (context: TaskContext.TaskContext): SharedVariables.VariableScope => ({
  task: context.task,
  broadcastValue: (broadcast) => {
    if (decodedBroadcasts.has(broadcast.id)) return decodedBroadcasts.get(broadcast.id)
    const bytes = context.broadcasts.get(broadcast.id)
    if (bytes === undefined) throw new Error(`Broadcast ${broadcast.id} was not fetched for this task`)
    // A copy out of the memory the executor shares with its threads, which the decoder does not read.
    const value = Records.decode(bytes.buffer instanceof SharedArrayBuffer ? new Uint8Array(bytes) : bytes)
    decodedBroadcasts.set(broadcast.id, value)
    return value
  },
  add: (accumulator, value) => {
    const entry = context.accumulators.get(accumulator.id) ??
      { kind: accumulator.kind, value: SharedVariables.zero(accumulator.kind) }
    entry.value = SharedVariables.added(accumulator.kind, entry.value, value)
    context.accumulators.set(accumulator.id, entry)
  },
  // In a task, an accumulator's value is what this task has added.
  accumulatorValue: (accumulator) =>
    context.accumulators.get(accumulator.id)?.value ?? SharedVariables.zero(accumulator.kind)
})

/**
 * Runs a task and encodes its outcome: a `TaskResult`, or a `TaskFailure` with what the user's functions threw.
 * It never throws.
 *
 * @since 0.1.0
 */
export const outcomeOf = (
  task: Task,
  functions: Functions,
  context: TaskContext.TaskContext,
  counter?: Counter
): Uint8Array => {
  try {
    const { metrics, recordsRead, value } = run(task, functions, context, counter)
    const accumulators = [...context.accumulators].map(([id, entry]) => [id, entry.value])
    return Records.encode({
      _tag: "TaskResult",
      value: Records.encode(value),
      recordsRead,
      metrics,
      ...(accumulators.length === 0 ? {} : { accumulators })
    })
  } catch (error) {
    if (!(error instanceof ShuffleReadFailed)) return failureOutcome(error)
    return Records.encode({
      _tag: "FetchFailed",
      shuffleId: error.shuffleId,
      mapIndex: error.mapIndex,
      reduceId: error.reduceId,
      executorId: error.executorId,
      message: error.message
    })
  }
}

/**
 * A block of a map output this task read turned out unreadable (rotten on its disk, cut short, gone): not the
 * task's fault but the map output's, which must be computed again — the task's outcome is a `FetchFailed`.
 *
 * @since 0.1.0
 */
export class ShuffleReadFailed extends Error {
  constructor(
    readonly shuffleId: number,
    readonly mapIndex: number,
    readonly reduceId: number,
    readonly executorId: string,
    readonly reason: string
  ) {
    super(
      `Failed to read map output ${mapIndex} of shuffle ${shuffleId} for reduce partition ${reduceId} from ` +
        `executor ${executorId}: ${reason}`
    )
    this.name = "ShuffleReadFailed"
  }
}

/**
 * The encoded `TaskFailure` of a task that could not run, with what was thrown.
 *
 * @since 0.1.0
 */
export const failureOutcome = (error: unknown): Uint8Array =>
  Records.encode({ _tag: "TaskFailure", ...describeError(error) })

/**
 * Runs an encoded `TaskPlan.Task` and encodes its outcome (`outcomeOf`); bytes that are not a task are its
 * failure. It never throws, so every runner of tasks (a task thread, or the simulated cluster's executors)
 * reports outcomes alike.
 *
 * @since 0.1.0
 */
export const runEncoded = (task: Uint8Array, functions: Functions, context: TaskContext.TaskContext): Uint8Array => {
  let decoded: Task
  try {
    decoded = Records.decode(task) as Task
  } catch (error) {
    return failureOutcome(error)
  }
  return outcomeOf(decoded, functions, context)
}

/**
 * Whether the task names a function of the app module (`NamedFunction`), which must then be imported before it
 * runs. A plan is a chain from its result operation down to one source.
 *
 * @since 0.1.0
 */
export const namesAppFunction = (task: Task): boolean => {
  let found = false
  const visit = (value: unknown): void => {
    if (found || value === null || typeof value !== "object") return
    if (Array.isArray(value)) return value.forEach(visit)
    const node = value as Record<string, unknown>
    if (node._tag === "NamedFunction") {
      found = true
      return
    }
    // Records and environments are values, not plan: only the plan's own fields are walked.
    for (const [field, inner] of Object.entries(node)) {
      if (field !== "items" && field !== "env" && field !== "zero" && field !== "bounds") visit(inner)
    }
  }
  visit(task.plan)
  visit(task.result)
  return found
}

/**
 * Every node of a plan, the plan's root first.
 *
 * @since 0.1.0
 */
export function* nodes(plan: PlanNode): Generator<PlanNode> {
  yield plan
  switch (plan._tag) {
    case "Slice":
    case "Range":
    case "TextSplit":
    case "ShuffleRead":
      return
    case "CoGroup":
      for (const input of plan.inputs) if (input._tag === "InPlace") yield* nodes(input.plan)
      return
    case "Concat":
      for (const child of plan.children) yield* nodes(child)
      return
    case "Cartesian":
      yield* nodes(plan.left)
      yield* nodes(plan.right)
      return
    default:
      yield* nodes(plan.child)
  }
}

/**
 * The shuffles a task's plan reads, with their tokens and the reduce partition it reads of each.
 *
 * @since 0.1.0
 */
export const shufflesRead = (
  plan: PlanNode
): Array<{ readonly shuffleId: number; readonly token: string; readonly reduceId: number }> =>
  [...nodes(plan)].flatMap((node) => {
    if (node._tag === "ShuffleRead") return [{ ...node.shuffle, reduceId: node.reduceId }]
    if (node._tag !== "CoGroup") return []
    return node.inputs.flatMap((input) =>
      input._tag === "Shuffled" ? [{ ...input.shuffle, reduceId: node.reduceId }] : []
    )
  })

/**
 * The blocks of persisted partitions a task's plan may read.
 *
 * @since 0.1.0
 */
export const blocksRead = (plan: PlanNode): Array<string> =>
  [...nodes(plan)].flatMap((node) => (node._tag === "Cached" ? [BlockStore.blockId(node.rddId, node.partition)] : []))

/**
 * What a thrown value says of itself, as a task failure reports it.
 *
 * @since 0.1.0
 */
export const describeError = (
  error: unknown
): { readonly className: string; readonly message: string; readonly stack: string } =>
  error instanceof Error
    ? { className: error.name, message: error.message, stack: error.stack ?? `${error.name}: ${error.message}` }
    : { className: typeof error, message: String(error), stack: String(error) }

function* counted<A>(source: Iterable<A>, counter: Counter): Generator<A> {
  for (const record of source) {
    counter.read++
    yield record
  }
}

const evaluate = (node: PlanNode, run: Run): Iterable<unknown> => {
  const { counter, functions } = run
  switch (node._tag) {
    case "Slice":
      return counting(node.items, counter)
    case "Range":
      return counting(range(node.start, node.end, node.step), counter)
    case "TextSplit":
      return counting(lines(run.context.files, node.path, node.start, node.length), counter)
    case "Map": {
      const fn = functions.bind(node.fn)
      const child = evaluate(node.child, run)
      return pushable(() => mapped(child, fn), (sink) => each(child, (record) => sink(fn(record))))
    }
    case "Filter": {
      const fn = functions.bind(node.fn)
      const child = evaluate(node.child, run)
      return pushable(() => filtered(child, fn), (sink) =>
        each(child, (record) => {
          if (fn(record)) sink(record)
        }))
    }
    case "FlatMap": {
      const fn = functions.bind(node.fn)
      const child = evaluate(node.child, run)
      return pushable(
        () => flattened(child, fn),
        (sink) => each(child, (record) => eachOf(fn(record), "flatMap", sink))
      )
    }
    case "MapPartitions":
      return iterable(functions.bind(node.fn)(evaluate(node.child, run)), "mapPartitions")
    case "MapPartitionsWithIndex":
      return iterable(
        functions.bind(node.fn, 2)(node.partition, evaluate(node.child, run)),
        "mapPartitionsWithIndex"
      )
    case "Glom":
      return [Array.from(evaluate(node.child, run))]
    case "Sample":
      return sampled(evaluate(node.child, run), node)
    case "ZipWithIndex":
      return indexed(evaluate(node.child, run), node.offset)
    case "KeyBy": {
      const fn = functions.bind(node.fn)
      const keyed = (record: unknown) => [fn(record), record]
      const child = evaluate(node.child, run)
      return pushable(() => mapped(child, keyed), (sink) => each(child, (record) => sink(keyed(record))))
    }
    case "MapValues": {
      const fn = functions.bind(node.fn)
      const mapValue = (record: unknown) => {
        const [key, value] = Keys.pair(record, "mapValues")
        return [key, fn(value)]
      }
      const child = evaluate(node.child, run)
      return pushable(() => mapped(child, mapValue), (sink) => each(child, (record) => sink(mapValue(record))))
    }
    case "FlatMapValues": {
      const fn = functions.bind(node.fn)
      const child = evaluate(node.child, run)
      return pushable(
        () =>
          flattened(child, (record) => {
            const [key, value] = Keys.pair(record, "flatMapValues")
            return mapped(iterable(fn(value), "flatMapValues"), (inner) => [key, inner])
          }),
        (sink) =>
          each(child, (record) => {
            const [key, value] = Keys.pair(record, "flatMapValues")
            eachOf(fn(value), "flatMapValues", (inner) => sink([key, inner]))
          })
      )
    }
    case "ShuffleRead":
      return shuffleRead(node, run)
    case "CoGroup":
      return coGroup(node, run)
    case "Concat":
      return concatenated(node.children.map((child) => () => evaluate(child, run)))
    case "Cartesian":
      return cartesian(evaluate(node.left, run), () => Array.from(evaluate(node.right, run)))
    case "Cached": {
      const blockId = BlockStore.blockId(node.rddId, node.partition)
      const held = run.context.cached.get(blockId)
      if (held !== undefined) return counted(RecordFiles.read(run.context.files, held), counter)
      return storing(evaluate(node.child, run), { blockId, level: node.level }, run.context)
    }
  }
}

// The records pass through, and are kept as the block's frames; a block is kept only once read to its end.
function* storing(
  records: Iterable<unknown>,
  block: { readonly blockId: string; readonly level: BlockStore.StorageLevel },
  context: TaskContext.TaskContext
): Generator<unknown> {
  const frames: Array<Uint8Array> = []
  const batcher = new RecordFiles.Batcher((frame) => frames.push(frame))
  for (const record of records) {
    batcher.push(record)
    yield record
  }
  batcher.flush()
  context.stored.push({ ...block, bytes: Buffer.concat(frames) })
}

function* concatenated(parts: ReadonlyArray<() => Iterable<unknown>>): Generator<unknown> {
  for (const part of parts) yield* part()
}

function* cartesian(left: Iterable<unknown>, right: () => ReadonlyArray<unknown>): Generator<unknown> {
  let others: ReadonlyArray<unknown> | undefined
  for (const a of left) {
    others ??= right()
    for (const b of others) yield [a, b]
  }
}

// The records of a shuffle's blocks for this task, as its executor fetched them; a block that cannot be read
// fails the task as the map output's fault (`ShuffleReadFailed`).
function* shuffleRecords(shuffleId: number, reduceId: number, run: Run): Generator<unknown> {
  const blocks = run.context.shuffleInputs.get(TaskContext.inputKey(shuffleId, reduceId))
  if (blocks === undefined) {
    throw new Error(`The blocks of partition ${reduceId} of shuffle ${shuffleId} were not fetched for this task`)
  }
  for (const block of blocks) {
    const records = RecordFiles.read(run.context.files, block.segment)
    for (;;) {
      let next: IteratorResult<unknown>
      try {
        next = records.next()
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error)
        throw new ShuffleReadFailed(shuffleId, block.mapIndex, reduceId, block.executorId, reason)
      }
      if (next.done === true) break
      run.counter.read++
      run.context.metrics.shuffleRecordsRead = (run.context.metrics.shuffleRecordsRead ?? 0) + 1
      yield next.value
    }
  }
}

const shuffleRead = (node: Extract<PlanNode, { _tag: "ShuffleRead" }>, run: Run): Iterable<unknown> => {
  const records = shuffleRecords(node.shuffle.shuffleId, node.reduceId, run)
  const { read } = node
  switch (read._tag) {
    case "Records":
      return records
    case "Sort": {
      const sorter = new Spill.ExternalSorter(run.context, read.ascending)
      return fromThunk(() => {
        for (const record of records) sorter.push(record as [Keys.Key, unknown])
        return sorter.sorted()
      })
    }
    case "Merge": {
      const merge = run.functions.bind(read.mergeCombiners, 2)
      const map = new Spill.SpillableMap<unknown>(run.context, merge)
      return fromThunk(() => {
        for (const record of records) {
          const [key, combiner] = record as [Keys.Key, unknown]
          map.update(key, combiner, identity, merge)
        }
        return map.entries()
      })
    }
    case "Combine": {
      const { add, create, merge } = Aggregators.bind(read.aggregator, run.functions)
      const map = new Spill.SpillableMap<unknown>(run.context, merge)
      return fromThunk(() => {
        for (const record of records) {
          const [key, value] = record as [Keys.Key, unknown]
          map.update(key, value, create, add)
        }
        return map.entries()
      })
    }
  }
}

const identity = <A>(a: A): A => a

// Defers the work of an iterable until its records are first asked for.
function* fromThunk(make: () => Iterable<unknown>): Generator<unknown> {
  yield* make()
}

const coGroup = (node: Extract<PlanNode, { _tag: "CoGroup" }>, run: Run): Iterable<unknown> => {
  const n = node.inputs.length
  const map = new Spill.SpillableMap<Array<Array<unknown>>>(
    run.context,
    (a, b) => a.map((values, i) => values.concat(b[i]!))
  )
  return fromThunk(() => {
    node.inputs.forEach((input, i) => {
      const records = input._tag === "Shuffled"
        ? shuffleRecords(input.shuffle.shuffleId, node.reduceId, run)
        : mapped(evaluate(input.plan, run), (record) => Keys.pair(record, "cogroup"))
      for (const record of records) {
        const [key, value] = record as [Keys.Key, unknown]
        map.update(key, value, (first) => {
          const groups = Array.from({ length: n }, (): Array<unknown> => [])
          groups[i]!.push(first)
          return groups
        }, (groups, next) => {
          groups[i]!.push(next)
          return groups
        })
      }
    })
    return map.entries()
  })
}

/**
 * Records that can also be pushed, one call per record, to a sink: narrow transformations chain their calls
 * instead of resuming a generator per record and per step, which is most of what a simple pipeline costs. A
 * consumer that reads everything pushes (`each`); one that may stop early (`take`) or hands the records to the
 * app (`mapPartitions`) iterates.
 */
const pushTo = Symbol("pushTo")

interface Pushable extends Iterable<unknown> {
  readonly [pushTo]: (sink: (record: unknown) => void) => void
}

const pushable = (iterate: () => Iterator<unknown>, push: (sink: (record: unknown) => void) => void): Pushable => ({
  [Symbol.iterator]: iterate,
  [pushTo]: push
})

// Every record, pushed when it can be, else iterated.
const each = (records: Iterable<unknown>, sink: (record: unknown) => void): void => {
  if (pushTo in records) (records as Pushable)[pushTo](sink)
  else for (const record of records) sink(record)
}

// The records a function returned for one record (an array, a generator, …), to the sink.
const eachOf = (value: unknown, operation: string, sink: (record: unknown) => void): void => {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) sink(value[i])
    return
  }
  for (const record of iterable(value, operation)) sink(record)
}

// A source's records, counted as they are read.
const counting = (source: Iterable<unknown>, counter: Counter): Pushable =>
  pushable(() => counted(source, counter), (sink) => {
    for (const record of source) {
      counter.read++
      sink(record)
    }
  })

function* range(start: number, end: number, step: number): Generator<number> {
  if (step > 0) { for (let i = start; i < end; i += step) yield i }
  else for (let i = start; i > end; i += step) yield i
}

function* mapped(records: Iterable<unknown>, fn: (record: unknown) => unknown): Generator<unknown> {
  for (const record of records) yield fn(record)
}

function* filtered(records: Iterable<unknown>, fn: (record: unknown) => unknown): Generator<unknown> {
  for (const record of records) if (fn(record)) yield record
}

function* flattened(records: Iterable<unknown>, fn: (record: unknown) => unknown): Generator<unknown> {
  for (const record of records) yield* iterable(fn(record), "flatMap")
}

function* indexed(records: Iterable<unknown>, offset: number): Generator<unknown> {
  let index = offset
  for (const record of records) yield [record, index++]
}

const iterable = (value: unknown, operation: string): Iterable<unknown> => {
  if (value !== null && typeof value === "object" && Symbol.iterator in value) return value as Iterable<unknown>
  throw new TypeError(`The function given to ${operation} must return an iterable (an array, a generator…)`)
}

function* sampled(
  records: Iterable<unknown>,
  options: { readonly withReplacement: boolean; readonly fraction: number; readonly seed: number; partition: number }
): Generator<unknown> {
  const random = seededRandom(options.seed, options.partition)
  for (const record of records) {
    if (options.withReplacement) {
      for (let n = poisson(options.fraction, random); n > 0; n--) yield record
    } else if (random() < options.fraction) {
      yield record
    }
  }
}

/**
 * A small, fast, seeded generator (mulberry32) over the seed and the partition, so that a partition's sample is
 * the same on every attempt.
 *
 * @since 0.1.0
 */
export const seededRandom = (seed: number, partition: number): () => number => {
  let state = (Math.imul(seed | 0, 0x9e3779b1) ^ Math.imul(partition + 1, 0x85ebca6b)) >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

// Knuth's method: fine for the small means sampling uses.
const poisson = (mean: number, random: () => number): number => {
  const limit = Math.exp(-mean)
  let k = 0
  let p = random()
  while (p > limit) {
    k++
    p *= random()
  }
  return k
}

const apply = (result: Task["result"], records: Iterable<unknown>, run: Run): unknown => {
  const { functions } = run
  switch (result._tag) {
    case "Collect": {
      const all: Array<unknown> = []
      each(records, (record) => all.push(record))
      return all
    }
    case "Count": {
      let n = 0
      each(records, () => n++)
      return n
    }
    case "Take": {
      const taken: Array<unknown> = []
      if (result.n === 0) return taken
      for (const record of records) {
        taken.push(record)
        if (taken.length >= result.n) break
      }
      return taken
    }
    case "Reduce": {
      const fn = functions.bind(result.fn, 2)
      let acc: { value: unknown } | undefined
      each(records, (record) => {
        acc = acc === undefined ? { value: record } : { value: fn(acc.value, record) }
      })
      // An empty partition has nothing to contribute: `[]`; otherwise `[value]`.
      return acc === undefined ? [] : [acc.value]
    }
    case "Fold": {
      const fn = functions.bind(result.fn, 2)
      let acc = structuredClone(result.zero)
      each(records, (record) => {
        acc = fn(acc, record)
      })
      return acc
    }
    case "Aggregate": {
      const fn = functions.bind(result.seqOp, 2)
      let acc = structuredClone(result.zero)
      each(records, (record) => {
        acc = fn(acc, record)
      })
      return acc
    }
    case "Foreach": {
      const fn = functions.bind(result.fn)
      each(records, fn)
      return null
    }
    case "ForeachPartition":
      functions.bind(result.fn)(records)
      return null
    case "SaveAsText":
      return saveAsText(records, result.dir, result.partition, run.context.files)
    case "TakeOrdered":
      return takeOrdered(records, result.n, result.ascending)
    case "SampleKeys":
      return sampleKeys(records, result.size, result.seed)
    case "ShuffleWrite":
      return ShuffleWriter.write((sink) => each(records, sink), result, run.context, functions, result.operation)
  }
}

// Reservoir sampling of the keys, seeded so that every attempt draws the same sample.
const sampleKeys = (records: Iterable<unknown>, size: number, seed: number) => {
  const random = seededRandom(seed, 0)
  const keys: Array<Keys.Key> = []
  let count = 0
  each(records, (record) => {
    const key = Keys.pair(record, "sortByKey")[0]
    if (keys.length < size) keys.push(key)
    else {
      const at = Math.floor(random() * (count + 1))
      if (at < size) keys[at] = key
    }
    count++
  })
  return { count, keys }
}

// The n first records in key order, kept in a sorted array of at most n (binary insertion).
const takeOrdered = (records: Iterable<unknown>, n: number, ascending: boolean): Array<unknown> => {
  const order = ascending ? Keys.compare : (a: Keys.Key, b: Keys.Key) => Keys.compare(b, a)
  const kept: Array<Keys.Key> = []
  if (n === 0) return kept
  each(records, (record) => {
    const key = Keys.check(record, ascending ? "takeOrdered" : "top")
    if (kept.length === n && order(key, kept[n - 1]!) >= 0) return
    let low = 0
    let high = kept.length
    while (low < high) {
      const middle = (low + high) >>> 1
      if (order(kept[middle]!, key) <= 0) low = middle + 1
      else high = middle
    }
    kept.splice(low, 0, key)
    if (kept.length > n) kept.pop()
  })
  return kept
}

/**
 * A record as a line of text: strings as they are, other primitives as `String` writes them, objects and arrays
 * as JSON (JavaScript's `toString` of an object says nothing about it).
 *
 * @since 0.1.0
 */
export const asLine = (record: unknown): string =>
  typeof record === "string"
    ? record
    : record !== null && typeof record === "object"
    ? JSON.stringify(record)
    : String(record)

/**
 * `part-00000`, `part-00001`, …: the file a partition's records are saved to.
 *
 * @since 0.1.0
 */
export const partFile = (partition: number): string => `part-${String(partition).padStart(5, "0")}`

// Written under a name of the attempt's own and renamed into place: a killed or retried attempt never leaves a
// half-written part behind, and the last attempt to finish wins whole.
const saveAsText = (records: Iterable<unknown>, dir: string, partition: number, files: Files): null => {
  const target = Path.join(dir, partFile(partition))
  const temporary = Path.join(dir, `.${partFile(partition)}.${process.pid}.${Math.random().toString(36).slice(2)}`)
  const writer = files.openWrite(temporary)
  const encoder = new TextEncoder()
  let position = 0
  const write = (text: string) => {
    const bytes = encoder.encode(text)
    writer.write(bytes, position)
    position += bytes.length
  }
  try {
    let batch = ""
    each(records, (record) => {
      batch += asLine(record) + "\n"
      if (batch.length >= 64 * 1024) {
        write(batch)
        batch = ""
      }
    })
    write(batch)
  } finally {
    writer.close()
  }
  files.rename(temporary, target)
  return null
}
