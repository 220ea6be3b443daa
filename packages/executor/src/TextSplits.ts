/**
 * The lines of a byte range of a text file, as Hadoop's line reader cuts files: a split owns the lines that
 * start after its first byte (from byte 0 for the first split) up to and including its last byte, so however a
 * file is cut into splits every line is read exactly once. Reading stops at the first line end past the split.
 *
 * @since 0.1.0
 */
import * as Fs from "node:fs"

const chunkSize = 64 * 1024
const newline = 0x0a

/**
 * The lines that start in `(start, start + length]` (or `[0, length]` when `start` is 0), without `\n` or
 * `\r\n`, decoded as UTF-8.
 *
 * @since 0.1.0
 */
export function* lines(path: string, start: number, length: number): Generator<string> {
  const fd = Fs.openSync(path, "r")
  try {
    const end = start + length
    const buffer = Buffer.alloc(chunkSize)
    // Bytes of the line being assembled, and where it started in the file.
    let pending: Array<Buffer> = []
    let lineStart = start
    let position = start
    // A split after the first skips the line it starts inside of (or at: that one is the previous split's).
    let skipping = start > 0
    for (;;) {
      const read = Fs.readSync(fd, buffer, 0, chunkSize, position)
      if (read === 0) break
      let from = 0
      for (let i = 0; i < read; i++) {
        if (buffer[i] !== newline) continue
        const lineEnd = position + i
        if (skipping) {
          skipping = false
        } else {
          pending.push(Buffer.from(buffer.subarray(from, i)))
          yield decode(pending)
        }
        pending = []
        from = i + 1
        lineStart = lineEnd + 1
        if (lineStart > end) return
      }
      if (!skipping) pending.push(Buffer.from(buffer.subarray(from, read)))
      position += read
    }
    // The last line of a file without a final newline.
    if (!skipping && lineStart <= end && pending.some((piece) => piece.length > 0)) yield decode(pending)
  } finally {
    Fs.closeSync(fd)
  }
}

const decode = (pieces: ReadonlyArray<Buffer>): string => {
  const text = Buffer.concat(pieces).toString("utf8")
  return text.endsWith("\r") ? text.slice(0, -1) : text
}
