// Chunk frames, the data plane's hot path: a chunk's frame written as a fixed layout in front of its data, so
// that neither is copied, and read back from the pieces it arrived in when it is in that layout.
import type { ChunkPieces } from "../Codec.js"
import { headerSize } from "./frames.js"

const textEncoder = new TextEncoder()
const fixstr = (text: string) => [0xa0 | text.length, ...textEncoder.encode(text)]

// The layouts Kindling writes a chunk's envelope in: a map whose data comes last, with fixed-size encodings for
// its numbers (uint64 for id and offset, which may pass 32 bits), with its crc (5 entries) or without (4, when the
// fetch asked for no checksums). Positions are those of each value's type byte, from the start of the payload.
const layout = (withCrc: boolean) => {
  const bytes = [withCrc ? 0x85 : 0x84, ...fixstr("_tag"), ...fixstr("chunk"), ...fixstr("id")]
  const idAt = bytes.length
  bytes.push(0xcf, 0, 0, 0, 0, 0, 0, 0, 0, ...fixstr("offset"))
  const offsetAt = bytes.length
  bytes.push(0xcf, 0, 0, 0, 0, 0, 0, 0, 0)
  const crcAt = withCrc ? bytes.length + fixstr("crc").length : undefined
  if (withCrc) bytes.push(...fixstr("crc"), 0xce, 0, 0, 0, 0)
  bytes.push(...fixstr("data"))
  const sizeAt = bytes.length
  bytes.push(0xc6, 0, 0, 0, 0)
  const values = new Set<number>()
  for (const [at, size] of [[idAt, 8], [offsetAt, 8], [crcAt, 4], [sizeAt, 4]] as const) {
    if (at !== undefined) { for (let i = 1; i <= size; i++) values.add(at + i) }
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
}
const checked = layout(true)
const unchecked = layout(false)

// A safe non-negative integer as a big-endian uint64, in two halves: no BigInt on the data plane's hot path.
const setUint64 = (view: DataView, at: number, n: number) => {
  view.setUint32(at, Math.floor(n / 0x100000000))
  view.setUint32(at + 4, n >>> 0)
}
const getUint64 = (view: DataView, at: number) => view.getUint32(at) * 0x100000000 + view.getUint32(at + 4)

/** The larger of the two layouts' overheads: what a chunk's frame adds to its data at most. */
export const chunkFrameOverhead = headerSize + checked.template.length

export const encodeChunkFrame = (
  chunk: { readonly id: number; readonly offset: number; readonly crc?: number; readonly data: Uint8Array }
): readonly [header: Uint8Array, data: Uint8Array] => {
  const { crcAt, idAt, offsetAt, sizeAt, template } = chunk.crc === undefined ? unchecked : checked
  const header = new Uint8Array(headerSize + template.length)
  const view = new DataView(header.buffer)
  header.set(template, headerSize)
  view.setUint32(0, template.length + chunk.data.length)
  setUint64(view, headerSize + idAt + 1, chunk.id)
  setUint64(view, headerSize + offsetAt + 1, chunk.offset)
  if (crcAt !== undefined && chunk.crc !== undefined) view.setUint32(headerSize + crcAt + 1, chunk.crc)
  view.setUint32(headerSize + sizeAt + 1, chunk.data.length)
  return [header, chunk.data]
}

const matches = (head: Uint8Array, { fixed, template }: ReturnType<typeof layout>) => {
  if (head.length < template.length) return false
  for (const i of fixed) if (head[i] !== template[i]) return false
  return true
}

export const decodeChunkPieces = (pieces: ReadonlyArray<Uint8Array>): ChunkPieces | undefined => {
  const head = pieces[0]
  if (head === undefined) return undefined
  const found = matches(head, checked) ? checked : matches(head, unchecked) ? unchecked : undefined
  if (found === undefined) return undefined
  const { crcAt, idAt, offsetAt, sizeAt, template } = found
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
    crc: crcAt === undefined ? undefined : view.getUint32(crcAt + 1),
    data: first.length > 0 ? [first, ...pieces.slice(1)] : pieces.slice(1)
  }
}
