// Envelopes to the plain maps a frame's MessagePack holds, and unpacked values back to envelopes. Envelopes are
// built by the RpcEnv itself, so encoding needs no validation, only the address classes turned into maps;
// decoding checks by hand exactly what the `Envelope` schema states (a property test holds the two together).
// Both run twice per round trip, and the schema-driven versions cost more than the socket.
import * as Either from "effect/Either"
import type { DataEnvelope, Envelope, Purpose } from "../Envelope.js"
import { MalformedFrame } from "../Errors.js"
import { RpcAddress } from "../RpcAddress.js"
import * as Compiled from "./compiled.js"

const plainAddress = (address: { readonly host: string; readonly port: number } | null) =>
  address === null ? null : { host: address.host, port: address.port }

export const envelopeValue = (envelope: Envelope): Record<string, unknown> => {
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
      if (window instanceof MalformedFrame) return window
      if (value.checksums === undefined) return { _tag: "fetch", id, block: value.block, offset, window }
      return typeof value.checksums === "boolean"
        ? { _tag: "fetch", id, block: value.block, offset, window, checksums: value.checksums }
        : notEnvelope(`checksums must be a boolean, got ${shown(value.checksums)}`)
    }
    case "chunk": {
      const id = checkId(value.id)
      if (id instanceof MalformedFrame) return id
      const offset = checkCount(value.offset, "offset")
      if (offset instanceof MalformedFrame) return offset
      const crc = value.crc
      if (crc !== undefined && (!isInt(crc) || crc < 0 || crc > 0xffffffff)) {
        return notEnvelope(`crc must be a uint32, got ${shown(crc)}`)
      }
      const data = checkBytes(value.data, "data")
      if (data instanceof MalformedFrame) return data
      return crc === undefined ? { _tag: "chunk", id, offset, data } : { _tag: "chunk", id, offset, crc, data }
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

export const decodeEnvelope = (value: unknown): Either.Either<Envelope, MalformedFrame> => {
  const envelope = envelopeOf(value)
  return envelope instanceof MalformedFrame ? Either.left(envelope) : Either.right(envelope)
}

export const askIdOf = (value: unknown): number | undefined => {
  if (!isRecord(value) || value._tag !== "ask") return undefined
  const id = checkId(value.id)
  return id instanceof MalformedFrame ? undefined : id
}
