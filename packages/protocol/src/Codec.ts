/**
 * The wire codec: messages to schema-encoded bodies, envelopes to MessagePack, and MessagePack to
 * length-prefixed frames — and back, where every failure is a typed `MalformedFrame` or `FrameTooLarge`.
 *
 * A frame is a 4-byte big-endian unsigned length followed by that many bytes of one MessagePack-encoded
 * envelope (standard MessagePack, no extensions). Integers are MessagePack integers both ways: whole numbers
 * beyond 32 bits are written as 64-bit integers, and 64-bit integers are read as numbers when they are safe
 * integers (|n| ≤ 2^53 − 1); larger ones stay BigInt, which every schema refuses by name.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { Packr, RESERVE_START_SPACE } from "msgpackr"
import type { DataEnvelope, Envelope, Purpose } from "./Envelope.js"
import { FrameTooLarge, MalformedFrame } from "./Errors.js"
import * as Compiled from "./internal/compiled.js"
import { RpcAddress } from "./RpcAddress.js"

/**
 * The bytes in front of every frame's payload.
 *
 * @since 0.1.0
 * @category constants
 */
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

/**
 * msgpackr writes every number that is not a 32-bit integer as a float64, whole or not, and a float is what
 * other languages then read, where their integer fields refuse it. So a whole number beyond 32 bits (a
 * timestamp, a byte count) goes out as a BigInt, which msgpackr writes as a 64-bit integer. Containers are
 * copied only where something changes; bytes are left alone.
 *
 * @since 0.1.0
 * @category encoding
 */
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

/**
 * A protocol message: an instance of one of the message classes (its constructor is its schema).
 *
 * @since 0.1.0
 * @category models
 */
export interface Message {
  readonly _tag: string
}

// A reason is one line an operator can read: the first problem and where it is. Effect's tree of every union
// member tried runs to kilobytes for one wrong field.
const reasonLimit = 300

const valueAt = (input: unknown, path: ReadonlyArray<PropertyKey>): unknown =>
  path.reduce<unknown>(
    (
      value,
      key
    ) => (typeof value === "object" && value !== null ? (value as Record<PropertyKey, unknown>)[key] : undefined),
    input
  )

const isUnsafeInteger = (u: unknown) =>
  typeof u === "bigint" || (typeof u === "number" && Number.isInteger(u) && !Number.isSafeInteger(u))

const parseErrorText = (issue: ParseResult.ParseIssue, input: unknown): string => {
  const issues = ParseResult.ArrayFormatter.formatIssueSync(issue)
  // In a union of unions (an endpoint's inbound), each member union whose tags do not match reports `_tag`; the
  // one the tag chose reports the field that is wrong, which is what the reader needs.
  const isTag = (candidate: ParseResult.ArrayFormatterIssue) =>
    candidate.path.length === 1 && candidate.path[0] === "_tag"
  const first = issues.find((candidate) => !isTag(candidate)) ?? issues[0]
  if (first === undefined) return "invalid value"
  const others = issues.filter((other) => other !== first && !isTag(other))
  // The path starts at the message's tag, when it has one: "RequestSubmitDriver.driverDescription.mem".
  const tag = (input as { readonly _tag?: unknown } | null)?._tag
  const names = [...(typeof tag === "string" ? [tag.slice(0, 64)] : []), ...first.path.map(String)]
  const at = names.length === 0 ? "" : `${names.join(".")}: `
  const actual = valueAt(input, first.path)
  const problem = isUnsafeInteger(actual)
    ? `${String(actual)} is not a safe integer (integers must lie within ±(2^53 − 1))`
    : first.message
  const more = others.length === 0 ? "" : ` (and ${others.length} more)`
  const text = `${at}${problem}${more}`
  return text.length > reasonLimit ? `${text.slice(0, reasonLimit)}…` : text
}

const schemaOf = (message: Message): Schema.Schema<any, any, never> | undefined => {
  const ctor = (message as { readonly constructor?: unknown }).constructor
  return Schema.isSchema(ctor) ? ctor as Schema.Schema<any, any, never> : undefined
}

/**
 * A message to the plain value that goes in an envelope's body.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encodeMessage = (message: Message): Either.Either<unknown, MalformedFrame> => {
  const schema = schemaOf(message)
  if (schema === undefined) {
    return Either.left(new MalformedFrame({ reason: `${message._tag} is not an instance of a message class` }))
  }
  return encodeWith(schema, message)
}

/**
 * A value to its wire form with the given schema (replies and errors use their request's schemas).
 *
 * @since 0.1.0
 * @category encoding
 */
export const encodeWith = <A, I>(schema: Schema.Schema<A, I, never>, value: A): Either.Either<I, MalformedFrame> => {
  const fast = Compiled.compile(schema).encode(value)
  if (fast !== Compiled.Fail) return Either.right(fast as I)
  return Either.mapLeft(
    ParseResult.encodeEither(schema)(value),
    (error) => new MalformedFrame({ reason: `cannot encode ${parseErrorText(error, value)}` })
  )
}

/**
 * A body back to a message of the given schema (usually an endpoint's inbound union).
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeWith = <A, I>(
  schema: Schema.Schema<A, I, never>,
  body: unknown
): Either.Either<A, MalformedFrame> => {
  const fast = Compiled.compile(schema).decode(body)
  if (fast !== Compiled.Fail) return Either.right(fast as A)
  return Either.mapLeft(
    ParseResult.decodeUnknownEither(schema)(body),
    (error) => new MalformedFrame({ reason: parseErrorText(error, body) })
  )
}

// Envelopes are built by the RpcEnv itself, so encoding needs no validation, only the address classes turned
// into maps; decoding checks by hand exactly what the `Envelope` schema states (a property test holds the two
// together). Both run twice per round trip, and the schema-driven versions cost more than the socket.
const plainAddress = (address: { readonly host: string; readonly port: number } | null) =>
  address === null ? null : { host: address.host, port: address.port }

const envelopeValue = (envelope: Envelope): Record<string, unknown> => {
  switch (envelope._tag) {
    case "hello": {
      const value: Record<string, unknown> = {
        _tag: "hello",
        version: envelope.version,
        address: plainAddress(envelope.address),
        nonce: envelope.nonce
      }
      if (envelope.purpose !== undefined) value.purpose = envelope.purpose
      return value
    }
    case "welcome":
      return { _tag: "welcome", version: envelope.version, address: plainAddress(envelope.address) }
    case "send":
      return { _tag: "send", from: plainAddress(envelope.from), to: envelope.to, body: envelope.body }
    case "ask":
      return { _tag: "ask", id: envelope.id, from: plainAddress(envelope.from), to: envelope.to, body: envelope.body }
    default:
      return envelope
  }
}

type Checked<A> = A | MalformedFrame

const notEnvelope = (reason: string) => new MalformedFrame({ reason: `not an envelope: ${reason}` })

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const isInt = (u: unknown): u is number => typeof u === "number" && Number.isSafeInteger(u)

const decodeAddress = Compiled.compile(RpcAddress).decode

const checkAddress = (u: unknown, field: string): Checked<RpcAddress | null> => {
  if (u === null) return null
  const address = decodeAddress(u)
  return address === Compiled.Fail
    ? notEnvelope(`${field} must be null or an address { host, port }`)
    : address as RpcAddress
}

// What a wrong number was, for the reason: the value itself when it is a number, else its type.
const shown = (u: unknown) => typeof u === "number" || typeof u === "bigint" ? String(u) : u === null ? "nil" : typeof u

const checkCount = (u: unknown, field: string): Checked<number> =>
  isInt(u) && u >= 0 ? u : notEnvelope(`${field} must be a non-negative safe integer (≤ 2^53 − 1), got ${shown(u)}`)

const checkId = (u: unknown): Checked<number> => checkCount(u, "id")

const checkBytes = (u: unknown, field: string): Checked<Uint8Array> =>
  u instanceof Uint8Array ? u : notEnvelope(`${field} must be bytes`)

const checkBody = (u: unknown, field: string): Checked<unknown> =>
  u === undefined ? notEnvelope(`${field} is missing`) : u

const isPurpose = (u: unknown): u is Purpose => u === "control" || u === "data"

// The data plane's envelopes, checked as the `DataEnvelope` schema states.
const dataEnvelopeOf = (value: Record<string, unknown>): Checked<DataEnvelope> | undefined => {
  switch (value._tag) {
    case "fetch": {
      const id = checkId(value.id)
      if (id instanceof MalformedFrame) return id
      if (typeof value.block !== "string") return notEnvelope("block must be a string")
      const offset = checkCount(value.offset, "offset")
      if (offset instanceof MalformedFrame) return offset
      const window = checkCount(value.window, "window")
      return window instanceof MalformedFrame ? window : { _tag: "fetch", id, block: value.block, offset, window }
    }
    case "chunk": {
      const id = checkId(value.id)
      if (id instanceof MalformedFrame) return id
      const offset = checkCount(value.offset, "offset")
      if (offset instanceof MalformedFrame) return offset
      if (!isInt(value.crc) || value.crc < 0 || value.crc > 0xffffffff) {
        return notEnvelope(`crc must be a uint32, got ${shown(value.crc)}`)
      }
      const data = checkBytes(value.data, "data")
      return data instanceof MalformedFrame ? data : { _tag: "chunk", id, offset, crc: value.crc, data }
    }
    case "credit": {
      const id = checkId(value.id)
      if (id instanceof MalformedFrame) return id
      if (!isInt(value.bytes) || value.bytes <= 0) {
        return notEnvelope(`bytes must be a positive safe integer, got ${shown(value.bytes)}`)
      }
      return { _tag: "credit", id, bytes: value.bytes }
    }
    case "end": {
      const id = checkId(value.id)
      if (id instanceof MalformedFrame) return id
      const size = checkCount(value.size, "size")
      return size instanceof MalformedFrame ? size : { _tag: "end", id, size }
    }
    case "cancel": {
      const id = checkId(value.id)
      return id instanceof MalformedFrame ? id : { _tag: "cancel", id }
    }
    case "fetchFailed": {
      const id = checkId(value.id)
      if (id instanceof MalformedFrame) return id
      const error = checkBody(value.error, "error")
      return error instanceof MalformedFrame ? error : { _tag: "fetchFailed", id, error }
    }
    default:
      return undefined
  }
}

const envelopeOf = (value: unknown): Checked<Envelope> => {
  if (!isRecord(value)) return notEnvelope("expected a map")
  switch (value._tag) {
    case "send":
    case "ask": {
      const from = checkAddress(value.from, "from")
      if (from instanceof MalformedFrame) return from
      if (typeof value.to !== "string") return notEnvelope("to must be a string")
      const body = checkBody(value.body, "body")
      if (body instanceof MalformedFrame) return body
      if (value._tag === "send") return { _tag: "send", from, to: value.to, body }
      const id = checkId(value.id)
      if (id instanceof MalformedFrame) return id
      return { _tag: "ask", id, from, to: value.to, body }
    }
    case "reply":
    case "failure": {
      const id = checkId(value.id)
      if (id instanceof MalformedFrame) return id
      if (value._tag === "reply") {
        const body = checkBody(value.body, "body")
        return body instanceof MalformedFrame ? body : { _tag: "reply", id, body }
      }
      const error = checkBody(value.error, "error")
      return error instanceof MalformedFrame ? error : { _tag: "failure", id, error }
    }
    case "hello": {
      if (!isInt(value.version)) return notEnvelope(`version must be an integer, got ${shown(value.version)}`)
      const address = checkAddress(value.address, "address")
      if (address instanceof MalformedFrame) return address
      const nonce = value.nonce === null ? null : checkBytes(value.nonce, "nonce")
      if (nonce instanceof MalformedFrame) return nonce
      if (!("purpose" in value)) return { _tag: "hello", version: value.version, address, nonce }
      if (!isPurpose(value.purpose)) return notEnvelope("purpose must be \"control\" or \"data\"")
      return { _tag: "hello", version: value.version, address, nonce, purpose: value.purpose }
    }
    case "challenge": {
      const nonce = checkBytes(value.nonce, "nonce")
      if (nonce instanceof MalformedFrame) return nonce
      const proof = checkBytes(value.proof, "proof")
      return proof instanceof MalformedFrame ? proof : { _tag: "challenge", nonce, proof }
    }
    case "proof": {
      const proof = checkBytes(value.proof, "proof")
      return proof instanceof MalformedFrame ? proof : { _tag: "proof", proof }
    }
    case "welcome": {
      if (!isInt(value.version)) return notEnvelope(`version must be an integer, got ${shown(value.version)}`)
      const address = checkAddress(value.address, "address")
      return address instanceof MalformedFrame ? address : { _tag: "welcome", version: value.version, address }
    }
    case "reject": {
      const error = checkBody(value.error, "error")
      return error instanceof MalformedFrame ? error : { _tag: "reject", error }
    }
    case "ping":
      return { _tag: "ping" }
    default:
      return dataEnvelopeOf(value) ?? notEnvelope(`unknown kind ${JSON.stringify(String(value._tag))}`)
  }
}

/**
 * An envelope to one frame (header included), refusing frames over `maxFrameSize` bytes.
 *
 * @since 0.1.0
 * @category encoding
 */
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

const textEncoder = new TextEncoder()
const fixstr = (text: string) => [0xa0 | text.length, ...textEncoder.encode(text)]

// The layout Kindling writes a chunk's envelope in: a map of 5 entries whose data comes last, with fixed-size
// encodings for its numbers (uint64 for id and offset, which may pass 32 bits). Positions are those of each
// value's type byte, from the start of the payload.
const chunkLayout = (() => {
  const bytes = [0x85, ...fixstr("_tag"), ...fixstr("chunk"), ...fixstr("id")]
  const idAt = bytes.length
  bytes.push(0xcf, 0, 0, 0, 0, 0, 0, 0, 0, ...fixstr("offset"))
  const offsetAt = bytes.length
  bytes.push(0xcf, 0, 0, 0, 0, 0, 0, 0, 0, ...fixstr("crc"))
  const crcAt = bytes.length
  bytes.push(0xce, 0, 0, 0, 0, ...fixstr("data"))
  const sizeAt = bytes.length
  bytes.push(0xc6, 0, 0, 0, 0)
  const values = new Set<number>()
  for (const [at, size] of [[idAt, 8], [offsetAt, 8], [crcAt, 4], [sizeAt, 4]]) {
    for (let i = 1; i <= size; i++) values.add(at + i)
  }
  const template = Uint8Array.from(bytes)
  return {
    template,
    fixed: Array.from(template.keys()).filter((i) => !values.has(i)),
    idAt,
    offsetAt,
    crcAt,
    sizeAt
  }
})()

// A safe non-negative integer as a big-endian uint64, in two halves: no BigInt on the data plane's hot path.
const setUint64 = (view: DataView, at: number, n: number) => {
  view.setUint32(at, Math.floor(n / 0x100000000))
  view.setUint32(at + 4, n >>> 0)
}
const getUint64 = (view: DataView, at: number) => view.getUint32(at) * 0x100000000 + view.getUint32(at + 4)

/**
 * What a chunk's frame adds to its data, in bytes: the frame header and the envelope around the data.
 *
 * @since 0.1.0
 * @category constants
 */
export const chunkFrameOverhead = headerSize + chunkLayout.template.length

/**
 * A chunk's frame as two pieces, the frame header and envelope up to the data, then the data itself, so that a
 * chunk goes out without copying its bytes. Together they are a frame of the `chunk` envelope, in the layout
 * `decodeChunkPieces` reads back without copying either. The caller keeps to the frame size limit.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encodeChunkFrame = (
  chunk: { readonly id: number; readonly offset: number; readonly crc: number; readonly data: Uint8Array }
): readonly [header: Uint8Array, data: Uint8Array] => {
  const { crcAt, idAt, offsetAt, sizeAt, template } = chunkLayout
  const header = new Uint8Array(headerSize + template.length)
  const view = new DataView(header.buffer)
  header.set(template, headerSize)
  view.setUint32(0, template.length + chunk.data.length)
  setUint64(view, headerSize + idAt + 1, chunk.id)
  setUint64(view, headerSize + offsetAt + 1, chunk.offset)
  view.setUint32(headerSize + crcAt + 1, chunk.crc)
  view.setUint32(headerSize + sizeAt + 1, chunk.data.length)
  return [header, chunk.data]
}

/**
 * A chunk whose data is still in the pieces it arrived in.
 *
 * @since 0.1.0
 * @category models
 */
export interface ChunkPieces {
  readonly id: number
  readonly offset: number
  readonly crc: number
  readonly data: ReadonlyArray<Uint8Array>
}

/**
 * A payload in pieces (see `FrameDecoder.pushPieces`) as a chunk, without joining its data, when it is a chunk in
 * the layout `encodeChunkFrame` writes. Anything else, chunks encoded otherwise included, is undefined: decode it
 * whole, with `decodePayload`.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeChunkPieces = (pieces: ReadonlyArray<Uint8Array>): ChunkPieces | undefined => {
  const { crcAt, fixed, idAt, offsetAt, sizeAt, template } = chunkLayout
  const head = pieces[0]
  if (head === undefined || head.length < template.length) return undefined
  for (const i of fixed) if (head[i] !== template[i]) return undefined
  const view = new DataView(head.buffer, head.byteOffset, template.length)
  const id = getUint64(view, idAt + 1)
  const offset = getUint64(view, offsetAt + 1)
  if (!Number.isSafeInteger(id) || id < 0 || !Number.isSafeInteger(offset) || offset < 0) return undefined
  let size = -template.length
  for (const piece of pieces) size += piece.length
  if (size !== view.getUint32(sizeAt + 1)) return undefined
  const first = head.subarray(template.length)
  return {
    id,
    offset,
    crc: view.getUint32(crcAt + 1),
    data: first.length > 0 ? [first, ...pieces.slice(1)] : pieces.slice(1)
  }
}

/**
 * An unpacked MessagePack value to an envelope, with the checks the `Envelope` schema states.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeEnvelope = (value: unknown): Either.Either<Envelope, MalformedFrame> => {
  const envelope = envelopeOf(value)
  return envelope instanceof MalformedFrame ? Either.left(envelope) : Either.right(envelope)
}

/**
 * One frame's payload (header removed) to the MessagePack value it holds, not yet checked as an envelope.
 *
 * @since 0.1.0
 * @category decoding
 */
export const unpackPayload = (payload: Uint8Array): Either.Either<unknown, MalformedFrame> => {
  try {
    return Either.right(packr.unpack(payload))
  } catch (error) {
    return Either.left(
      new MalformedFrame({ reason: `not MessagePack: ${error instanceof Error ? error.message : String(error)}` })
    )
  }
}

/**
 * One frame's payload (header removed) back to an envelope.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodePayload = (payload: Uint8Array): Either.Either<Envelope, MalformedFrame> =>
  Either.flatMap(unpackPayload(payload), decodeEnvelope)

/**
 * The id of an `ask` that is not a valid envelope but whose id is readable, so that its asker can be answered
 * with a `failure` rather than left to wait for its timeout.
 *
 * @since 0.1.0
 * @category decoding
 */
export const askIdOf = (value: unknown): number | undefined => {
  if (!isRecord(value) || value._tag !== "ask") return undefined
  const id = checkId(value.id)
  return id instanceof MalformedFrame ? undefined : id
}

/**
 * Splits a byte stream into frame payloads. After a `FrameTooLarge` the stream cannot be resynchronised, so
 * the decoder refuses further input and the connection must be closed.
 *
 * @since 0.1.0
 * @category decoding
 */
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
