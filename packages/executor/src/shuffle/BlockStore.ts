/**
 * The executor's store of persisted partitions (Spark's `BlockManager` for RDD blocks): blocks
 * `rdd_<datasetId>_<partition>` as their frames of records (`RecordFiles`), in memory up to a budget, or in
 * files of the local dir. A `MEMORY_ONLY` block that does not fit is not kept (it is computed again when
 * needed); a `MEMORY_AND_DISK` one goes to disk instead; `DISK_ONLY` always does. Blocks are only added or
 * dropped whole, so what the store says it holds it holds.
 *
 * @since 0.1.0
 */
import type { Disk } from "@kindling/data"
import * as Path from "node:path"
import type { Segment } from "./RecordFiles.js"

/**
 * @since 0.1.0
 * @category models
 */
export type StorageLevel = "MEMORY_ONLY" | "MEMORY_AND_DISK" | "DISK_ONLY"

/**
 * A block a task computed, to keep.
 *
 * @since 0.1.0
 * @category models
 */
export interface NewBlock {
  readonly blockId: string
  readonly level: StorageLevel
  readonly bytes: Uint8Array
}

/**
 * Where a kept block went, as the driver is told.
 *
 * @since 0.1.0
 * @category models
 */
export interface Stored {
  readonly blockId: string
  readonly level: StorageLevel
  readonly memSize: number
  readonly diskSize: number
}

/**
 * The id of partition `partition` of dataset `datasetId`.
 *
 * @since 0.1.0
 */
export const blockId = (datasetId: number, partition: number): string => `rdd_${datasetId}_${partition}`

/**
 * @since 0.1.0
 * @category models
 */
export class BlockStore {
  private readonly memory = new Map<string, { readonly bytes: Uint8Array; readonly level: StorageLevel }>()
  private readonly disk = new Map<
    string,
    { readonly path: string; readonly size: number; readonly level: StorageLevel }
  >()
  private memoryUsed = 0

  constructor(private readonly files: Disk.Files, private readonly localDir: string, readonly memoryBudget: number) {}

  /** Where the block's frames are, if it is held. */
  get(id: string): Segment | undefined {
    const held = this.memory.get(id)
    if (held !== undefined) return { _tag: "Bytes", bytes: held.bytes }
    const file = this.disk.get(id)
    return file === undefined ? undefined : { _tag: "File", path: file.path, offset: 0, length: file.size }
  }

  /** Every block held, with its level. */
  held(): Array<{ readonly blockId: string; readonly level: StorageLevel }> {
    return [...this.memory, ...this.disk].map(([blockId, { level }]) => ({ blockId, level }))
  }

  /** Keeps the block as its level allows; undefined when it was not kept (a disk that refuses it included). */
  put(block: NewBlock): Stored | undefined {
    if (this.memory.has(block.blockId) || this.disk.has(block.blockId)) return undefined
    const size = block.bytes.length
    if (block.level !== "DISK_ONLY" && this.memoryUsed + size <= this.memoryBudget) {
      this.memory.set(block.blockId, { bytes: block.bytes, level: block.level })
      this.memoryUsed += size
      return { blockId: block.blockId, level: block.level, memSize: size, diskSize: 0 }
    }
    if (block.level === "MEMORY_ONLY") return undefined
    const path = Path.join(this.localDir, block.blockId)
    try {
      this.files.writeFile(path, block.bytes)
    } catch {
      // Not kept is what a full disk means for a block: it is computed again when needed.
      this.files.remove(path)
      return undefined
    }
    this.disk.set(block.blockId, { path, size, level: block.level })
    return { blockId: block.blockId, level: block.level, memSize: 0, diskSize: size }
  }

  /**
   * Drops every block of the dataset, then removes their files: a file that cannot be removed (the `DiskError`
   * thrown) is left behind, but no block of the dataset is held any longer.
   */
  removeDataset(datasetId: number): void {
    const prefix = `rdd_${datasetId}_`
    for (const [id, { bytes }] of this.memory) {
      if (!id.startsWith(prefix)) continue
      this.memory.delete(id)
      this.memoryUsed -= bytes.length
    }
    const paths: Array<string> = []
    for (const [id, file] of this.disk) {
      if (!id.startsWith(prefix)) continue
      this.disk.delete(id)
      paths.push(file.path)
    }
    for (const path of paths) this.files.remove(path)
  }
}
