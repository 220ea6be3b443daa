// The conformance kit's end of a connection: bytes written exactly as a check chooses (split, oversized, garbage,
// 64-bit integers in either MessagePack form), and frames read back as plain values, with a note of any whole
// number the node wrote as a float. Nothing here goes through the RpcEnv: the kit must be able to say what a
// node does with input the RpcEnv itself would never send.
import { Codec, Envelope } from "@kindling/protocol"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import { Packr, Unpackr } from "msgpackr"
import { type Connection, Transport } from "../Transport.js"
import { concat } from "./bytes.js"

export class CheckFailed extends Data.TaggedError("CheckFailed")<{ readonly message: string }> {}

export const fail = (message: string) => Effect.fail(new CheckFailed({ message }))

const packr = new Packr({ useRecords: false, moreTypes: false, mapsAsObjects: true })
// 64-bit integers come back as BigInt, so a whole number beyond 32 bits that comes back as a number was
// written as a float: what other languages' integer fields refuse.
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true, int64AsType: "bigint" } as never)

/** One MessagePack value, integers beyond 32 bits as 64-bit integers (as Kindling writes them). */
export const packed = (value: unknown): Uint8Array => packr.pack(Codec.integersAsInt64(value))

const sized = (marker: number, n: bigint, signed: boolean): Uint8Array => {
  const bytes = new Uint8Array(9)
  bytes[0] = marker
  const view = new DataView(bytes.buffer)
  if (signed) view.setBigInt64(1, n)
  else view.setBigUint64(1, n)
  return bytes
}

/** An integer as MessagePack uint64 (0xcf), whatever its size: what Python's msgpack writes from 2^32 on. */
export const uint64 = (n: bigint): Uint8Array => sized(0xcf, n, false)

/** An integer as MessagePack int64 (0xd3), whatever its size. */
export const int64 = (n: bigint): Uint8Array => sized(0xd3, n, true)

/** A map of already encoded values: lets one value of a body be written in a form of the check's choosing. */
export const map = (entries: ReadonlyArray<readonly [string, Uint8Array]>): Uint8Array => {
  const parts: Array<Uint8Array> = [Uint8Array.of(0xde, entries.length >> 8, entries.length & 0xff)]
  for (const [key, value] of entries) parts.push(packr.pack(key), value)
  return concat(parts)
}

/** A frame: the 4-byte big-endian length, then the payload. */
export const frame = (payload: Uint8Array): Uint8Array => {
  const out = new Uint8Array(Codec.headerSize + payload.length)
  new DataView(out.buffer).setUint32(0, payload.length)
  out.set(payload, Codec.headerSize)
  return out
}

/** A frame of one value, packed as Kindling packs it. */
export const frameOf = (value: unknown): Uint8Array => frame(packed(value))

// Safe 64-bit integers as numbers, the way a schema wants them; larger ones stay BigInt.
const normalized = (value: unknown): unknown => {
  if (typeof value === "bigint") {
    return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(value) : value
  }
  if (typeof value !== "object" || value === null || ArrayBuffer.isView(value)) return value
  if (Array.isArray(value)) return value.map(normalized)
  const out: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value)) out[key] = normalized(item)
  return out
}

const floatsIn = (value: unknown, path: string, found: Array<string>): Array<string> => {
  if (typeof value === "number" && Number.isInteger(value) && Math.abs(value) >= 2 ** 32) {
    found.push(`${path} = ${value}`)
  } else if (typeof value === "object" && value !== null && !ArrayBuffer.isView(value)) {
    for (const [key, item] of Object.entries(value)) floatsIn(item, path === "" ? key : `${path}.${key}`, found)
  }
  return found
}

/** A frame as the node sent it. */
export interface Received {
  /** Its value, 64-bit integers that fit a double as numbers. */
  readonly value: Record<string, unknown>
  /** Where the node wrote a whole number of 2^32 or more as a float, as `path = value`. */
  readonly wholeFloats: ReadonlyArray<string>
}

type Event =
  | { readonly _tag: "frame"; readonly received: Received }
  | { readonly _tag: "unreadable"; readonly reason: string }
  | { readonly _tag: "closed"; readonly reason: string }

/** A raw connection to the node under test. */
export interface Session {
  readonly write: (bytes: Uint8Array) => Effect.Effect<void>
  /** The next frame other than a `ping`; fails if none comes within the timeout or the connection closes. */
  readonly next: (what: string) => Effect.Effect<Received, CheckFailed>
  /** Succeeds once the node has closed the connection; fails if it has not within the timeout. */
  readonly closedByNode: (what: string) => Effect.Effect<void, CheckFailed>
  /** Drops the connection from this end. */
  readonly drop: Effect.Effect<void>
}

/** A value for a failure's detail, cut short. */
export const show = (value: unknown): string => {
  const text = JSON.stringify(
    value,
    (_, v) => (typeof v === "bigint" ? `${v}n` : v instanceof Uint8Array ? "<bytes>" : v)
  )
  return text === undefined ? String(value) : text.length > 300 ? `${text.slice(0, 300)}…` : text
}

/** Opens a connection to `host:port`; it is dropped when the scope closes. */
export const connect = (
  host: string,
  port: number,
  timeout: Duration.Duration
): Effect.Effect<Session, CheckFailed, Transport | Scope.Scope> =>
  Effect.gen(function*() {
    const transport = yield* Transport
    const events = yield* Queue.unbounded<Event>()
    const decoder = new Codec.FrameDecoder(Envelope.defaultMaxFrameSize)
    let closed: string | undefined
    const connection: Connection = yield* Effect.acquireRelease(
      transport.connect(host, port, () => ({
        onData: (bytes) => {
          const frames = decoder.push(bytes)
          if (frames._tag === "Left") {
            Queue.unsafeOffer(events, { _tag: "unreadable", reason: frames.left.message })
            return
          }
          for (const payload of frames.right) Queue.unsafeOffer(events, unpack(payload))
        },
        onClose: (reason) => {
          closed = reason
          Queue.unsafeOffer(events, { _tag: "closed", reason })
        }
      })).pipe(
        Effect.mapError((error) => new CheckFailed({ message: error.message })),
        Effect.timeoutFail({
          duration: timeout,
          onTimeout: () => new CheckFailed({ message: `cannot connect to ${host}:${port} within ${timeout}` })
        })
      ),
      (connection) => Effect.sync(() => connection.close())
    )
    const take = (what: string) =>
      Queue.take(events).pipe(
        Effect.timeoutFail({
          duration: timeout,
          onTimeout: () =>
            new CheckFailed({ message: `nothing came within ${Duration.format(timeout)}, waiting for ${what}` })
        })
      )
    const next = (what: string): Effect.Effect<Received, CheckFailed> =>
      Effect.flatMap(take(what), (event) => {
        switch (event._tag) {
          case "frame":
            return event.received.value._tag === "ping" ? next(what) : Effect.succeed(event.received)
          case "unreadable":
            return fail(`expected ${what}, got a frame that is not MessagePack: ${event.reason}`)
          case "closed":
            // Later takes must see the close too.
            Queue.unsafeOffer(events, event)
            return fail(`expected ${what}, but the node closed the connection (${event.reason})`)
        }
      })
    const closedByNode = (what: string): Effect.Effect<void, CheckFailed> =>
      closed !== undefined
        ? Effect.void
        : Effect.flatMap(take(`the node to close the connection ${what}`), (event) =>
          event._tag === "closed"
            ? Effect.void
            : event._tag === "frame" && event.received.value._tag === "ping"
            ? closedByNode(what)
            : fail(
              `expected the node to close the connection ${what}, got ${
                event._tag === "frame" ? show(event.received.value) : event.reason
              }`
            ))
    return {
      write: (bytes) => Effect.sync(() => connection.write(bytes)),
      next,
      closedByNode,
      drop: Effect.sync(() => connection.close())
    }
  })

const unpack = (payload: Uint8Array): Event => {
  let value: unknown
  try {
    value = unpackr.unpack(payload)
  } catch (error) {
    return { _tag: "unreadable", reason: error instanceof Error ? error.message : String(error) }
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { _tag: "unreadable", reason: `not a map: ${show(value)}` }
  }
  return {
    _tag: "frame",
    received: { value: normalized(value) as Record<string, unknown>, wholeFloats: floatsIn(value, "", []) }
  }
}
