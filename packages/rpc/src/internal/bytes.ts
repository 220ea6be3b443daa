// Joining byte pieces: a frame read in several chunks, the parts a handshake proof signs.

// The pieces in one fresh buffer, always a copy (WebCrypto takes only bytes backed by an ArrayBuffer).
export const joined = (pieces: ReadonlyArray<Uint8Array>): Uint8Array<ArrayBuffer> => {
  const out = new Uint8Array(pieces.reduce((n, piece) => n + piece.length, 0))
  let offset = 0
  for (const piece of pieces) {
    out.set(piece, offset)
    offset += piece.length
  }
  return out
}

// The pieces as one, without a copy when there is only one.
export const concat = (pieces: Iterable<Uint8Array>): Uint8Array => {
  const all = [...pieces]
  return all.length === 1 ? all[0]! : joined(all)
}
