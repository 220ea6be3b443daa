/**
 * Records on disk, as shuffle outputs, spills and cached partitions hold them: batches of records, each batch a
 * frame — a 4-byte little-endian length, the CRC-32 of the body (4 bytes, little-endian), then the body: the batch
 * as one `Records` (MessagePack) array — so that records are encoded and decoded many at a time, a file can be
 * read in pieces without reading it whole, and bytes that rotted on a disk or were cut short are found out
 * (`CorruptFrame`) rather than read as other records. All of it is synchronous: it runs on task threads, inside a
 * task's evaluation, on the files of the `Disk` it is given.
 *
 * @since 0.1.0
 */
import type { Disk } from "@kindling/data"
import * as Records from "@kindling/protocol/records"
import * as Zlib from "node:zlib"

/**
 * Where some frames are: a byte range of a file, or bytes in memory (a small block fetched from another
 * executor).
 *
 * @since 0.1.0
 * @category models
 */
export type Segment =
  | { readonly _tag: "File"; readonly path: string; readonly offset: number; readonly length: number }
  | { readonly _tag: "Bytes"; readonly bytes: Uint8Array }

/**
 * Frames that are not what was written: a body whose checksum does not match, or a frame cut short.
 *
 * @since 0.1.0
 * @category errors
 */
export class CorruptFrame extends Error {
  constructor(readonly where: string, readonly offset: number, readonly reason: string) {
    super(`The frame at byte ${offset} of ${where} is corrupt: ${reason}`)
    this.name = "CorruptFrame"
  }
}

const headerSize = 8

/**
 * How many records a batch holds at most.
 *
 * @since 0.1.0
 */
export const batchSize = 512

/**
 * One frame: the records encoded as one array, after its length and checksum.
 *
 * @since 0.1.0
 */
export const frame = (records: ReadonlyArray<unknown>): Uint8Array => {
  const body = Records.encode(records)
  const framed = new Uint8Array(headerSize + body.length)
  const view = new DataView(framed.buffer)
  view.setUint32(0, body.length, true)
  view.setUint32(4, Zlib.crc32(body), true)
  framed.set(body, headerSize)
  return framed
}

/**
 * A file being written from the start, keeping track of where it is.
 *
 * @since 0.1.0
 * @category models
 */
export class Appender {
  private readonly writer: ReturnType<Disk.Files["openWrite"]>
  position = 0

  constructor(private readonly files: Disk.Files, readonly path: string) {
    this.writer = files.openWrite(path)
  }

  write(bytes: Uint8Array): void {
    this.writer.write(bytes, this.position)
    this.position += bytes.length
  }

  /** Copies a byte range of another file here. */
  copy(path: string, offset: number, length: number): void {
    const reader = this.files.openRead(path)
    try {
      const buffer = Buffer.allocUnsafe(Math.min(length, 1 << 20))
      let done = 0
      while (done < length) {
        const read = reader.read(buffer, 0, Math.min(buffer.length, length - done), offset + done)
        if (read === 0) throw new CorruptFrame(path, offset + done, `the file ends before byte ${offset + length}`)
        this.write(buffer.subarray(0, read))
        done += read
      }
    } finally {
      reader.close()
    }
  }

  close(): void {
    this.writer.close()
  }
}

/**
 * Collects records into frames; `flush` hands each full frame to `sink`.
 *
 * @since 0.1.0
 * @category models
 */
export class Batcher {
  private records: Array<unknown> = []

  constructor(private readonly sink: (frame: Uint8Array, count: number) => void) {}

  push(record: unknown): void {
    this.records.push(record)
    if (this.records.length >= batchSize) this.flush()
  }

  flush(): void {
    if (this.records.length === 0) return
    const records = this.records
    this.records = []
    this.sink(frame(records), records.length)
  }
}

const readFully = (reader: ReturnType<Disk.Files["openRead"]>, buffer: Uint8Array, position: number, path: string) => {
  let done = 0
  while (done < buffer.length) {
    const read = reader.read(buffer, done, buffer.length - done, position + done)
    if (read === 0) throw new CorruptFrame(path, position, "the file ends inside it")
    done += read
  }
}

// The records of one frame's body, once it is known to be the one written.
const records = (body: Uint8Array, checksum: number, where: string, at: number): Array<unknown> => {
  if (Zlib.crc32(body) !== checksum) throw new CorruptFrame(where, at, "its checksum does not match")
  return Records.decode(body) as Array<unknown>
}

/**
 * The records of a segment's frames, in order, read a frame at a time from `files`; throws `CorruptFrame` at the
 * first frame that is not what was written.
 *
 * @since 0.1.0
 */
export function* read(files: Disk.Files, segment: Segment): Generator<unknown> {
  if (segment._tag === "Bytes") {
    const { bytes } = segment
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    for (let at = 0; at < bytes.length;) {
      if (at + headerSize > bytes.length) throw new CorruptFrame("a fetched block", at, "the block ends inside it")
      const length = view.getUint32(at, true)
      if (at + headerSize + length > bytes.length) {
        throw new CorruptFrame("a fetched block", at, "the block ends inside it")
      }
      const body = bytes.subarray(at + headerSize, at + headerSize + length)
      yield* records(body, view.getUint32(at + 4, true), "a fetched block", at)
      at += headerSize + length
    }
    return
  }
  if (segment.length === 0) return
  const reader = files.openRead(segment.path)
  try {
    const header = new Uint8Array(headerSize)
    const view = new DataView(header.buffer)
    const end = segment.offset + segment.length
    for (let at = segment.offset; at < end;) {
      readFully(reader, header, at, segment.path)
      const length = view.getUint32(0, true)
      if (at + headerSize + length > end) throw new CorruptFrame(segment.path, at, "it runs past its segment")
      const body = Buffer.allocUnsafe(length)
      readFully(reader, body, at + headerSize, segment.path)
      yield* records(body, view.getUint32(4, true), segment.path, at)
      at += headerSize + length
    }
  } finally {
    reader.close()
  }
}

/**
 * A rough size in memory of a value, in bytes, for deciding when to spill: not exact, but it grows with the
 * value. Deep structures are looked at to a few levels only.
 *
 * @since 0.1.0
 */
export const estimateSize = (value: unknown, depth = 0): number => {
  switch (typeof value) {
    case "string":
      return 16 + value.length * 2
    case "number":
    case "boolean":
      return 8
    case "bigint":
      return 24
    case "object": {
      if (value === null) return 8
      if (depth > 3) return 64
      if (Array.isArray(value)) {
        let size = 24
        const step = Math.max(1, Math.floor(value.length / 16))
        let sampled = 0
        let total = 0
        for (let i = 0; i < value.length; i += step) {
          total += estimateSize(value[i], depth + 1) + 8
          sampled++
        }
        if (sampled > 0) size += (total / sampled) * value.length
        return size
      }
      if (ArrayBuffer.isView(value)) return 48 + value.byteLength
      let size = 32
      for (const key in value) size += 16 + key.length * 2 + estimateSize((value as never)[key], depth + 1)
      return size
    }
    default:
      return 16
  }
}
