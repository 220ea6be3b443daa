/**
 * Records on disk, as shuffle outputs, spills and cached partitions hold them: batches of records, each batch a
 * frame — a 4-byte little-endian length, then the batch as one `Records` (MessagePack) array — so that records
 * are encoded and decoded many at a time, and a file can be read in pieces without reading it whole. All of it
 * is synchronous: it runs on task threads, inside a task's evaluation.
 *
 * @since 0.1.0
 */
import * as Records from "@kindling/protocol/records"
import * as Fs from "node:fs"

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
 * How many records a batch holds at most.
 *
 * @since 0.1.0
 */
export const batchSize = 512

/**
 * One frame: the records encoded as one array, after its length.
 *
 * @since 0.1.0
 */
export const frame = (records: ReadonlyArray<unknown>): Uint8Array => {
  const body = Records.encode(records)
  const framed = new Uint8Array(4 + body.length)
  new DataView(framed.buffer).setUint32(0, body.length, true)
  framed.set(body, 4)
  return framed
}

/**
 * A file being written from the start, keeping track of where it is.
 *
 * @since 0.1.0
 * @category models
 */
export class Appender {
  private readonly fd: number
  position = 0

  constructor(readonly path: string) {
    this.fd = Fs.openSync(path, "w")
  }

  write(bytes: Uint8Array): void {
    let written = 0
    while (written < bytes.length) {
      written += Fs.writeSync(this.fd, bytes, written, bytes.length - written, this.position + written)
    }
    this.position += bytes.length
  }

  /** Copies a byte range of another file here. */
  copy(path: string, offset: number, length: number): void {
    const fd = Fs.openSync(path, "r")
    try {
      const buffer = Buffer.allocUnsafe(Math.min(length, 1 << 20))
      let done = 0
      while (done < length) {
        const read = Fs.readSync(fd, buffer, 0, Math.min(buffer.length, length - done), offset + done)
        if (read === 0) throw new Error(`${path} ended before byte ${offset + length}`)
        this.write(buffer.subarray(0, read))
        done += read
      }
    } finally {
      Fs.closeSync(fd)
    }
  }

  close(): void {
    Fs.closeSync(this.fd)
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

const readFully = (fd: number, buffer: Uint8Array, position: number, path: string) => {
  let done = 0
  while (done < buffer.length) {
    const read = Fs.readSync(fd, buffer, done, buffer.length - done, position + done)
    if (read === 0) throw new Error(`${path} ended early: a frame at ${position} is cut short`)
    done += read
  }
}

/**
 * The records of a segment's frames, in order, read a frame at a time.
 *
 * @since 0.1.0
 */
export function* read(segment: Segment): Generator<unknown> {
  if (segment._tag === "Bytes") {
    const { bytes } = segment
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    for (let at = 0; at < bytes.length;) {
      const length = view.getUint32(at, true)
      yield* Records.decode(bytes.subarray(at + 4, at + 4 + length)) as Array<unknown>
      at += 4 + length
    }
    return
  }
  if (segment.length === 0) return
  const fd = Fs.openSync(segment.path, "r")
  try {
    const header = new Uint8Array(4)
    const end = segment.offset + segment.length
    for (let at = segment.offset; at < end;) {
      readFully(fd, header, at, segment.path)
      const length = new DataView(header.buffer).getUint32(0, true)
      const body = Buffer.allocUnsafe(length)
      readFully(fd, body, at + 4, segment.path)
      yield* Records.decode(body) as Array<unknown>
      at += 4 + length
    }
  } finally {
    Fs.closeSync(fd)
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
