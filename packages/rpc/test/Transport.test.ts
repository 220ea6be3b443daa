import { assert, describe, it } from "@effect/vitest"
import { Transport } from "@kindling/rpc"
import { NodeTransport } from "@kindling/rpc/node"
import type { Layer } from "effect"
import { Deferred, Effect, Exit } from "effect"
import { encryptedTcp } from "./fixtures/nodes.js"

const suite = (name: string, layer: Layer.Layer<Transport.Transport>) =>
  describe(`Transport over ${name}`, () => {
    // A listener that counts what it receives, and a connection to it.
    const connected = (expected: number) =>
      Effect.gen(function*() {
        const transport = yield* Transport.Transport
        let received = 0
        const all = yield* Deferred.make<void>()
        const closed = yield* Deferred.make<void>()
        const listener = yield* transport.listen("127.0.0.1", 0, () => ({
          onData: (bytes) => {
            received += bytes.length
            if (received === expected) Deferred.unsafeDone(all, Exit.void)
          },
          onClose: () => Deferred.unsafeDone(closed, Exit.void)
        }))
        const connection = yield* transport.connect("127.0.0.1", listener.port, () => ({
          onData: () => {},
          onClose: () => {}
        }))
        return { connection, received: Deferred.await(all), closed: Deferred.await(closed) }
      })

    const drained = (connection: Transport.Connection) =>
      Effect.async<void>((resume) => connection.onDrain(() => resume(Effect.void)))

    it.scopedLive("written bytes are buffered until handed on, and onDrain says when they are", () =>
      Effect.gen(function*() {
        const size = 4 * 1024 * 1024
        const { connection, received } = yield* connected(size)
        assert.strictEqual(connection.bufferedBytes(), 0)
        connection.write(new Uint8Array(size))
        assert.isAbove(connection.bufferedBytes(), 0)
        assert.isAtMost(connection.bufferedBytes(), size)
        yield* drained(connection)
        assert.strictEqual(connection.bufferedBytes(), 0)
        // Nothing buffered: onDrain answers at once.
        yield* drained(connection)
        yield* received
      }).pipe(Effect.provide(layer)))

    it.scopedLive("onDrain also answers when the connection closes", () =>
      Effect.gen(function*() {
        const { closed, connection } = yield* connected(1024)
        connection.write(new Uint8Array(1024))
        connection.close()
        yield* drained(connection)
        assert.strictEqual(connection.bufferedBytes(), 0)
        yield* closed
      }).pipe(Effect.provide(layer)))
  })

suite("the in-memory transport", Transport.layerMemory)
suite("TCP", NodeTransport.layer)
suite("encrypted TCP", encryptedTcp())
