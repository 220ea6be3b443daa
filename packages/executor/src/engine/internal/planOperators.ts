// The plan's operators: a partition's plan evaluated into its records, lazily, from its source up (a slice, a
// range, a text split, shuffle reads, a persisted block) through every narrow transformation.
import { Csv, JsonLines, Keys, Parquet, ParseModes, TextSplits } from "@kindling/data"
import * as BlockStore from "../../shuffle/BlockStore.js"
import * as RecordFiles from "../../shuffle/RecordFiles.js"
import * as TaskContext from "../../tasks/TaskContext.js"
import type { Counter, Functions, Task } from "../Evaluation.js"
import * as Spill from "../Spill.js"

import {
  batched,
  cartesian,
  concatenated,
  counted,
  counting,
  each,
  eachOf,
  filtered,
  flattened,
  fromThunk,
  indexed,
  iterable,
  mapped,
  pushable,
  range
} from "./recordStreams.js"
import { sampled } from "./samplers.js"
import { shuffleRead, shuffleRecords } from "./shuffleReads.js"

type PlanNode = Task["plan"]

// Everything one evaluation needs, passed down the plan.
export interface Run {
  readonly functions: Functions
  readonly counter: Counter
  readonly context: TaskContext.TaskContext
}

export const evaluate = (node: PlanNode, run: Run): Iterable<unknown> => {
  const { counter, functions } = run
  switch (node._tag) {
    case "Slice":
      return counting(node.items, counter)
    case "Range":
      return counting(range(node.start, node.end, node.step), counter)
    case "TextSplit":
      return batched(
        () => splitLines(node, run.context, "inputRecords"),
        () => splitLineBatches(node, run.context, "inputRecords"),
        counter
      )
    case "LineRecordSplit": {
      const { format } = node
      const tally: TaskContext.ParsedFile = {
        path: node.path,
        format: format._tag,
        multiLine: node.multiLine === true,
        records: 0,
        malformed: 0
      }
      run.context.parsedFiles.push(tally)
      const place = {
        path: node.path,
        firstLine: () => linesBefore(run.context, node.path, node.start) + 1,
        startsFile: node.start === 0,
        multiLine: node.multiLine === true,
        tally
      }
      const decode = node.decode === undefined ? undefined : functions.bind(node.decode)
      const lines = () => splitLineBatches(node, run.context)
      return format._tag === "Csv"
        ? batched(
          () => Csv.records(lines(), format, place, decode),
          () => Csv.recordBatches(lines(), format, place, decode),
          counter,
          run.context
        )
        : batched(
          () => JsonLines.records(lines(), format, place, decode),
          () => JsonLines.recordBatches(lines(), format, place, decode),
          counter,
          run.context
        )
    }
    case "ParquetSplit": {
      const read = (bytes: number) => TaskContext.count(run.context, "inputBytes", bytes)
      const rows = () => Parquet.rows(run.context.files, node.path, node.rowGroups, node.fields, read)
      if (node.decode === undefined) {
        const batches = () => Parquet.rowBatches(run.context.files, node.path, node.rowGroups, node.fields, read)
        return batched(rows, batches, counter, run.context)
      }
      return counting(decodedRows(rows(), functions.bind(node.decode), node), counter, run.context)
    }
    case "WholeTextFiles":
      return counting(wholeFiles(node.paths, run.context), counter)
    case "RecordFile": {
      const length = run.context.files.stat(node.path)?.size
      if (length === undefined) throw new Error(`The checkpoint file ${node.path} is gone`)
      return counting(
        RecordFiles.read(run.context.files, { _tag: "File", path: node.path, offset: 0, length }),
        counter
      )
    }
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
    case "FoldPartition": {
      const fn = functions.bind(node.fn, 2)
      const child = evaluate(node.child, run)
      return fromThunk(() => {
        let acc = structuredClone(node.zero)
        each(child, (record) => {
          acc = fn(acc, record)
        })
        return [acc]
      })
    }
    case "ReducePartition": {
      const fn = functions.bind(node.fn, 2)
      const child = evaluate(node.child, run)
      return fromThunk(() => {
        const none = Symbol()
        let acc: unknown = none
        each(child, (record) => {
          acc = acc === none ? record : fn(acc, record)
        })
        return acc === none ? [] : [acc]
      })
    }
    case "ZipPartitions":
      return iterable(
        functions.bind(node.fn, node.children.length)(...node.children.map((child) => evaluate(child, run))),
        "zipPartitions"
      )
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

// The lines of a text split: a byte range of a file, or the whole file when it is compressed or read whole. Its
// bytes count as the task's input, and its lines as its input records when they are what it reads.
const splitLines = (split: LineSplit, context: TaskContext.TaskContext, records?: "inputRecords"): Iterable<string> =>
  wholeFile(split)
    ? TextSplits.wholeFileLines(context.files, split.path, tallied(context, records))
    : TextSplits.lines(context.files, split.path, split.start, split.length, tallied(context, records))

// The lines of a text split as `splitLines` gives them, in batches (a whole file's in one).
function* splitLineBatches(
  split: LineSplit,
  context: TaskContext.TaskContext,
  records?: "inputRecords"
): Generator<ReadonlyArray<string>> {
  if (!wholeFile(split)) {
    yield* TextSplits.lineBatches(context.files, split.path, split.start, split.length, tallied(context, records))
  } else yield Array.from(TextSplits.wholeFileLines(context.files, split.path, tallied(context, records)))
}

interface LineSplit {
  readonly path: string
  readonly start: number
  readonly length: number
  readonly compression?: string | undefined
  readonly multiLine?: boolean | undefined
}

const wholeFile = (split: LineSplit) => split.compression !== undefined || split.multiLine === true

// What a reader of lines used, counted as the task's input bytes (and input records, when lines are its records).
const tallied = (context: TaskContext.TaskContext, records?: "inputRecords") => (read: TextSplits.Tally) => {
  TaskContext.count(context, "inputBytes", read.bytes)
  if (records !== undefined) TaskContext.count(context, records, read.records)
}

// Parquet rows decoded by the app's schema: a row it rejects is named by its place in the split's row groups.
function* decodedRows(
  rows: Iterable<unknown>,
  decode: (record: unknown) => unknown,
  split: { readonly path: string; readonly rowGroups: ReadonlyArray<number>; readonly dropMalformed?: boolean }
): Generator<unknown> {
  let row = 0
  const mode = split.dropMalformed === true ? "DROPMALFORMED" : "FAILFAST"
  for (const record of rows) {
    const at = row++
    const typed = ParseModes.decoded(
      decode,
      record,
      mode,
      () => `in ${split.path} at row ${at + 1} of its row groups ${split.rowGroups.join(", ")}`
    )
    if (typed !== undefined) yield typed.record
  }
}

// How many lines a file has before byte `start`: where a split's first line is, for a message naming a line.
const linesBefore = (context: TaskContext.TaskContext, path: string, start: number): number => {
  if (start === 0) return 0
  let lines = 0
  for (const _ of TextSplits.lines(context.files, path, 0, start)) lines++
  return lines
}

// Each file whole, as `[file:path, text]`; its bytes and one record per file are the task's input.
function* wholeFiles(paths: ReadonlyArray<string>, context: TaskContext.TaskContext): Generator<unknown> {
  for (const path of paths) {
    const { bytes, text } = TextSplits.wholeText(context.files, path)
    TaskContext.count(context, "inputBytes", bytes)
    TaskContext.count(context, "inputRecords", 1)
    yield [`file:${path}`, text]
  }
}
