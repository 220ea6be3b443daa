export const concat = (pieces: Iterable<Uint8Array>): Uint8Array => {
  const all = [...pieces]
  if (all.length === 1) return all[0]!
  const out = new Uint8Array(all.reduce((n, piece) => n + piece.length, 0))
  let offset = 0
  for (const piece of all) {
    out.set(piece, offset)
    offset += piece.length
  }
  return out
}
