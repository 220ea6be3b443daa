/**
 * Aggregation and sorting that stay within a memory budget: when what they hold passes the task's spill
 * threshold (as `RecordFiles.estimateSize` estimates it), they write it to the local dir as a run sorted by key
 * and start afresh; at the end the runs and what is left in memory are merged in key order (Spark's
 * `ExternalAppendOnlyMap` and `ExternalSorter`). A partition far larger than memory thus streams through.
 *
 * @since 0.1.0
 */
import { Keys } from "@kindling/data"
import * as RecordFiles from "../shuffle/RecordFiles.js"
import * as TaskContext from "../tasks/TaskContext.js"

type Entry<X> = [Keys.Key, X]

// How often the size of what is held is sampled: the estimate is the number of entries times a moving average.
const sampleEvery = 32

class SizeEstimate {
  private perEntry = 0
  private updates = 0

  /** Called on every update with the entry touched; it is measured now and then. */
  touched(entry: () => unknown): void {
    if (this.updates++ % sampleEvery !== 0) return
    const size = RecordFiles.estimateSize(entry())
    this.perEntry = this.perEntry === 0 ? size : this.perEntry * 0.9 + size * 0.1
  }

  of(entries: number): number {
    return entries * this.perEntry
  }
}

// A sorted run on disk: its file and size.
interface Run {
  readonly path: string
  readonly length: number
}

const writeRun = <X>(context: TaskContext.TaskContext, sorted: Iterable<Entry<X>>): Run => {
  const path = TaskContext.scratchFile(context, "spill")
  const appender = new RecordFiles.Appender(context.files, path)
  try {
    const batcher = new RecordFiles.Batcher((frame) => appender.write(frame))
    for (const entry of sorted) batcher.push(entry)
    batcher.flush()
  } finally {
    appender.close()
  }
  TaskContext.count(context, "spilledBytes", appender.position)
  return { path, length: appender.position }
}

const readRun = <X>(context: TaskContext.TaskContext, run: Run) =>
  RecordFiles.read(context.files, { _tag: "File", offset: 0, ...run }) as Generator<Entry<X>>

/**
 * The entries of sorted sources merged in key order (`order` is `Keys.compare`, or its reverse); equal keys are
 * combined with `combine` when given, else each is yielded.
 *
 * @since 0.1.0
 */
export function* merge<X>(
  sources: ReadonlyArray<Iterator<Entry<X>>>,
  order: (a: Keys.Key, b: Keys.Key) => number,
  combine?: (a: X, b: X) => X
): Generator<Entry<X>> {
  const heads: Array<Entry<X> | undefined> = sources.map((source) => next(source))
  for (;;) {
    let smallest = -1
    for (let i = 0; i < heads.length; i++) {
      const head = heads[i]
      if (head !== undefined && (smallest < 0 || order(head[0], heads[smallest]![0]) < 0)) smallest = i
    }
    if (smallest < 0) return
    const entry = heads[smallest]!
    heads[smallest] = next(sources[smallest]!)
    if (combine === undefined) {
      yield entry
      continue
    }
    let value = entry[1]
    for (let i = 0; i < heads.length; i++) {
      while (heads[i] !== undefined && order(heads[i]![0], entry[0]) === 0) {
        value = combine(value, heads[i]![1])
        heads[i] = next(sources[i]!)
      }
    }
    yield [entry[0], value]
  }
}

const next = <X>(source: Iterator<Entry<X>>): Entry<X> | undefined => {
  const result = source.next()
  return result.done === true ? undefined : result.value
}

/**
 * Combines values per key (a shuffle's reduce side, a cogroup), spilling sorted runs when it holds too much.
 *
 * @since 0.1.0
 * @category models
 */
export class SpillableMap<C> {
  private readonly map = new Keys.KeyMap<C>()
  private readonly size = new SizeEstimate()
  private readonly runs: Array<Run> = []

  constructor(
    private readonly context: TaskContext.TaskContext,
    /** Merges two combiners of one key: what spilled with what came after. */
    private readonly mergeCombiners: (a: C, b: C) => C
  ) {}

  /** `create` makes the key's combiner from the value the first time, `add` adds a value to it after. */
  update<V>(key: Keys.Key, value: V, create: (value: V) => C, add: (combiner: C, value: V) => C): void {
    const at = this.map.locate(key)
    const combiner = at < 0 ? create(value) : add(this.map.values[at]!, value)
    this.map.values[at < 0 ? ~at : at] = combiner
    this.size.touched(() => [key, combiner])
    if (this.size.of(this.map.size) > this.context.spillThreshold) this.spill()
  }

  private spill(): void {
    const entries = [...this.map.entries()].sort((a, b) => Keys.compare(a[0], b[0]))
    this.map.clear()
    this.runs.push(writeRun(this.context, entries))
  }

  /** Every key with its combiner: as held when nothing spilled, else merged from the runs in key order. */
  *entries(): Generator<Entry<C>> {
    if (this.runs.length === 0) {
      yield* this.map.entries()
      return
    }
    const inMemory = [...this.map.entries()].sort((a, b) => Keys.compare(a[0], b[0]))
    this.map.clear()
    yield* merge<C>(
      [...this.runs.map((run) => readRun<C>(this.context, run)), inMemory[Symbol.iterator]()],
      Keys.compare,
      this.mergeCombiners
    )
  }
}

/**
 * Sorts `[key, value]` records by key, spilling sorted runs when it holds too much.
 *
 * @since 0.1.0
 * @category models
 */
export class ExternalSorter {
  private records: Array<Entry<unknown>> = []
  private readonly size = new SizeEstimate()
  private readonly runs: Array<Run> = []
  private readonly order: (a: Keys.Key, b: Keys.Key) => number

  constructor(private readonly context: TaskContext.TaskContext, ascending: boolean) {
    this.order = ascending ? Keys.compare : (a, b) => Keys.compare(b, a)
  }

  push(record: Entry<unknown>): void {
    this.records.push(record)
    this.size.touched(() => record)
    if (this.size.of(this.records.length) > this.context.spillThreshold) {
      this.runs.push(writeRun(this.context, this.sortHeld()))
    }
  }

  private sortHeld(): Array<Entry<unknown>> {
    const held = this.records.sort((a, b) => this.order(a[0], b[0]))
    this.records = []
    return held
  }

  *sorted(): Generator<Entry<unknown>> {
    const inMemory = this.sortHeld()
    if (this.runs.length === 0) {
      yield* inMemory
      return
    }
    yield* merge(
      [...this.runs.map((run) => readRun<unknown>(this.context, run)), inMemory[Symbol.iterator]()],
      this.order
    )
  }
}
