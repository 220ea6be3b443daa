// The result operations: what a task does with its partition's records — collects, counts, takes, reduces, folds,
// runs a function on each, saves them as text, writes them as shuffle output, …
import * as Path from "node:path"
import type { Task } from "../Evaluation.js"
import * as Keys from "../Keys.js"
import * as RecordFiles from "../RecordFiles.js"
import * as ShuffleWriter from "../ShuffleWriter.js"
import { count, type TaskContext } from "../TaskContext.js"
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
    case "SaveAsText":
      return saveAsText(records, result.dir, result.partition, run.context)
    case "SaveRecords":
      return saveRecords(records, result.dir, result.partition, run.context)
    case "TakeOrdered":
      return takeOrdered(records, result.n, result.ascending, result.byKey === true)
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

export const asLine = (record: unknown): string =>
  typeof record === "string"
    ? record
    : record !== null && typeof record === "object"
    ? JSON.stringify(record)
    : String(record)

export const partFile = (partition: number): string => `part-${String(partition).padStart(5, "0")}`

// A part file written under a name of the attempt's own and renamed into place: a killed or retried attempt never
// leaves a half-written part behind, and the last attempt to finish wins whole. `body` writes the bytes and says
// how many records they hold: the task's output metrics, as Spark counts a file's, are what it committed.
const writePart = (
  dir: string,
  partition: number,
  context: TaskContext,
  body: (write: (bytes: Uint8Array) => void) => number
): null => {
  const { files } = context
  const target = Path.join(dir, partFile(partition))
  const temporary = Path.join(dir, `.${partFile(partition)}.${process.pid}.${Math.random().toString(36).slice(2)}`)
  const writer = files.openWrite(temporary)
  let position = 0
  let written: number
  try {
    written = body((bytes) => {
      writer.write(bytes, position)
      position += bytes.length
    })
  } finally {
    writer.close()
  }
  files.rename(temporary, target)
  count(context, "outputBytes", position)
  count(context, "outputRecords", written)
  return null
}

const saveAsText = (records: Iterable<unknown>, dir: string, partition: number, context: TaskContext): null =>
  writePart(dir, partition, context, (write) => {
    const encoder = new TextEncoder()
    let written = 0
    let batch = ""
    each(records, (record) => {
      batch += asLine(record) + "\n"
      written++
      if (batch.length >= 64 * 1024) {
        write(encoder.encode(batch))
        batch = ""
      }
    })
    write(encoder.encode(batch))
    return written
  })

// Records as frames, as shuffle outputs and cached blocks hold them: what a checkpoint keeps.
const saveRecords = (records: Iterable<unknown>, dir: string, partition: number, context: TaskContext): null =>
  writePart(dir, partition, context, (write) => {
    let written = 0
    const batcher = new RecordFiles.Batcher((frame) => write(frame))
    each(records, (record) => {
      batcher.push(record)
      written++
    })
    batcher.flush()
    return written
  })
