/**
 * Encryption in transit (`kindling.network.crypto.enabled`): a transport whose connections carry AES-256-GCM
 * records under keys agreed afresh for each connection, which only holders of the cluster's secret can derive.
 *
 * Each end sends a greeting first — 8 magic bytes and an ephemeral X25519 public key (the dialler at once, the
 * listener once it has the dialler's) — and derives two keys with HKDF-SHA256 from the Diffie-Hellman result and the
 * secret, one per direction. The first record each way confirms the keys: a peer without the secret derives other
 * keys, and its confirmation fails the authentication tag; one that recorded the traffic and later learns the secret still cannot read it, the
 * ephemeral keys being gone (forward secrecy, as TLS's ephemeral key exchanges give). Every write of a turn of the
 * event loop becomes one or more records of at most 256 KiB, each sealed with the direction's key and a counter
 * nonce, so a record that is replayed, reordered, cut or altered ends the connection. The RPC handshake, the
 * messages and the data plane all run above it unchanged. docs/protocol.md has the bytes.
 *
 * @since 0.1.0
 */
import { Codec, Errors } from "@kindling/protocol"
import * as Either from "effect/Either"
import * as Crypto from "node:crypto"
import * as Greeting from "./internal/encryptionGreeting.js"
import { type Connection, type ConnectionHandler, type Transport, wrapConnections, type Wrapped } from "./Transport.js"

const publicKeySize = 32
const greetingSize = Greeting.magic.length + publicKeySize
const headerSize = 4
const tagSize = 16
// 2^48 records before a nonce would repeat: a limit no connection reaches, checked anyway.
const maxRecords = 2 ** 48

/**
 * The most plaintext one record carries: what a reader must hold before it can check a record, and so the most
 * any peer can make it buffer.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxRecordSize = 256 * 1024

// A record this small is written as one buffer (a message, say); a larger one as its parts, which the socket
// writes together without their being copied into one.
const joinedBelow = 16 * 1024

const encoder = new TextEncoder()
const labels = {
  dialler: encoder.encode("kindling dialler to listener"),
  listener: encoder.encode("kindling listener to dialler")
}

type Side = "dialler" | "listener"

interface Keys {
  readonly send: Buffer
  readonly receive: Buffer
}

const ephemeralKey = () => {
  const { privateKey, publicKey } = Crypto.generateKeyPairSync("x25519")
  const raw = Buffer.from(publicKey.export({ format: "jwk" }).x!, "base64url")
  return { privateKey, greeting: Buffer.concat([Greeting.magic, raw]), raw }
}

// Undefined when the peer's key is not one (a low-order point gives an all-zero secret, whatever ours is).
const deriveKeys = (
  side: Side,
  own: ReturnType<typeof ephemeralKey>,
  peerRaw: Buffer,
  secret: Uint8Array
): Keys | undefined => {
  let shared: Buffer
  try {
    const publicKey = Crypto.createPublicKey({
      key: { kty: "OKP", crv: "X25519", x: peerRaw.toString("base64url") },
      format: "jwk"
    })
    shared = Crypto.diffieHellman({ privateKey: own.privateKey, publicKey })
  } catch {
    return undefined
  }
  if (shared.every((byte) => byte === 0)) return undefined
  const ikm = Buffer.concat([shared, secret])
  const salt = side === "dialler" ? Buffer.concat([own.raw, peerRaw]) : Buffer.concat([peerRaw, own.raw])
  const key = (label: Uint8Array) => Buffer.from(Crypto.hkdfSync("sha256", ikm, salt, label, 32))
  const other: Side = side === "dialler" ? "listener" : "dialler"
  return { send: key(labels[side]), receive: key(labels[other]) }
}

// 12 bytes: four zeros, then the record's number as 8 bytes big-endian (6 used).
const nonceOf = (counter: number): Buffer => {
  const nonce = Buffer.alloc(12)
  nonce.writeUIntBE(counter, 6, 6)
  return nonce
}

/** What a plaintext dialler is told, in a frame it can read, before the connection closes. */
const plaintextRefusal = (remote: Connection["remote"], reason: string): Uint8Array | undefined => {
  const error = Codec.encodeWith(
    Errors.RpcError,
    new Errors.AuthenticationFailed({ peer: `${remote.host}:${remote.port}`, reason })
  )
  if (Either.isLeft(error)) return undefined
  return Either.getOrUndefined(Codec.encodeFrame({ _tag: "reject", error: error.right }, 8 * 1024))
}

const reasons = {
  plaintextDialler: "this node encrypts its connections (kindling.network.crypto.enabled) and the peer does not",
  plaintextListener: (remote: Connection["remote"]) =>
    `the peer at ${remote.host}:${remote.port} does not encrypt its connections, or is not a Kindling node ` +
    "(kindling.network.crypto.enabled must be the same on every node of a cluster)",
  badKey: "the peer's encryption greeting holds no usable key",
  firstRecord: "cannot decrypt the peer's key confirmation: it holds another kindling.authenticate.secret (or the " +
    "bytes were altered on the way)",
  laterRecord: "a record from the peer failed its integrity check: the bytes were altered on the way",
  recordSize: (size: number) => `the peer sent a record of ${size} bytes (at most ${maxRecordSize} are allowed)`
}

const encryptConnection = (
  inner: Connection,
  makeHandler: (connection: Connection) => ConnectionHandler,
  side: Side,
  secret: Uint8Array,
  warn: (message: string, remote: Connection["remote"]) => void
): Wrapped => {
  const own = ephemeralKey()
  let keys: Keys | undefined
  let state: "greeting" | "open" | "closed" = "greeting"
  // Whether the user's handler heard its one onClose.
  let reported = false
  let sent = 0
  let received = 0
  // What the user wrote that is not yet sealed: until the keys are agreed, and within a turn of the event loop.
  let pending: Array<Uint8Array> = []
  let pendingBytes = 0
  let flushScheduled = false
  let drainWaiters: Array<() => void> = []
  // What arrived and is not yet a whole greeting or record: chunks as they came, the first from `consumed` on.
  let incoming: Array<Buffer> = []
  let consumed = 0
  let incomingBytes = 0

  const releaseDrainWaiters = () => {
    const waiters = drainWaiters
    drainWaiters = []
    for (const waiter of waiters) inner.onDrain(waiter)
  }

  const seal = (pieces: ReadonlyArray<Uint8Array>, length: number) => {
    const header = Buffer.allocUnsafe(headerSize)
    header.writeUInt32BE(length)
    const cipher = Crypto.createCipheriv("aes-256-gcm", keys!.send, nonceOf(sent++))
    cipher.setAAD(header)
    const parts: Array<Uint8Array> = [header]
    for (const piece of pieces) parts.push(cipher.update(piece))
    cipher.final()
    parts.push(cipher.getAuthTag())
    if (length < joinedBelow) inner.write(Buffer.concat(parts, headerSize + length + tagSize))
    else for (const part of parts) inner.write(part)
  }

  const flush = () => {
    flushScheduled = false
    if (keys === undefined || state !== "open" || pendingBytes === 0) return
    if (sent + Math.ceil(pendingBytes / maxRecordSize) >= maxRecords) return fail("the connection used up its nonces")
    let record: Array<Uint8Array> = []
    let size = 0
    for (const piece of pending) {
      let at = 0
      while (at < piece.length) {
        const take = Math.min(maxRecordSize - size, piece.length - at)
        record.push(at === 0 && take === piece.length ? piece : piece.subarray(at, at + take))
        size += take
        at += take
        if (size === maxRecordSize) {
          seal(record, size)
          record = []
          size = 0
        }
      }
    }
    if (size > 0) seal(record, size)
    pending = []
    pendingBytes = 0
    releaseDrainWaiters()
  }

  const report = (reason: string) => {
    if (reported) return
    reported = true
    handler.onClose(reason)
  }

  // Ends the connection for a reason of this layer's own: the peer does not encrypt, or sent what does not check.
  const fail = (reason: string) => {
    if (state === "closed") return
    state = "closed"
    pending = []
    pendingBytes = 0
    incoming = []
    incomingBytes = 0
    releaseDrainWaiters()
    warn(`closing an encrypted connection: ${reason}`, inner.remote)
    inner.close()
    report(reason)
  }

  // Hands the next `size` bytes of what arrived to `use`, a view of each chunk they lie in, and takes them off.
  const consume = (size: number, use: (piece: Buffer) => void) => {
    incomingBytes -= size
    while (size > 0) {
      const chunk = incoming[0]!
      const length = Math.min(size, chunk.length - consumed)
      use(chunk.subarray(consumed, consumed + length))
      size -= length
      consumed += length
      if (consumed === chunk.length) {
        incoming.shift()
        consumed = 0
      }
    }
  }

  // The next `size` bytes, a few, copied out when they span chunks (and taken off unless `keep`).
  const copy = (size: number, keep = false): Buffer => {
    const first = incoming[0]!
    let bytes: Buffer
    if (first.length - consumed >= size) bytes = first.subarray(consumed, consumed + size)
    else {
      bytes = Buffer.allocUnsafe(size)
      let at = 0
      for (let i = 0, from = consumed; at < size; i++, from = 0) {
        at += incoming[i]!.copy(bytes, at, from, Math.min(incoming[i]!.length, from + size - at))
      }
    }
    if (!keep) consume(size, () => {})
    return bytes
  }

  const onGreeting = (): boolean => {
    if (!Greeting.startsLikeGreeting(copy(Math.min(incomingBytes, Greeting.magic.length), true))) {
      if (side === "listener") {
        const refusal = plaintextRefusal(inner.remote, reasons.plaintextDialler)
        if (refusal !== undefined) inner.write(refusal)
        fail(reasons.plaintextDialler)
      } else fail(reasons.plaintextListener(inner.remote))
      return false
    }
    if (incomingBytes < greetingSize) return false
    const greeting = copy(greetingSize)
    keys = deriveKeys(side, own, Buffer.from(greeting.subarray(Greeting.magic.length)), secret)
    if (keys === undefined) {
      fail(reasons.badKey)
      return false
    }
    if (side === "listener") inner.write(own.greeting)
    state = "open"
    // The first record each way confirms the keys, so a peer with another secret learns so at once, whichever
    // side it is on, rather than from a connection that closes without a word.
    seal([Greeting.magic], Greeting.magic.length)
    flush()
    return true
  }

  // Whole records are decrypted where they lie in the chunks that brought them, and handed on piece by piece once
  // their tag checks.
  const onRecords = () => {
    while (state === "open" && incomingBytes >= headerSize) {
      const length = copy(headerSize, true).readUInt32BE(0)
      const first = received === 0
      if (length === 0 || length > maxRecordSize) return fail(reasons.recordSize(length))
      // Until the keys are confirmed nothing larger is buffered: a peer without the secret gets no more memory.
      if (first && length !== Greeting.magic.length) return fail(reasons.firstRecord)
      if (incomingBytes < headerSize + length + tagSize) return
      const decipher = Crypto.createDecipheriv("aes-256-gcm", keys!.receive, nonceOf(received++))
      decipher.setAAD(copy(headerSize))
      const plaintext: Array<Buffer> = []
      consume(length, (piece) => plaintext.push(decipher.update(piece)))
      decipher.setAuthTag(copy(tagSize))
      try {
        decipher.final()
      } catch {
        return fail(first ? reasons.firstRecord : reasons.laterRecord)
      }
      if (first) {
        if (!Buffer.concat(plaintext).equals(Greeting.magic)) return fail(reasons.firstRecord)
        continue
      }
      for (const piece of plaintext) {
        if (state !== "open") return
        if (piece.length > 0) handler.onData(piece)
      }
    }
  }

  const connection: Connection = {
    remote: inner.remote,
    write: (bytes) => {
      if (state === "closed" || bytes.length === 0) return
      pending.push(bytes)
      pendingBytes += bytes.length
      if (keys !== undefined && !flushScheduled) {
        flushScheduled = true
        process.nextTick(flush)
      }
    },
    close: () => {
      if (state === "closed") return
      // What was written before the close (a refusal, say) still goes, as on a plain socket.
      flush()
      state = "closed"
      pending = []
      pendingBytes = 0
      releaseDrainWaiters()
      inner.close()
    },
    bufferedBytes: () => pendingBytes + inner.bufferedBytes(),
    onDrain: (listener) => {
      if (pendingBytes > 0 && state !== "closed") drainWaiters.push(listener)
      else inner.onDrain(listener)
    }
  }
  const handler = makeHandler(connection)
  if (side === "dialler") inner.write(own.greeting)

  return {
    connection,
    handler: {
      onData: (bytes) => {
        if (state === "closed" || bytes.length === 0) return
        incoming.push(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))
        incomingBytes += bytes.length
        if (state === "greeting" && !onGreeting()) return
        onRecords()
      },
      onClose: (reason) => {
        state = "closed"
        pending = []
        pendingBytes = 0
        releaseDrainWaiters()
        report(reason)
      }
    }
  }
}

/**
 * The same transport with every connection encrypted and authenticated with `secret` (see the module's
 * description). Both ends of a connection must use it; a peer that does not is told so (when it dials) and
 * disconnected, and `warn` hears of every connection this layer ends.
 *
 * @since 0.1.0
 * @category combinators
 */
export const encrypted = (
  transport: Transport["Type"],
  options: {
    readonly secret: string
    readonly warn?: (message: string, remote: Connection["remote"]) => void
  }
): Transport["Type"] => {
  const secret = encoder.encode(options.secret)
  const warn = options.warn ?? (() => {})
  return wrapConnections(
    transport,
    (connection, makeHandler, side) => encryptConnection(connection, makeHandler, side, secret, warn)
  )
}
