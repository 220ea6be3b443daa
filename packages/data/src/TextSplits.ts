/**
 * The lines of a byte range of a text file, as Hadoop's line reader cuts files: a split owns the lines that
 * start after its first byte (from byte 0 for the first split) up to and including its last byte, so however a
 * file is cut into splits every line is read exactly once. Reading stops at the first line end past the split.
 *
 * @since 0.1.0
 */
import * as Compression from "./Compression.js"
import type { Files } from "./Disk.js"

const chunkSize = 1024 * 1024

/**
 * What a reader of lines has used of its file: bytes, and lines given.
 *
 * @since 0.1.0
 */
export interface Tally {
  bytes: number
  records: number
}
const newline = 0x0a

/**
 * The lines of the file at `path` that start in `(start, start + length]` (or `[0, length]` when `start` is 0),
 * without `\n` or `\r\n`, decoded as UTF-8. The file is read a chunk at a time and each chunk's complete lines are decoded in
 * one go; a line cut by a chunk's end waits, as bytes, for the rest. `done` is told, once the reader is done or
 * stopped early, the bytes it used of the file (the split's, the line it finishes past the split, the line it
 * skips before it) and the lines it gave: a task's input metrics.
 *
 * @since 0.1.0
 */
export function* lines(
  files: Files,
  path: string,
  start: number,
  length: number,
  done?: (read: Tally) => void
): Generator<string> {
  const read: Tally = { bytes: 0, records: 0 }
  try {
    for (const batch of lineBatches(files, path, start, length, (used) => (read.bytes = used.bytes))) {
      for (const line of batch) {
        read.records++
        yield line
      }
    }
  } finally {
    done?.(read)
  }
}

/**
 * The lines `lines` gives, a chunk's lines at a time: a reader that takes them all loops over arrays rather than
 * resuming a generator per line. A batch's lines count as given (`done`) once it is.
 *
 * @since 0.1.0
 */
export function* lineBatches(
  files: Files,
  path: string,
  start: number,
  length: number,
  done?: (read: Tally) => void
): Generator<Array<string>> {
  const reader = files.openRead(path)
  const read: Tally = { bytes: 0, records: 0 }
  try {
    const end = start + length
    let buffer = Buffer.allocUnsafe(chunkSize)
    // The bytes of a line cut by the previous chunk's end, at the buffer's start: the next chunk is read after them,
    // so that a chunk's lines are decoded from one place without first copying the chunk behind them.
    let carried = 0
    let position = start
    // A split after the first skips the line it starts inside of (or at: that one is the previous split's).
    let skipping = start > 0
    for (;;) {
      if (carried + chunkSize > buffer.length) {
        const grown = Buffer.allocUnsafe(carried + chunkSize)
        buffer.copy(grown, 0, 0, carried)
        buffer = grown
      }
      const got = reader.read(buffer, carried, chunkSize, position)
      if (got === 0) break
      // The carried line, then the chunk; `position - carried` is where the buffer starts in the file.
      const size = carried + got
      const chunk = buffer.subarray(0, size)
      let from = 0
      if (skipping) {
        const skipped = chunk.indexOf(newline)
        if (skipped < 0) {
          read.bytes += got
          position += got
          continue
        }
        skipping = false
        from = skipped + 1
        if (position + skipped >= end) {
          read.bytes += from
          return
        }
      }
      // Past the split's end, the line that ends at the first newline at or after it is the last one read.
      let stop = size
      let last = false
      if (position + got > end) {
        const cut = chunk.indexOf(newline, Math.max(from, end - position + carried))
        if (cut >= 0) {
          stop = cut + 1
          last = true
        }
      }
      const lastNewline = stop > from ? chunk.lastIndexOf(newline, stop - 1) : -1
      if (lastNewline < from) {
        buffer.copy(buffer, 0, from, size)
        carried = size - from
        read.bytes += got
        position += got
        continue
      }
      const text = chunk.toString("utf8", from, lastNewline)
      read.bytes += stop - carried
      const batch = text.split("\n")
      for (let i = 0; i < batch.length; i++) {
        const line = batch[i]!
        if (line.charCodeAt(line.length - 1) === 13) batch[i] = line.slice(0, -1)
      }
      read.records += batch.length
      yield batch
      if (last) return
      buffer.copy(buffer, 0, lastNewline + 1, size)
      carried = size - lastNewline - 1
      position += got
    }
    // The last line of a file without a final newline.
    if (!skipping && carried > 0) {
      const text = buffer.toString("utf8", 0, carried)
      read.records++
      yield [text.endsWith("\r") ? text.slice(0, -1) : text]
    }
  } finally {
    reader.close()
    done?.(read)
  }
}

/**
 * The text of a whole file, decompressed when its name says it is compressed (`.gz`, `.zst`). A compressed file
 * cannot be cut into byte ranges, so it is read whole, as Hadoop reads it: the file's text must fit in memory.
 *
 * @since 0.1.0
 */
export const wholeText = (files: Files, path: string): { readonly text: string; readonly bytes: number } => {
  const bytes = files.readFile(path)
  const codec = Compression.codecOf(path)
  const text = Buffer.from(codec === undefined ? bytes : Compression.decompress(bytes, codec)).toString("utf8")
  return { text, bytes: bytes.length }
}

/**
 * The lines of a text, as `lines` gives a file's: a final line end ends the last line, it starts no other.
 *
 * @since 0.1.0
 */
export function* linesOf(text: string): Generator<string> {
  const all = text.split("\n")
  if (all.at(-1) === "") all.pop()
  for (const line of all) yield line.endsWith("\r") ? line.slice(0, -1) : line
}

/**
 * The lines of a whole file — compressed (one split: it cannot be cut) or read whole so that a record may span
 * lines — as `lines` gives them; `done` is told the bytes read of the file and the lines given.
 *
 * @since 0.1.0
 */
export function* wholeFileLines(files: Files, path: string, done?: (read: Tally) => void): Generator<string> {
  const read: Tally = { bytes: 0, records: 0 }
  try {
    const { bytes, text } = wholeText(files, path)
    read.bytes = bytes
    for (const line of linesOf(text)) {
      read.records++
      yield line
    }
  } finally {
    done?.(read)
  }
}
