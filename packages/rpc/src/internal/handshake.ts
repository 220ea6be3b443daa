// The shared-secret challenge-response. Both sides prove knowledge of the secret with HMAC-SHA256 over both
// nonces; the two proofs use different labels, so a listener's proof can never be replayed as a dialler's.
import { joined } from "./bytes.js"

const encoder = new TextEncoder()
const serverLabel = encoder.encode("kindling-server")
const clientLabel = encoder.encode("kindling-client")

export const nonceSize = 32

export const makeNonce = (): Uint8Array => crypto.getRandomValues(new Uint8Array(nonceSize))

export const importSecret = (secret: string): Promise<CryptoKey> =>
  crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"])

const sign = async (key: CryptoKey, parts: ReadonlyArray<Uint8Array>): Promise<Uint8Array> =>
  new Uint8Array(await crypto.subtle.sign("HMAC", key, joined(parts)))

export const serverProof = (key: CryptoKey, clientNonce: Uint8Array, serverNonce: Uint8Array) =>
  sign(key, [serverLabel, clientNonce, serverNonce])

export const clientProof = (key: CryptoKey, clientNonce: Uint8Array, serverNonce: Uint8Array) =>
  sign(key, [clientLabel, serverNonce, clientNonce])

// Compares in time that depends only on the length, so a forged proof learns nothing from timing.
export const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => {
  if (a.length !== b.length) return false
  let diff = 0
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!
  return diff === 0
}
