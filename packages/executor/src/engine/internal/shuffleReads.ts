// Shuffle reads: the records of the shuffle blocks a task's executor fetched for it, and a `ShuffleRead` node's
// read of them (as they are, sorted, or merged or combined by key, spilling as it goes). A block that cannot be
// read fails the task as its map output's fault.
import type { Keys } from "@kindling/data"
import * as RecordFiles from "../../shuffle/RecordFiles.js"
import * as TaskContext from "../../tasks/TaskContext.js"
import * as Aggregators from "../Aggregators.js"
import type { Task } from "../Evaluation.js"
import * as Spill from "../Spill.js"
import type { Run } from "./planOperators.js"
import { fromThunk } from "./recordStreams.js"

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

// The records of a shuffle's blocks for this task, as its executor fetched them; a block that cannot be read
// fails the task as the map output's fault (`ShuffleReadFailed`).
export function* shuffleRecords(shuffleId: number, reduceId: number, run: Run): Generator<unknown> {
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

export const shuffleRead = (node: Extract<Task["plan"], { _tag: "ShuffleRead" }>, run: Run): Iterable<unknown> => {
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
