// Frames: an envelope packed into one length-prefixed frame, a frame's payload unpacked back to an envelope, and
// a byte stream split into payloads (`FrameDecoder`).
import * as Either from "effect/Either"
import { Packr, RESERVE_START_SPACE } from "msgpackr"
import type { Envelope } from "../Envelope.js"
import { FrameTooLarge, MalformedFrame } from "../Errors.js"
import { decodeEnvelope, envelopeValue } from "./envelopes.js"

export const headerSize = 4

// Records are msgpackr's own extension; plain maps keep the wire readable by any MessagePack library. Other
// libraries write every integer of 2^32 and above as a 64-bit integer, which msgpackr reads as a BigInt unless
// told otherwise: "auto" reads one that fits a double exactly as a number. (msgpackr 1.12 has the option; its
// typings predate it.)
const packr = new Packr({
  useRecords: false,
  moreTypes: false,
  mapsAsObjects: true,
  int64AsType: "auto" as unknown as "number"
})

const isWideInteger = (n: number) => Number.isSafeInteger(n) && (n > 0xffffffff || n < -0x80000000)

const setOwn = (target: Record<string, unknown>, key: string, value: unknown) => {
  // A plain assignment to `__proto__` would replace the prototype rather than set the key.
  if (key === "__proto__") Object.defineProperty(target, key, { value, enumerable: true, writable: true })
  else target[key] = value
}

export const integersAsInt64 = (value: unknown): unknown => {
  if (typeof value === "number") return isWideInteger(value) ? BigInt(value) : value
  if (typeof value !== "object" || value === null || ArrayBuffer.isView(value)) return value
  if (Array.isArray(value)) {
    let copy: Array<unknown> | undefined
    for (let i = 0; i < value.length; i++) {
      const item = value[i]
      const converted = integersAsInt64(item)
      if (converted !== item) (copy ??= value.slice())[i] = converted
    }
    return copy ?? value
  }
  const record = value as Record<string, unknown>
  let copy: Record<string, unknown> | undefined
  for (const key of Object.keys(record)) {
    const item = record[key]
    const converted = integersAsInt64(item)
    if (converted !== item) setOwn(copy ??= { ...record }, key, converted)
  }
  return copy ?? value
}

export const encodeFrame = (
  envelope: Envelope,
  maxFrameSize: number
): Either.Either<Uint8Array, MalformedFrame | FrameTooLarge> => {
  let frame: Uint8Array
  try {
    // msgpackr leaves room for the header in front of the payload, so the frame is never copied. It never
    // reuses the bytes of a buffer it returned, so the frame stays valid while a socket holds on to it.
    frame = packr.pack(integersAsInt64(envelopeValue(envelope)), RESERVE_START_SPACE | headerSize)
  } catch (error) {
    return Either.left(new MalformedFrame({ reason: `cannot pack envelope: ${String(error)}` }))
  }
  const size = frame.length - headerSize
  if (size > maxFrameSize) return Either.left(new FrameTooLarge({ size, maxSize: maxFrameSize }))
  frame[0] = size >>> 24
  frame[1] = (size >>> 16) & 0xff
  frame[2] = (size >>> 8) & 0xff
  frame[3] = size & 0xff
  return Either.right(frame)
}

export const unpackPayload = (payload: Uint8Array): Either.Either<unknown, MalformedFrame> => {
  try {
    return Either.right(packr.unpack(payload))
  } catch (error) {
    return Either.left(
      new MalformedFrame({ reason: `not MessagePack: ${error instanceof Error ? error.message : String(error)}` })
    )
  }
}

export const decodePayload = (payload: Uint8Array): Either.Either<Envelope, MalformedFrame> =>
  Either.flatMap(unpackPayload(payload), decodeEnvelope)

export class FrameDecoder {
  private chunks: Array<Uint8Array> = []
  private buffered = 0
  private expected = -1
  private poisoned: FrameTooLarge | undefined

  /** The largest frame accepted; a node raises it once a connection's handshake is done. */
  constructor(public maxFrameSize: number) {}

  /**
   * Feeds bytes; returns the payloads completed by them, or the error that ended the stream.
   */
  push(chunk: Uint8Array): Either.Either<Array<Uint8Array>, FrameTooLarge> {
    return this.frames(chunk, (n) => this.take(n))
  }

  /**
   * Like `push`, but gives each payload as the pieces of input it arrived in, views that are never copied: for
   * a stream of large frames, such as a data connection's chunks.
   */
  pushPieces(chunk: Uint8Array): Either.Either<Array<Array<Uint8Array>>, FrameTooLarge> {
    return this.frames(chunk, (n) => this.takePieces(n))
  }

  private frames<P>(chunk: Uint8Array, take: (n: number) => P): Either.Either<Array<P>, FrameTooLarge> {
    if (this.poisoned !== undefined) return Either.left(this.poisoned)
    if (chunk.length > 0) {
      this.chunks.push(chunk)
      this.buffered += chunk.length
    }
    const frames: Array<P> = []
    for (;;) {
      if (this.expected < 0) {
        if (this.buffered < headerSize) break
        const header = this.take(headerSize)
        this.expected = ((header[0]! << 24) | (header[1]! << 16) | (header[2]! << 8) | header[3]!) >>> 0
        if (this.expected > this.maxFrameSize) {
          this.poisoned = new FrameTooLarge({ size: this.expected, maxSize: this.maxFrameSize })
          this.chunks = []
          this.buffered = 0
          return Either.left(this.poisoned)
        }
      }
      if (this.buffered < this.expected) break
      frames.push(take(this.expected))
      this.expected = -1
    }
    return Either.right(frames)
  }

  /** Bytes of a frame that has started but not finished. */
  get pending(): number {
    return this.buffered
  }

  private take(n: number): Uint8Array {
    if (n === 0) return new Uint8Array(0)
    const first = this.chunks[0]!
    if (first.length >= n) {
      const out = first.subarray(0, n)
      if (first.length === n) this.chunks.shift()
      else this.chunks[0] = first.subarray(n)
      this.buffered -= n
      return out
    }
    const out = new Uint8Array(n)
    let offset = 0
    while (offset < n) {
      const head = this.chunks[0]!
      const count = Math.min(head.length, n - offset)
      out.set(head.subarray(0, count), offset)
      offset += count
      if (count === head.length) this.chunks.shift()
      else this.chunks[0] = head.subarray(count)
    }
    this.buffered -= n
    return out
  }

  private takePieces(n: number): Array<Uint8Array> {
    const pieces: Array<Uint8Array> = []
    for (let left = n; left > 0;) {
      const head = this.chunks[0]!
      if (head.length <= left) {
        pieces.push(head)
        this.chunks.shift()
        left -= head.length
      } else {
        pieces.push(head.subarray(0, left))
        this.chunks[0] = head.subarray(left)
        left = 0
      }
    }
    this.buffered -= n
    return pieces
  }
}
