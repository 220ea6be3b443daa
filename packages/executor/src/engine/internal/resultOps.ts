// The result operations: what a task does with its partition's records — collects, counts, takes, reduces, folds,
// runs a function on each, saves them as files, writes them as shuffle output, …
import { FieldValues, Keys, PartFiles } from "@kindling/data"
import type { DataFormats } from "@kindling/protocol"
import * as RecordFiles from "../../shuffle/RecordFiles.js"
import * as ShuffleWriter from "../../shuffle/ShuffleWriter.js"
import { count, type TaskContext } from "../../tasks/TaskContext.js"
import type { Task } from "../Evaluation.js"
import type { Run } from "./planOperators.js"
import { each, seededRandom } from "./recordStreams.js"

export const apply = (result: Task["result"], records: Iterable<unknown>, run: Run): unknown => {
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
    case "SaveAs":
      return committed(
        run.context,
        PartFiles.save(
          { iterable: records, each: (sink) => each(records, sink) },
          { ...result, attempt: String(run.context.task.taskAttemptId) },
          run.context.files
        )
      )
    case "SaveRecords":
      return saveRecords(records, result.dir, result.partition, run.context)
    case "TakeOrdered":
      return takeOrdered(records, result.n, result.ascending, result.byKey === true)
    case "InferFields":
      return inferFields(records)
    case "SampleKeys":
      return sampleKeys(records, result.size, result.seed)
    case "ShuffleWrite":
      return ShuffleWriter.write((sink) => each(records, sink), result, run.context, functions, result.operation)
  }
}

// The narrowest type of each property's texts, as Spark infers a CSV schema.
const inferFields = (records: Iterable<unknown>): Array<[string, DataFormats.Field]> => {
  const types = new Map<string, DataFormats.Field | undefined>()
  each(records, (record) => {
    for (const [name, value] of Object.entries(record as Record<string, unknown>)) {
      if (typeof value !== "string") {
        if (!types.has(name)) types.set(name, undefined)
        continue
      }
      const type = FieldValues.inferType(value)
      const known = types.get(name)
      types.set(name, known === undefined ? type : FieldValues.widen(known, type))
    }
  })
  return [...types].flatMap(([name, field]) => field === undefined ? [] : [[name, { ...field, name }]])
}

// Reservoir sampling of the keys, seeded so that every attempt draws the same sample.
const sampleKeys = (records: Iterable<unknown>, size: number, seed: number) => {
  const random = seededRandom(seed)
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
// The `n` first records in order, kept sorted as they come; `byKey`: `[key, record]` pairs, ordered by key alone.
const takeOrdered = (records: Iterable<unknown>, n: number, ascending: boolean, byKey: boolean): Array<unknown> => {
  const operation = ascending ? "takeOrdered" : "top"
  const keyOf = byKey
    ? (record: unknown) => Keys.check(Keys.pair(record, operation)[0], operation)
    : (record: unknown) => Keys.check(record, operation)
  const order = ascending ? Keys.compare : (a: Keys.Key, b: Keys.Key) => Keys.compare(b, a)
  const kept: Array<unknown> = []
  const keys: Array<Keys.Key> = []
  if (n === 0) return kept
  each(records, (record) => {
    const key = keyOf(record)
    if (keys.length === n && order(key, keys[n - 1]!) >= 0) return
    let low = 0
    let high = keys.length
    while (low < high) {
      const middle = (low + high) >>> 1
      if (order(keys[middle]!, key) <= 0) low = middle + 1
      else high = middle
    }
    keys.splice(low, 0, key)
    kept.splice(low, 0, record)
    if (keys.length > n) {
      keys.pop()
      kept.pop()
    }
  })
  return kept
}

// A part file committed: what it holds is the task's output, as Spark counts a file's.
const committed = (context: TaskContext, written: PartFiles.Written): null => {
  count(context, "outputBytes", written.bytes)
  count(context, "outputRecords", written.records)
  return null
}

// Records as frames, as shuffle outputs and cached blocks hold them: what a checkpoint keeps.
const saveRecords = (records: Iterable<unknown>, dir: string, partition: number, context: TaskContext): null => {
  const target = { dir, file: PartFiles.partFile(partition), attempt: String(context.task.taskAttemptId) }
  return committed(
    context,
    PartFiles.write(context.files, target, (writer) => {
      let written = 0
      let position = 0
      const batcher = new RecordFiles.Batcher((frame) => {
        writer.write(frame, position)
        position += frame.length
      })
      each(records, (record) => {
        batcher.push(record)
        written++
      })
      batcher.flush()
      return { records: written, bytes: position }
    })
  )
}
