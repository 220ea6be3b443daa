import { assert, describe, it } from "@effect/vitest"
import { Errors, Ids, SubmissionMessages } from "@kindling/protocol"
import { Deadlines } from "@kindling/protocol/testing"
import { Transport } from "@kindling/rpc"
import { NodeEncryption, NodeTransport } from "@kindling/rpc/node"
import { Deferred, Effect, Exit, FastCheck as fc, Option } from "effect"
import * as Crypto from "node:crypto"
import { encryptedTcp, host, registerMaster, startNode } from "./fixtures/nodes.js"

const status = new SubmissionMessages.RequestDriverStatus({ driverId: Ids.DriverId.make("d-1") })

// A layer under encryption that sees (and may change) the raw bytes each end receives.
const underneath = (
  transport: Transport.Transport["Type"],
  onReceived: (bytes: Uint8Array, side: "dialler" | "listener") => ReadonlyArray<Uint8Array>
) =>
  Transport.wrapConnections(transport, (connection, makeHandler, side) => {
    const handler = makeHandler(connection)
    return {
      connection,
      handler: {
        onData: (bytes) => {
          for (const piece of onReceived(bytes, side)) handler.onData(piece)
        },
        onClose: handler.onClose
      }
    }
  })

// Sends `writes` from a dialler to a listener through `transport`, and what the listener received once all arrived.
const carry = (transport: Transport.Transport["Type"], writes: ReadonlyArray<Uint8Array>) =>
  Effect.gen(function*() {
    const total = writes.reduce((sum, bytes) => sum + bytes.length, 0)
    const received: Array<Uint8Array> = []
    let count = 0
    const all = yield* Deferred.make<void>()
    const listener = yield* transport.listen(host, 0, () => ({
      onData: (bytes) => {
        received.push(bytes.slice())
        count += bytes.length
        if (count >= total) Deferred.unsafeDone(all, Exit.void)
      },
      onClose: () => {}
    }))
    const connection = yield* transport.connect(host, listener.port, () => ({ onData: () => {}, onClose: () => {} }))
    for (const bytes of writes) connection.write(bytes)
    yield* Deferred.await(all).pipe(Effect.timeout("10 seconds"))
    return Buffer.concat(received)
  })

describe("NodeEncryption", () => {
  it.scopedLive("what a node writes never appears on the wire, and arrives whole and in order", () =>
    Effect.gen(function*() {
      const marker = Buffer.from("the quick brown fox jumps over the lazy dog ".repeat(50))
      const raw: Array<Buffer> = []
      const tcp = yield* NodeTransport.make
      const transport = NodeEncryption.encrypted(
        underneath(tcp, (bytes) => {
          raw.push(Buffer.from(bytes))
          return [bytes]
        }),
        { secret: "s3cret" }
      )
      const big = Buffer.alloc(3 * NodeEncryption.maxRecordSize + 17, 7)
      const got = yield* carry(transport, [marker, big, marker])
      assert.isTrue(got.equals(Buffer.concat([marker, big, marker])))
      const wire = Buffer.concat(raw)
      assert.strictEqual(wire.indexOf("quick brown fox"), -1)
      // Larger than the records it was carried in: it was split, and put back together.
      assert.isAbove(wire.length, got.length)
    }))

  it.scopedLive("bytes arriving in any pieces decrypt to exactly what was written", () =>
    Effect.gen(function*() {
      const tcp = yield* NodeTransport.make
      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(
            fc.array(fc.uint8Array({ minLength: 1, maxLength: 600_000 }), { minLength: 1, maxLength: 6 }),
            fc.array(fc.integer({ min: 1, max: 300_000 }), { minLength: 1, maxLength: 20 }),
            async (writes, cuts) => {
              // The bytes each end receives, re-cut at the sizes drawn (cycling through them).
              let next = 0
              const recut = (bytes: Uint8Array) => {
                const pieces: Array<Uint8Array> = []
                for (let at = 0; at < bytes.length;) {
                  const size = cuts[next++ % cuts.length]!
                  pieces.push(bytes.subarray(at, at + size))
                  at += size
                }
                return pieces
              }
              const transport = NodeEncryption.encrypted(underneath(tcp, recut), { secret: "s3cret" })
              const got = await Effect.runPromise(Effect.scoped(carry(transport, writes)))
              assert.isTrue(got.equals(Buffer.concat(writes)))
            }
          ),
          { numRuns: 25 }
        )
      )
    }), Deadlines.scaled(60_000))

  it.scopedLive("a node with another secret cannot read or be read, and the listener goes on serving", () =>
    Effect.gen(function*() {
      const server = yield* startNode().pipe(Effect.provide(encryptedTcp("one secret")))
      const master = yield* registerMaster(server.rpc)
      const stranger = yield* startNode().pipe(Effect.provide(encryptedTcp("another secret")))
      const refused = yield* Effect.flip(stranger.rpc.ask(master.ref, status))
      assert.instanceOf(refused, Errors.ConnectionLost)
      assert.match(refused.message, /another kindling\.authenticate\.secret/)
      const friend = yield* startNode().pipe(Effect.provide(encryptedTcp("one secret")))
      const reply = yield* friend.rpc.ask(master.ref, status)
      assert.deepStrictEqual(reply.workerId, Option.some(Ids.WorkerId.make("d-1")))
    }))

  it.scopedLive("a node that does not encrypt is told so, and an encrypting one learns the peer does not", () =>
    Effect.gen(function*() {
      const encrypting = yield* startNode().pipe(Effect.provide(encryptedTcp()))
      const encryptingMaster = yield* registerMaster(encrypting.rpc)
      const plain = yield* startNode().pipe(Effect.provide(NodeTransport.layer))
      const plainMaster = yield* registerMaster(plain.rpc)

      const toEncrypting = yield* Effect.flip(plain.rpc.ask(encryptingMaster.ref, status))
      assert.instanceOf(toEncrypting, Errors.AuthenticationFailed)
      assert.match(toEncrypting.message, /encrypts its connections \(kindling\.network\.crypto\.enabled\)/)

      const toPlain = yield* Effect.flip(encrypting.rpc.ask(plainMaster.ref, status))
      assert.instanceOf(toPlain, Errors.ConnectionLost)
      assert.match(toPlain.message, /does not encrypt its connections/)
      assert.isTrue((yield* plain.logs).some((line) => /the peer encrypts its connections/.test(line)))
    }))

  it.scopedLive("a record altered on the way ends the connection instead of being delivered", () =>
    Effect.gen(function*() {
      const tcp = yield* NodeTransport.make
      // The greeting and the key confirmation (40 and 28 bytes) go through; the next byte the listener gets, the
      // first of a data record, has one bit changed.
      let seen = 0
      const transport = NodeEncryption.encrypted(
        underneath(tcp, (bytes, side) => {
          if (side !== "listener") return [bytes]
          const copy = Buffer.from(bytes)
          const at = 68 + 10 - seen
          if (at >= 0 && at < copy.length) copy[at]! ^= 1
          seen += bytes.length
          return [copy]
        }),
        { secret: "s3cret" }
      )
      const closed = yield* Deferred.make<string>()
      let delivered = 0
      const listener = yield* transport.listen(host, 0, () => ({
        onData: (bytes) => (delivered += bytes.length),
        onClose: (reason) => Deferred.unsafeDone(closed, Exit.succeed(reason))
      }))
      const connection = yield* transport.connect(host, listener.port, () => ({ onData: () => {}, onClose: () => {} }))
      connection.write(Buffer.alloc(1000, 1))
      const reason = yield* Deferred.await(closed).pipe(Effect.timeout("5 seconds"))
      assert.match(reason, /failed its integrity check: the bytes were altered on the way/)
      assert.strictEqual(delivered, 0)
    }))

  it.scopedLive("a record longer than the limit, or a first one that is no key confirmation, is refused unread", () =>
    Effect.gen(function*() {
      const tcp = yield* NodeTransport.make
      const transport = NodeEncryption.encrypted(tcp, { secret: "s3cret" })
      // Why the listener closed a connection on which a raw dialler greeted properly, then claimed a record of
      // `length` bytes and sent none of them.
      const claim = (length: number) =>
        Effect.gen(function*() {
          const closed = yield* Deferred.make<string>()
          const listener = yield* transport.listen(host, 0, () => ({
            onData: () => {},
            onClose: (reason) => Deferred.unsafeDone(closed, Exit.succeed(reason))
          }))
          const connection = yield* tcp.connect(host, listener.port, () => ({ onData: () => {}, onClose: () => {} }))
          const publicKey = Crypto.generateKeyPairSync("x25519").publicKey.export({ format: "jwk" }).x!
          const header = Buffer.alloc(4)
          header.writeUInt32BE(length)
          connection.write(Buffer.concat([
            Buffer.from([0xff, 0x4b, 0x44, 0x4c, 0x45, 0x4e, 0x43, 0x31]),
            Buffer.from(publicKey, "base64url"),
            header
          ]))
          return yield* Deferred.await(closed).pipe(Effect.timeout("5 seconds"))
        })
      const size = NodeEncryption.maxRecordSize + 1
      assert.match(yield* claim(size), new RegExp(`a record of ${size} bytes`))
      assert.match(yield* claim(100_000), /cannot decrypt the peer's key confirmation/)
    }))
})
