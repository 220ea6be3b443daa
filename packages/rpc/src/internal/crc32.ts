// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320, the one zlib computes) in plain JS, for platforms without
// a native one. It goes eight bytes at a time with eight lookup tables (slicing-by-8), several times faster than
// the byte-at-a-time loop; on Node the data plane uses zlib's, which is faster still.
let tables: Int32Array | undefined

const makeTables = (): Int32Array => {
  const t = new Int32Array(8 * 256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    t[n] = c
  }
  for (let n = 0; n < 256; n++) {
    let c = t[n]
    for (let k = 1; k < 8; k++) {
      c = t[c & 0xff] ^ (c >>> 8)
      t[k * 256 + n] = c
    }
  }
  return t
}

// `value` is the CRC of the bytes before `data`, as in zlib: crc32(b, crc32(a)) is the CRC of a then b.
export const crc32 = (data: Uint8Array, value = 0): number => {
  const t = tables ??= makeTables()
  let crc = value ^ -1
  let i = 0
  for (const end = data.length - (data.length % 8); i < end; i += 8) {
    const a = (data[i] | (data[i + 1] << 8) | (data[i + 2] << 16) | (data[i + 3] << 24)) ^ crc
    const b = data[i + 4] | (data[i + 5] << 8) | (data[i + 6] << 16) | (data[i + 7] << 24)
    crc = t[1792 + (a & 0xff)] ^ t[1536 + ((a >>> 8) & 0xff)] ^ t[1280 + ((a >>> 16) & 0xff)] ^ t[1024 + (a >>> 24)] ^
      t[768 + (b & 0xff)] ^ t[512 + ((b >>> 8) & 0xff)] ^ t[256 + ((b >>> 16) & 0xff)] ^ t[b >>> 24]
  }
  for (; i < data.length; i++) crc = t[(crc ^ data[i]) & 0xff] ^ (crc >>> 8)
  return (crc ^ -1) >>> 0
}
