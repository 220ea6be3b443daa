/**
 * What a running task has besides its plan: which attempt of which task it is, the files it works on (its
 * executor's `Disk`), its executor's local dir (for shuffle output and spills), the spill threshold, the shuffle
 * blocks its executor fetched for it, the cached blocks and broadcast values it reads, and where it records what
 * it did. Files a task makes for its own use are listed in `scratch` and removed when it ends, however it ends.
 *
 * @since 0.1.0
 */
import type { Disk, ObjectStore } from "@kindling/data"
import type { SharedVariables } from "@kindling/protocol/records"
import * as Path from "node:path"
import type { NewBlock } from "../shuffle/BlockStore.js"
import type { Segment } from "../shuffle/RecordFiles.js"

/**
 * One map task's block of a reduce partition, and where it came from: a block that cannot be read is a fetch
 * failure of that map output.
 *
 * @since 0.1.0
 * @category models
 */
export interface ShuffleBlock {
  readonly segment: Segment
  readonly mapIndex: number
  readonly executorId: string
}

/**
 * @since 0.1.0
 * @category models
 */
export interface TaskContext {
  readonly task: SharedVariables.TaskInfo
  readonly files: Disk.Files
  readonly localDir: string
  /** Bytes of records (as estimated in memory) an aggregation or sort holds before it spills to disk. */
  readonly spillThreshold: number
  /** The blocks of each reduce partition this task reads (from every map task), by `inputKey`. */
  readonly shuffleInputs: ReadonlyMap<string, ReadonlyArray<ShuffleBlock>>
  /** The persisted partitions its executor holds that the task reads, by block id. */
  readonly cached: ReadonlyMap<string, Segment>
  /** Persisted partitions the task computed, for its executor to keep. */
  readonly stored: Array<NewBlock>
  /** The values of the broadcasts the task reads, encoded, by id. */
  readonly broadcasts: ReadonlyMap<number, Uint8Array>
  /** What the task added to accumulators, by id. */
  readonly accumulators: Map<number, { readonly kind: "long" | "collection"; value: unknown }>
  /** Files this task made for itself, removed when it ends. */
  readonly scratch: Array<string>
  /** What the task did, by metric (`TaskPlan.TaskResult.metrics`). */
  readonly metrics: Record<string, number>
  /** The CSV and JSON lines files its sources read records of (`TaskPlan.TaskResult.parsedFiles`). */
  readonly parsedFiles: Array<ParsedFile>
}

/**
 * A CSV or JSON lines file a task reads records of, and its tally: the records its lines made, the malformed.
 *
 * @since 0.1.0
 * @category models
 */
export interface ParsedFile {
  readonly path: string
  readonly format: "Csv" | "JsonLines"
  readonly multiLine: boolean
  records: number
  malformed: number
}

/**
 * What an executor hands a task besides its bytes; a task thread builds its context from it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Inputs {
  readonly localDir: string
  readonly spillThreshold: number
  /** The object store the task's `s3://` paths are in: a task thread reads and writes datasets through it. */
  readonly objectStore: ObjectStore.S3Settings
  readonly shuffleInputs: ReadonlyArray<readonly [string, ReadonlyArray<ShuffleBlock>]>
  readonly cached: ReadonlyArray<readonly [string, Segment]>
  /** The encoded values of the broadcasts it reads (in memory its executor shares with its threads). */
  readonly broadcasts?: ReadonlyArray<readonly [number, Uint8Array]>
  /** What gathering the inputs took (`shuffleBytesRead`, …): the task's metrics start from it. */
  readonly metrics?: Readonly<Record<string, number>>
}

/**
 * A fresh context for the task attempt `task`, with these inputs, on `files`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromInputs = (inputs: Inputs, files: Disk.Files, task: SharedVariables.TaskInfo): TaskContext => ({
  task,
  files,
  localDir: inputs.localDir,
  spillThreshold: inputs.spillThreshold,
  shuffleInputs: new Map(inputs.shuffleInputs),
  cached: new Map(inputs.cached),
  broadcasts: new Map(inputs.broadcasts ?? []),
  accumulators: new Map(),
  stored: [],
  scratch: [],
  metrics: { ...inputs.metrics },
  parsedFiles: []
})

/**
 * How a task's inputs name the blocks of one reduce partition of a shuffle (a coalesced task reads several).
 *
 * @since 0.1.0
 */
export const inputKey = (shuffleId: number, reduceId: number): string => `${shuffleId}/${reduceId}`

let counter = 0

/**
 * A fresh path in the local dir for a file of the task's own, removed when the task ends.
 *
 * @since 0.1.0
 */
export const scratchFile = (context: TaskContext, kind: string): string => {
  const path = Path.join(
    context.localDir,
    `${kind}-${process.pid}-${Date.now().toString(36)}-${(counter++).toString(36)}-` +
      Math.random().toString(36).slice(2, 8)
  )
  context.scratch.push(path)
  return path
}

/**
 * Adds `amount` to a metric.
 *
 * @since 0.1.0
 */
export const count = (context: TaskContext, metric: string, amount: number): void => {
  context.metrics[metric] = (context.metrics[metric] ?? 0) + amount
}

/**
 * Removes the task's scratch files.
 *
 * @since 0.1.0
 */
export const cleanUp = (context: TaskContext): void => {
  for (const path of context.scratch.splice(0)) context.files.remove(path)
}
