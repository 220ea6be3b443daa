// Records as a plan's operators pass them on: iterated through generators (so that `take` reads no more than it
// needs), or pushed to a sink when the consumer reads everything; and the generators of the narrow operators.
import * as TaskContext from "../../tasks/TaskContext.js"
import type { Counter } from "../Evaluation.js"

// With `inputs`, the records also count as the task's input records (those a source made of what it read).
export function* counted<A>(source: Iterable<A>, counter: Counter, inputs?: TaskContext.TaskContext): Generator<A> {
  for (const record of source) {
    counter.read++
    if (inputs !== undefined) TaskContext.count(inputs, "inputRecords", 1)
    yield record
  }
}

export function* concatenated(parts: ReadonlyArray<() => Iterable<unknown>>): Generator<unknown> {
  for (const part of parts) yield* part()
}

export function* cartesian(left: Iterable<unknown>, right: () => ReadonlyArray<unknown>): Generator<unknown> {
  let others: ReadonlyArray<unknown> | undefined
  for (const a of left) {
    others ??= right()
    for (const b of others) yield [a, b]
  }
}

// Defers the work of an iterable until its records are first asked for.
export function* fromThunk(make: () => Iterable<unknown>): Generator<unknown> {
  yield* make()
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

export const pushable = (
  iterate: () => Iterator<unknown>,
  push: (sink: (record: unknown) => void) => void
): Pushable => ({
  [Symbol.iterator]: iterate,
  [pushTo]: push
})

// Every record, pushed when it can be, else iterated.
export const each = (records: Iterable<unknown>, sink: (record: unknown) => void): void => {
  if (pushTo in records) (records as Pushable)[pushTo](sink)
  else for (const record of records) sink(record)
}

// The records a function returned for one record (an array, a generator, …), to the sink.
export const eachOf = (value: unknown, operation: string, sink: (record: unknown) => void): void => {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) sink(value[i])
    return
  }
  for (const record of iterable(value, operation)) sink(record)
}

// A source's records, counted as they are read (as input records too, with `inputs`, as `counted` counts them).
export const counting = (source: Iterable<unknown>, counter: Counter, inputs?: TaskContext.TaskContext): Pushable =>
  pushable(() => counted(source, counter, inputs), (sink) => {
    for (const record of source) {
      counter.read++
      if (inputs !== undefined) TaskContext.count(inputs, "inputRecords", 1)
      sink(record)
    }
  })

// A source that can give its records in batches (arrays): iterated one by one (`take` reads no more batches than
// it needs), pushed from each batch in a tight loop, counted as they are read (as input records too, with
// `inputs`, a batch at a time).
export const batched = (
  records: () => Iterable<unknown>,
  batches: () => Iterable<ReadonlyArray<unknown>>,
  counter: Counter,
  inputs?: TaskContext.TaskContext
): Pushable =>
  pushable(() => counted(records(), counter, inputs), (sink) => {
    for (const batch of batches()) {
      if (inputs !== undefined) TaskContext.count(inputs, "inputRecords", batch.length)
      for (let i = 0; i < batch.length; i++) {
        counter.read++
        sink(batch[i])
      }
    }
  })

export function* range(start: number, end: number, step: number): Generator<number> {
  if (step > 0) { for (let i = start; i < end; i += step) yield i }
  else for (let i = start; i > end; i += step) yield i
}

export function* mapped(records: Iterable<unknown>, fn: (record: unknown) => unknown): Generator<unknown> {
  for (const record of records) yield fn(record)
}

export function* filtered(records: Iterable<unknown>, fn: (record: unknown) => unknown): Generator<unknown> {
  for (const record of records) if (fn(record)) yield record
}

export function* flattened(records: Iterable<unknown>, fn: (record: unknown) => unknown): Generator<unknown> {
  for (const record of records) yield* iterable(fn(record), "flatMap")
}

export function* indexed(records: Iterable<unknown>, offset: number): Generator<unknown> {
  let index = offset
  for (const record of records) yield [record, index++]
}

export const iterable = (value: unknown, operation: string): Iterable<unknown> => {
  if (value !== null && typeof value === "object" && Symbol.iterator in value) return value as Iterable<unknown>
  throw new TypeError(`The function given to ${operation} must return an iterable (an array, a generator…)`)
}

// A small seeded generator (mulberry32), so that the keys a sort samples for its bounds are the same on every attempt.
export const seededRandom = (seed: number): () => number => {
  let state = (Math.imul(seed | 0, 0x9e3779b1) ^ 0x85ebca6b) >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
