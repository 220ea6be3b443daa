// The first bytes of an encrypted connection (`NodeEncryption`), here so that a node that does not encrypt can tell
// an encrypting peer from a broken one. The leading 0xff makes the greeting, read as a frame header, a length
// beyond any frame limit: a node that does not encrypt refuses it before reading further.
export const magic = new Uint8Array([0xff, 0x4b, 0x44, 0x4c, 0x45, 0x4e, 0x43, 0x31]) // 0xff "KDLENC1"

/** Whether `bytes`, the first a peer sent, begin as an encryption greeting does (as far as they go). */
export const startsLikeGreeting = (bytes: Uint8Array): boolean => {
  const length = Math.min(bytes.length, magic.length)
  for (let i = 0; i < length; i++) if (bytes[i] !== magic[i]) return false
  return length > 0
}
