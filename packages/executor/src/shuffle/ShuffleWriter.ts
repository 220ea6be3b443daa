/**
 * The map side of a shuffle, on a task thread: the task's records go to reduce partitions by the partitioner,
 * combined per key first when the operation allows it, and end up in one data file — the partitions' frames one
 * after the other — and an index of where each partition starts (`ShuffleFiles`). What it holds in memory is
 * bounded by the spill threshold: past it, what it has is written to a spill file, and the spills are copied
 * into the data file at the end. The files are written under temporary names and renamed into place, so a
 * reader never sees half of an output; a later attempt of the same map task replaces an earlier one whole.
 *
 * @since 0.1.0
 */
import { Keys } from "@kindling/data"
import type { TaskPlan } from "@kindling/protocol"
import * as Aggregators from "../engine/Aggregators.js"
import type { Functions } from "../engine/Evaluation.js"
import * as TaskContext from "../tasks/TaskContext.js"
import * as RecordFiles from "./RecordFiles.js"
import * as ShuffleFiles from "./ShuffleFiles.js"

type ShuffleWrite = typeof TaskPlan.ShuffleWrite.Encoded

// Where each reduce partition's frames are in one spill file.
type SpillFile = { readonly path: string; readonly ranges: ReadonlyArray<readonly [number, number]> }

const roundRobinStart = (mapIndex: number, partitions: number) =>
  (Math.imul(mapIndex + 1, 0x9e3779b1) >>> 0) % partitions

/**
 * Which reduce partition a record goes to, as the operation's partitioner says.
 *
 * @since 0.1.0
 */
export const partitioner = (op: ShuffleWrite, operation: string): (record: unknown) => number => {
  const n = op.numReduces
  const spec = op.partitioner
  switch (spec._tag) {
    case "Hash":
      return (record) => Keys.partitionOf(Keys.pair(record, operation)[0], n)
    case "RoundRobin": {
      let position = roundRobinStart(op.mapIndex, n)
      return () => position++ % n
    }
    case "Range": {
      const bounds = spec.bounds as ReadonlyArray<Keys.Key>
      return (record) => {
        const key = Keys.pair(record, operation)[0]
        // The first bound not below the key (binary search), as Spark's RangePartitioner.
        let low = 0
        let high = bounds.length
        while (low < high) {
          const middle = (low + high) >>> 1
          if (Keys.compare(bounds[middle]!, key) < 0) low = middle + 1
          else high = middle
        }
        return spec.ascending ? low : bounds.length - low
      }
    }
  }
}

/**
 * Writes the map output of `records` and returns the bytes written per reduce partition (the `MapStatus`).
 *
 * @since 0.1.0
 */
export const write = (
  /** Pushes every record to the function it is given. */
  records: (sink: (record: unknown) => void) => void,
  op: ShuffleWrite,
  context: TaskContext.TaskContext,
  functions: Functions,
  operation = "shuffle"
): { readonly sizes: ReadonlyArray<number> } => {
  const n = op.numReduces
  const partitionOf = partitioner(op, operation)
  // Encoded frames per reduce partition, waiting in memory, and how many bytes they are.
  const held: Array<Array<Uint8Array>> = Array.from({ length: n }, () => [])
  let heldBytes = 0
  let recordsWritten = 0
  const spills: Array<SpillFile> = []

  const spill = () => {
    const path = TaskContext.scratchFile(context, "shuffle-spill")
    const appender = new RecordFiles.Appender(context.files, path)
    const ranges: Array<readonly [number, number]> = []
    try {
      for (const frames of held) {
        const start = appender.position
        for (const frame of frames) appender.write(frame)
        ranges.push([start, appender.position - start])
        frames.length = 0
      }
    } finally {
      appender.close()
    }
    TaskContext.count(context, "spilledBytes", appender.position)
    heldBytes = 0
    spills.push({ path, ranges })
  }

  const batchers = held.map((frames) =>
    new RecordFiles.Batcher((frame, count) => {
      frames.push(frame)
      heldBytes += frame.length
      recordsWritten += count
      if (heldBytes > context.spillThreshold) spill()
    })
  )

  if (op.combine === undefined) {
    records((record) => batchers[partitionOf(record)]!.push(record))
  } else {
    const { add: mergeValue, create: createCombiner } = Aggregators.bind(op.combine, functions)
    const combined = new Keys.KeyMap<unknown>()
    // Combiners go to their partitions' frames: when they pass the threshold (then on to a spill), and at the end.
    const release = () => {
      for (const entry of combined.entries()) batchers[partitionOf(entry)]!.push(entry)
      combined.clear()
    }
    let perEntry = 0
    let updates = 0
    records((record) => {
      const [key, value] = Keys.pair(record, operation)
      const at = combined.locate(key)
      const combiner = at < 0 ? createCombiner(value) : mergeValue(combined.values[at], value)
      combined.values[at < 0 ? ~at : at] = combiner
      if (updates++ % 32 !== 0) return
      const size = RecordFiles.estimateSize(key) + RecordFiles.estimateSize(combiner) + 16
      perEntry = perEntry === 0 ? size : perEntry * 0.9 + size * 0.1
      if (combined.size * perEntry > context.spillThreshold) {
        release()
        for (const batcher of batchers) batcher.flush()
        spill()
      }
    })
    release()
  }
  for (const batcher of batchers) batcher.flush()

  const sizes = writeOutput(context, op, held, spills)
  const total = sizes.reduce((a, b) => a + b, 0)
  TaskContext.count(context, "shuffleBytesWritten", total)
  TaskContext.count(context, "shuffleRecordsWritten", recordsWritten)
  return { sizes }
}

// The data file (every partition's spilled frames, then its held ones) and its index, renamed into place.
const writeOutput = (
  context: TaskContext.TaskContext,
  op: ShuffleWrite,
  held: ReadonlyArray<ReadonlyArray<Uint8Array>>,
  spills: ReadonlyArray<SpillFile>
): Array<number> => {
  const data = ShuffleFiles.dataFile(context.localDir, op.shuffle.shuffleId, op.mapIndex)
  const index = ShuffleFiles.indexFile(context.localDir, op.shuffle.shuffleId, op.mapIndex)
  const temporaryData = TaskContext.scratchFile(context, "shuffle-data")
  const temporaryIndex = TaskContext.scratchFile(context, "shuffle-index")
  const offsets = new Float64Array(held.length + 1)
  const sizes: Array<number> = []
  const appender = new RecordFiles.Appender(context.files, temporaryData)
  try {
    for (let r = 0; r < held.length; r++) {
      const start = appender.position
      for (const spill of spills) {
        const [offset, length] = spill.ranges[r]!
        if (length > 0) appender.copy(spill.path, offset, length)
      }
      for (const frame of held[r]!) appender.write(frame)
      sizes.push(appender.position - start)
      offsets[r + 1] = appender.position
    }
  } finally {
    appender.close()
  }
  context.files.writeFile(temporaryIndex, new Uint8Array(offsets.buffer))
  // The index last: a reader that finds it finds the data it describes.
  context.files.rename(temporaryData, data)
  context.files.rename(temporaryIndex, index)
  return sizes
}
