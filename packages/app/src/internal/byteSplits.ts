// Input files cut into byte ranges, as Hadoop's FileInputFormat cuts them: splits of the total size over the
// partitions asked for, at most a block, a file's last split up to 10% larger rather than leave a sliver; a
// compressed file (or one read whole) is one split.
import { Compression } from "@kindling/data"
import type { DataFormats } from "@kindling/protocol"
import type * as InputPaths from "./inputPaths.js"

export interface ByteSplit {
  readonly path: string
  readonly start: number
  readonly length: number
  readonly compression?: DataFormats.Compression
}

// Hadoop's local file system block size: a split is never larger.
const blockSize = 32 * 1024 * 1024
// A file's last split may be up to 10% larger than the rest rather than leave a sliver.
const splitSlop = 1.1

export const cut = (
  files: ReadonlyArray<InputPaths.InputFile>,
  minPartitions: number,
  options: { readonly whole?: boolean } = {}
): Array<ByteSplit> => {
  const total = files.reduce((sum, file) => sum + file.size, 0)
  const splitSize = Math.max(1, Math.min(Math.floor(total / minPartitions), blockSize))
  return files.flatMap((file): Array<ByteSplit> => {
    const compression = Compression.codecOf(file.path)
    if (compression !== undefined) return [{ path: file.path, start: 0, length: file.size, compression }]
    if (options.whole === true) return [{ path: file.path, start: 0, length: file.size }]
    const splits: Array<ByteSplit> = []
    let left = file.size
    while (left / splitSize > splitSlop) {
      splits.push({ path: file.path, start: file.size - left, length: splitSize })
      left -= splitSize
    }
    if (left > 0 || file.size === 0) splits.push({ path: file.path, start: file.size - left, length: left })
    return splits
  })
}
