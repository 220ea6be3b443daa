/**
 * The wire codec: messages to schema-encoded bodies, envelopes to MessagePack, and MessagePack to
 * length-prefixed frames — and back, where every failure is a typed `MalformedFrame` or `FrameTooLarge`.
 *
 * A frame is a 4-byte big-endian unsigned length followed by that many bytes of one MessagePack-encoded
 * envelope (standard MessagePack, no extensions). Integers are MessagePack integers both ways: whole numbers
 * beyond 32 bits are written as 64-bit integers, and 64-bit integers are read as numbers when they are safe
 * integers (|n| ≤ 2^53 − 1); larger ones stay BigInt, which every schema refuses by name.
 *
 * Message bodies are encoded here; envelopes, frames and chunk frames in the internal modules this one binds.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type { Envelope } from "./Envelope.js"
import { type FrameTooLarge, MalformedFrame } from "./Errors.js"
import * as chunkFrames from "./internal/chunkFrames.js"
import * as Compiled from "./internal/compiled.js"
import * as envelopes from "./internal/envelopes.js"
import * as frames from "./internal/frames.js"

/**
 * The bytes in front of every frame's payload.
 *
 * @since 0.1.0
 * @category constants
 */
export const headerSize = frames.headerSize

/**
 * msgpackr writes every number that is not a 32-bit integer as a float64, whole or not, and a float is what
 * other languages then read, where their integer fields refuse it. So a whole number beyond 32 bits (a
 * timestamp, a byte count) goes out as a BigInt, which msgpackr writes as a 64-bit integer. Containers are
 * copied only where something changes; bytes are left alone.
 *
 * @since 0.1.0
 * @category encoding
 */
export const integersAsInt64: (value: unknown) => unknown = frames.integersAsInt64

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

/**
 * An envelope to one frame (header included), refusing frames over `maxFrameSize` bytes.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encodeFrame: (
  envelope: Envelope,
  maxFrameSize: number
) => Either.Either<Uint8Array, MalformedFrame | FrameTooLarge> = frames.encodeFrame

/**
 * What a chunk's frame adds to its data, in bytes: the frame header and the envelope around the data.
 *
 * @since 0.1.0
 * @category constants
 */
export const chunkFrameOverhead: number = chunkFrames.chunkFrameOverhead

/**
 * A chunk's frame as two pieces, the frame header and envelope up to the data, then the data itself, so that a
 * chunk goes out without copying its bytes. Together they are a frame of the `chunk` envelope, in the layout
 * (with its `crc` or without) `decodeChunkPieces` reads back without copying either. The caller keeps to the frame size limit.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encodeChunkFrame: (
  chunk: { readonly id: number; readonly offset: number; readonly crc?: number; readonly data: Uint8Array }
) => readonly [header: Uint8Array, data: Uint8Array] = chunkFrames.encodeChunkFrame

/**
 * A chunk whose data is still in the pieces it arrived in.
 *
 * @since 0.1.0
 * @category models
 */
export interface ChunkPieces {
  readonly id: number
  readonly offset: number
  /** Absent when the fetch asked for no checksums. */
  readonly crc: number | undefined
  readonly data: ReadonlyArray<Uint8Array>
}

/**
 * A payload in pieces (see `FrameDecoder.pushPieces`) as a chunk, without joining its data, when it is a chunk in
 * one of the layouts `encodeChunkFrame` writes. Anything else, chunks encoded otherwise included, is undefined: decode it
 * whole, with `decodePayload`.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeChunkPieces: (pieces: ReadonlyArray<Uint8Array>) => ChunkPieces | undefined =
  chunkFrames.decodeChunkPieces

/**
 * An unpacked MessagePack value to an envelope, with the checks the `Envelope` schema states.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeEnvelope: (value: unknown) => Either.Either<Envelope, MalformedFrame> = envelopes.decodeEnvelope

/**
 * One frame's payload (header removed) to the MessagePack value it holds, not yet checked as an envelope.
 *
 * @since 0.1.0
 * @category decoding
 */
export const unpackPayload: (payload: Uint8Array) => Either.Either<unknown, MalformedFrame> = frames.unpackPayload

/**
 * One frame's payload (header removed) back to an envelope.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodePayload: (payload: Uint8Array) => Either.Either<Envelope, MalformedFrame> = frames.decodePayload

/**
 * The id of an `ask` that is not a valid envelope but whose id is readable, so that its asker can be answered
 * with a `failure` rather than left to wait for its timeout.
 *
 * @since 0.1.0
 * @category decoding
 */
export const askIdOf: (value: unknown) => number | undefined = envelopes.askIdOf

/**
 * Splits a byte stream into frame payloads. After a `FrameTooLarge` the stream cannot be resynchronised, so
 * the decoder refuses further input and the connection must be closed.
 *
 * @since 0.1.0
 * @category decoding
 */
export const FrameDecoder: typeof frames.FrameDecoder = frames.FrameDecoder
/**
 * @since 0.1.0
 * @category decoding
 */
export type FrameDecoder = frames.FrameDecoder
