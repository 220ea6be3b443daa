import { assert, describe, it } from "@effect/vitest"
import { Endpoints, Envelope, Errors, Ids, RpcAddress, SubmissionMessages, WorkerMessages } from "@kindling/protocol"
import { Polling } from "@kindling/protocol/testing"
import { RpcEnv, Transport } from "@kindling/rpc"
import { NodeTransport } from "@kindling/rpc/node"
import { Effect, Fiber, Layer, Option, Queue, type Scope } from "effect"
import { Packr } from "msgpackr"
import {
  body,
  driverDescription,
  encryptedTcp,
  heartbeat,
  host,
  rawConnection,
  registerMaster,
  startNode,
  startStoppableNode,
  testWorker
} from "./fixtures/nodes.js"

const status = (id: string) => new SubmissionMessages.RequestDriverStatus({ driverId: Ids.DriverId.make(id) })

// A raw connection, past its handshake, to a node with a master endpoint.
const welcomedByMaster = Effect.gen(function*() {
  const b = yield* startNode()
  yield* registerMaster(b.rpc)
  const raw = yield* rawConnection(b.address)
  raw.write({ _tag: "hello", version: Envelope.protocolVersion, address: null, nonce: null })
  assert.strictEqual((yield* raw.next)._tag, "welcome")
  return raw
})

// A node that is up and accepts connections but never says a word, as a host behind a firewall that drops its
// replies, or a process that hangs.
const silentListener = Effect.gen(function*() {
  const transport = yield* Transport.Transport
  const bound = yield* transport.listen(host, 0, () => ({ onData: () => {}, onClose: () => {} }))
  return RpcAddress.make(host, bound.port)
})

// An in-memory network on which nodes hand each other messages as values: none of them goes in a frame.
const handingOver = Layer.effect(Transport.Transport, Transport.makeMemoryWith({ handOverValues: true }))

const suite = (name: string, transport: Layer.Layer<Transport.Transport>) =>
  describe(`RpcEnv over ${name}`, () => {
    const framed = transport !== handingOver
    const live = (title: string, test: () => Effect.Effect<void, unknown, Transport.Transport | Scope.Scope>) =>
      it.scopedLive(title, () => test().pipe(Effect.provide(transport)), 20_000)

    live("send delivers a one-way message with the sender's address", () =>
      Effect.gen(function*() {
        const a = yield* startNode()
        const b = yield* startNode()
        const master = yield* registerMaster(b.rpc)
        yield* a.rpc.send(master.worker, heartbeat(1, a.address))
        const got = yield* Queue.take(master.received)
        assert.strictEqual(got.message._tag, "Heartbeat")
        assert.deepStrictEqual(got.sender, a.address)
        assert.strictEqual((got.message as { workerId: string }).workerId, "worker-1")
      }))

    live("ask gets the typed reply", () =>
      Effect.gen(function*() {
        const a = yield* startNode()
        const b = yield* startNode()
        const master = yield* registerMaster(b.rpc)
        const reply = yield* a.rpc.ask(
          master.ref,
          new SubmissionMessages.RequestSubmitDriver({
            driverDescription: driverDescription("file:///x.js")
          })
        )
        assert.instanceOf(reply, SubmissionMessages.SubmitDriverResponse)
        assert.deepStrictEqual(reply.driverId, Option.some(Ids.DriverId.make("driver-for-12")))
        assert.deepStrictEqual(reply.master, master.ref)
      }))

    live("a node asks its own endpoints without a connection", () =>
      Effect.gen(function*() {
        const a = yield* startNode()
        const master = yield* registerMaster(a.rpc)
        const reply = yield* a.rpc.ask(master.ref, status("d-local"))
        assert.deepStrictEqual(reply.workerId, Option.some(Ids.WorkerId.make("d-local")))
        assert.deepStrictEqual(yield* a.rpc.peers, [])
      }))

    live("ask times out with AskTimeout, and the node keeps answering", () =>
      Effect.gen(function*() {
        const a = yield* startNode()
        const b = yield* startNode()
        const master = yield* registerMaster(b.rpc)
        const started = Date.now()
        const error = yield* Effect.flip(
          a.rpc.ask(master.ref, new SubmissionMessages.RequestReadyz(), { timeout: 300 })
        )
        assert.instanceOf(error, Errors.AskTimeout)
        assert.strictEqual(error.timeoutMillis, 300)
        assert.isAtLeast(Date.now() - started, 290)
        assert.isTrue((yield* a.rpc.ask(master.ref, status("after"))).found)
      }))

    live("a handler's typed failure arrives typed", () =>
      Effect.gen(function*() {
        const a = yield* startNode()
        const b = yield* startNode()
        const master = yield* registerMaster(b.rpc)
        const error = yield* Effect.flip(
          a.rpc.ask(master.ref, new SubmissionMessages.RequestKillDriver({ driverId: Ids.DriverId.make("d-9") }))
        )
        assert.instanceOf(error, Errors.DriverNotFound)
        assert.strictEqual(error.driverId, "d-9")
        assert.strictEqual(error.message, "Driver d-9 does not exist")
        const standby = yield* Effect.flip(a.rpc.ask(master.ref, new SubmissionMessages.RequestKillAllDrivers()))
        assert.instanceOf(standby, Errors.MasterNotAlive)
        assert.strictEqual(standby.state, "STANDBY")
      }))

    live("an unknown endpoint gives EndpointNotFound", () =>
      Effect.gen(function*() {
        const a = yield* startNode()
        const b = yield* startNode()
        yield* registerMaster(b.rpc)
        const error = yield* Effect.flip(
          a.rpc.ask(RpcAddress.endpoint<SubmissionMessages.SubmissionRequest>(b.address, "Nobody"), status("x"))
        )
        assert.instanceOf(error, Errors.EndpointNotFound)
        assert.strictEqual(error.endpoint, "Nobody")
      }))

    live("a message the endpoint does not accept gives MalformedFrame", () =>
      Effect.gen(function*() {
        const a = yield* startNode()
        const b = yield* startNode()
        yield* registerMaster(b.rpc)
        // A third party's node is not held back by our types: the receiver checks what arrives.
        const worker = RpcAddress.endpoint<SubmissionMessages.RequestDriverStatus>(b.address, testWorker.name)
        const error = yield* Effect.flip(a.rpc.ask(worker, status("wrong endpoint")))
        assert.instanceOf(error, Errors.MalformedFrame)
      }))

    live("a sequential endpoint runs each handler once, one message at a time, in arrival order", () =>
      Effect.gen(function*() {
        const a = yield* startNode()
        const b = yield* startNode()
        const seen: Array<string> = []
        let running = 0
        let overlapped = false
        // Even workers answer with a ready value, odd ones suspend first: both kinds must keep their order.
        yield* b.rpc.register("Worker", {
          inbound: WorkerMessages.WorkerToMaster,
          handlers: {
            Heartbeat: ({ workerId }) => {
              seen.push(workerId)
              if (Number(workerId.split("-")[1]) % 2 === 0) {
                return Effect.void
              }
              return Effect.gen(function*() {
                running++
                overlapped ||= running > 1
                yield* Effect.sleep("1 millis")
                running--
              })
            },
            RegisterWorker: () =>
              Effect.void,
            ExecutorStateChanged: () => Effect.succeed(true),
            DriverStateChanged: () => Effect.succeed(true),
            WorkerSchedulerStateResponse: () => Effect.void,
            WorkerLatestState: () => Effect.void,
            WorkerDecommissioning: () => Effect.void
          }
        })
        const worker = Endpoints.ref(b.address, testWorker)
        const expected = Array.from({ length: 200 }, (_, i) => `worker-${i}`)
        for (let i = 0; i < expected.length; i++) yield* a.rpc.send(worker, heartbeat(i, a.address))
        // A last message marks the end: once it is handled, everything sent before it has been, once each.
        yield* a.rpc.send(worker, heartbeat(expected.length, a.address))
        yield* Polling.eventually(Effect.sync(() => seen), (names) => names.includes(`worker-${expected.length}`))
        assert.deepStrictEqual(seen, [...expected, `worker-${expected.length}`])
        assert.isFalse(overlapped)
      }))

    live("connects and disconnects are notified, and one connection serves both directions", () =>
      Effect.gen(function*() {
        const a = yield* startStoppableNode()
        const b = yield* startNode()
        const aMaster = yield* registerMaster(a.rpc)
        const bMaster = yield* registerMaster(b.rpc)
        yield* a.rpc.ask(bMaster.ref, status("1"))
        assert.strictEqual(yield* Queue.take(bMaster.events), `connected ${a.address.hostPort}`)
        assert.strictEqual(yield* Queue.take(aMaster.events), `connected ${b.address.hostPort}`)
        // b answers back over the connection a opened: no second connection, no second notification.
        yield* b.rpc.send(aMaster.worker, heartbeat(2, b.address))
        assert.deepStrictEqual((yield* Queue.take(aMaster.received)).sender, b.address)
        assert.deepStrictEqual(yield* b.rpc.peers, [a.address])
        assert.deepStrictEqual(yield* a.rpc.peers, [b.address])
        assert.strictEqual((yield* Queue.takeAll(aMaster.events)).length, 0)
        yield* a.stop
        assert.strictEqual(yield* Queue.take(bMaster.events), `disconnected ${a.address.hostPort}`)
        assert.deepStrictEqual(
          yield* Polling.eventually(b.rpc.peers, (peers) =>
            peers.length === 0),
          []
        )
      }))

    live("asks in flight when the peer goes fail with ConnectionLost", () =>
      Effect.gen(function*() {
        const a = yield* startNode()
        const b = yield* startStoppableNode()
        const master = yield* registerMaster(b.rpc)
        const fiber = yield* Effect.fork(a.rpc.ask(master.ref, new SubmissionMessages.RequestReadyz()))
        yield* Queue.take(master.events)
        yield* b.stop
        const error = yield* Effect.flip(fiber.await.pipe(Effect.flatten))
        assert.instanceOf(error, Errors.ConnectionLost)
      }))

    live("reconnects after the peer restarts on the same port", () =>
      Effect.gen(function*() {
        const a = yield* startNode()
        const b1 = yield* startStoppableNode()
        const first = yield* registerMaster(b1.rpc)
        assert.isTrue((yield* a.rpc.ask(first.ref, status("1"))).found)
        yield* b1.stop
        // On the connection it had, if this node has not yet seen it close (lost); else dialled again (not made).
        const down = yield* Effect.flip(a.rpc.ask(first.ref, status("2")))
        assert.include(["ConnectionLost", "ConnectFailed"], down._tag)
        const b2 = yield* startNode({ port: b1.address.port })
        assert.strictEqual(b2.address.port, b1.address.port)
        const second = yield* registerMaster(b2.rpc)
        const reply = yield* a.rpc.ask(second.ref, status("3"))
        assert.deepStrictEqual(reply.workerId, Option.some(Ids.WorkerId.make("3")))
      }))

    live("1,000 concurrent asks are all answered, each with its own reply", () =>
      Effect.gen(function*() {
        const a = yield* startNode()
        const b = yield* startNode()
        const master = yield* registerMaster(b.rpc)
        const ids = Array.from({ length: 1000 }, (_, i) =>
          `driver-${i}`)
        const replies = yield* Effect.forEach(ids, (id) =>
          a.rpc.ask(master.ref, status(id)), {
          concurrency: "unbounded"
        })
        assert.deepStrictEqual(
          replies.map((reply) =>
            Option.getOrThrow(reply.workerId)
          ),
          ids
        )
        assert.strictEqual((yield* a.rpc.peers).length, 1)
      }))

    live("a frame over the receiver's limit is refused with FrameTooLarge, and the receiver stays up", () =>
      Effect.gen(function*() {
        const a = yield* startNode()
        const b = yield* startNode({ maxFrameSize: 4096 })
        const master = yield* registerMaster(b.rpc)
        const big = new SubmissionMessages.RequestSubmitDriver({
          driverDescription: driverDescription("x".repeat(10_000))
        })
        if (!framed) {
          // Handed over, it is in no frame: the limit is a frame's, not a message's.
          assert.isTrue((yield* a.rpc.ask(master.ref, big)).success)
          return
        }
        const error = yield* Effect.flip(a.rpc.ask(master.ref, big))
        assert.instanceOf(error, Errors.FrameTooLarge)
        assert.strictEqual(error.maxSize, 4096)
        assert.isAbove(error.size, 10_000)
        assert.isTrue((yield* a.rpc.ask(master.ref, status("small"))).found)
      }))

    live("a frame over the sender's limit is never sent", () =>
      Effect.gen(function*() {
        const a = yield* startNode({ maxFrameSize: 1024 })
        const b = yield* startNode()
        const master = yield* registerMaster(b.rpc)
        const big = new SubmissionMessages.RequestSubmitDriver({
          driverDescription: driverDescription("y".repeat(2000))
        })
        if (!framed) {
          assert.isTrue((yield* a.rpc.ask(master.ref, big)).success)
          yield* a.rpc.send(master.worker, heartbeat(3, RpcAddress.make("h".repeat(2000), 1)))
          assert.strictEqual((yield* Queue.take(master.received)).message._tag, "Heartbeat")
          return
        }
        const error = yield* Effect.flip(a.rpc.ask(master.ref, big))
        assert.instanceOf(error, Errors.FrameTooLarge)
        assert.strictEqual(error.maxSize, 1024)
        const sendError = yield* Effect.flip(
          a.rpc.send(master.worker, heartbeat(3, RpcAddress.make("h".repeat(2000), 1)))
        )
        assert.instanceOf(sendError, Errors.FrameTooLarge)
        assert.strictEqual((yield* Queue.takeAll(master.received)).length, 0)
      }))

    live("with the same shared secret on both sides, messages flow", () =>
      Effect.gen(function*() {
        const a = yield* startNode({ secret: "correct horse" })
        const b = yield* startNode({ secret: "correct horse" })
        const master = yield* registerMaster(b.rpc)
        assert.isTrue((yield* a.rpc.ask(master.ref, status("1"))).found)
        yield* a.rpc.send(master.worker, heartbeat(4, a.address))
        assert.strictEqual((yield* Queue.take(master.received)).message._tag, "Heartbeat")
      }))

    const rejected = (client: string | undefined, server: string | undefined) =>
      Effect.gen(function*() {
        const a = yield* startNode(client === undefined ? {} : { secret: client })
        const b = yield* startNode(server === undefined ? {} : { secret: server })
        const master = yield* registerMaster(b.rpc)
        const error = yield* Effect.flip(a.rpc.ask(master.ref, status("1")))
        assert.instanceOf(error, Errors.AuthenticationFailed)
        const sendError = yield* Effect.flip(a.rpc.send(master.worker, heartbeat(5, a.address)))
        assert.instanceOf(sendError, Errors.AuthenticationFailed)
        // Both sides report the failure; the listener delivered nothing and saw no connection.
        const aLogs = yield* a.logs
        const bLogs = yield* Polling.eventually(b.logs, (lines) =>
          lines.some((line) =>
            line.includes("Authentication")
          ))
        assert.isTrue(aLogs.some((line) => line.includes("Authentication")), aLogs.join("\n"))
        assert.isTrue(bLogs.some((line) => line.includes("Authentication")), bLogs.join("\n"))
        assert.deepStrictEqual(yield* b.rpc.peers, [])
        // A node with the listener's own secret gets through; what the listener saw before it is all it saw.
        const probe = yield* startNode(server === undefined ? {} : { secret: server })
        yield* probe.rpc.send(master.worker, heartbeat(9, probe.address))
        const first = yield* Queue.take(master.received)
        assert.deepStrictEqual(first.sender, probe.address)
        assert.strictEqual((yield* Queue.takeAll(master.received)).length, 0)
        assert.deepStrictEqual([...yield* Queue.takeAll(master.events)], [`connected ${probe.address.hostPort}`])
      })

    live("a wrong secret is refused on both sides", () => rejected("wrong", "right"))
    live("a missing secret is refused on both sides", () => rejected(undefined, "right"))
    live("a secret the listener does not have is refused on both sides", () => rejected("extra", undefined))

    live("a message sent before the handshake completes is never delivered", () =>
      Effect.gen(function*() {
        const b = yield* startNode({ secret: "s" })
        const master = yield* registerMaster(b.rpc)
        const send = { _tag: "send", from: null, to: "Worker", body: body(heartbeat(6, b.address)) } as const

        // No hello at all.
        const first = yield* rawConnection(b.address)
        first.write(send)
        yield* first.closed
        // A hello, then a message without waiting for the challenge.
        const second = yield* rawConnection(b.address)
        second.write({ _tag: "hello", version: Envelope.protocolVersion, address: null, nonce: new Uint8Array(32) })
        second.write(send)
        yield* second.closed
        const frames = yield* second.drained
        assert.isTrue(frames.some((frame) => frame._tag === "reject"))
        // Both connections are closed, so nothing more can come of them; an authenticated node's message is the
        // first the endpoint ever gets.
        const probe = yield* startNode({ secret: "s" })
        yield* probe.rpc.send(master.worker, heartbeat(7, probe.address))
        const delivered = yield* Queue.take(master.received)
        assert.deepStrictEqual(delivered.sender, probe.address)
      }))

    live("a protocol version mismatch is refused with ProtocolVersionMismatch", () =>
      Effect.gen(function*() {
        const b = yield* startNode()
        yield* registerMaster(b.rpc)
        const raw = yield* rawConnection(b.address)
        raw.write({ _tag: "hello", version: Envelope.protocolVersion + 1, address: null, nonce: null })
        const frame = yield* raw.next
        assert.strictEqual(frame._tag, "reject")
        const error = (frame as { error: { _tag: string; remote: number } }).error
        assert.strictEqual(error._tag, "ProtocolVersionMismatch")
        assert.strictEqual(error.remote, Envelope.protocolVersion + 1)
        yield* raw.closed
      }))

    live("fuzz: garbage frames are dropped and the connection serves the next valid frame", () =>
      Effect.gen(function*() {
        const raw = yield* welcomedByMaster
        const garbage = [
          new Uint8Array([0, 0, 0, 3, 0xc1, 0xc1, 0xc1]), // 0xc1 is never valid MessagePack
          new Uint8Array([0, 0, 0, 1, 0x07]), // a valid value, not an envelope
          new Uint8Array([0, 0, 0, 2, 0x81, 0xa0]) // a truncated map
        ]
        for (let i = 0; i < 200; i++) {
          const size = 1 + Math.floor(Math.random() * 64)
          const frame = new Uint8Array(4 + size)
          new DataView(frame.buffer).setUint32(0, size)
          frame.set(crypto.getRandomValues(new Uint8Array(size)), 4)
          garbage.push(frame)
        }
        for (const frame of garbage) raw.writeBytes(frame)
        raw.write({ _tag: "ask", id: 41, from: null, to: "Master", body: body(status("still here")) })
        raw.write({ _tag: "ask", id: 42, from: null, to: "Master", body: { _tag: "RequestDriverStatus", driverId: 5 } })
        const replies: Array<Envelope.Envelope> = []
        while (replies.length < 2) {
          const frame = yield* raw.next
          if (frame._tag === "reply" || frame._tag === "failure") replies.push(frame)
        }
        const byId = new Map(replies.map((r) => [(r as { id: number }).id, r]))
        assert.strictEqual(byId.get(41)?._tag, "reply")
        assert.strictEqual(byId.get(42)?._tag, "failure")
        assert.strictEqual((byId.get(42) as { error: { _tag: string } }).error._tag, "MalformedFrame")
        assert.isFalse(yield* raw.isClosed)
      }))

    live("an ask from another MessagePack library is answered: 64-bit ids, and a failure for a malformed one", () =>
      Effect.gen(function*() {
        const raw = yield* welcomedByMaster
        // Packed as a library that writes integers of 2^32 and above as 64-bit integers: msgpackr packs a BigInt so.
        const otherLibrary = new Packr({ useRecords: false, mapsAsObjects: true })
        const frame = (value: unknown) => {
          const payload = otherLibrary.pack(value)
          const bytes = new Uint8Array(4 + payload.length)
          new DataView(bytes.buffer).setUint32(0, payload.length)
          bytes.set(payload, 4)
          return bytes
        }
        const wideId = 2 ** 40 + 1
        raw.writeBytes(frame({ _tag: "ask", id: BigInt(wideId), from: null, to: "Master", body: body(status("x")) }))
        // A readable id, but `from` is no address: the envelope is malformed, and the asker is told so.
        raw.writeBytes(frame({ _tag: "ask", id: 43, from: 5, to: "Master", body: body(status("y")) }))
        const answers = new Map<number, Envelope.Envelope>()
        while (answers.size < 2) {
          const envelope = yield* raw.next
          if (envelope._tag === "reply" || envelope._tag === "failure") {
            answers.set(envelope.id, envelope)
          }
        }
        assert.strictEqual(answers.get(wideId)?._tag, "reply")
        const failure = answers.get(43) as Extract<Envelope.Envelope, { _tag: "failure" }>
        assert.deepStrictEqual(failure.error, {
          _tag: "MalformedFrame",
          reason: "not an envelope: from must be null or an address { host, port }"
        })
        assert.isFalse(yield* raw.isClosed)
      }))

    live("fuzz: a stream of random bytes is cut off and the node serves the next connection", () =>
      Effect.gen(function*() {
        const a = yield* startNode()
        // A random header that happens to announce a small frame leaves the node waiting for the rest; the
        // handshake deadline is what cuts such a connection off.
        const b = yield* startNode({ handshakeTimeout: 300 })
        const master = yield* registerMaster(b.rpc)
        for (let i = 0; i < 20; i++) {
          const raw = yield* rawConnection(b.address)
          raw.writeBytes(crypto.getRandomValues(new Uint8Array(1 + Math.floor(Math.random() * 4096))))
          raw.writeBytes(new Uint8Array([0xff, 0xff, 0xff, 0xff]))
          yield* raw.closed
        }
        assert.isTrue((yield* a.rpc.ask(master.ref, status("after fuzz"))).found)
      }))

    live("a peer that never completes the handshake is dropped", () =>
      Effect.gen(function*() {
        const b = yield* startNode({ handshakeTimeout: 200 })
        const raw = yield* rawConnection(b.address)
        const reason = yield* raw.closed
        assert.isString(reason)
        const frames = yield* raw.drained
        assert.strictEqual(frames[0]?._tag, "reject")
      }))

    live("dialling a node that accepts but never answers fails within the lookup timeout", () =>
      Effect.gen(function*() {
        const silent = yield* silentListener
        const a = yield* startNode({ lookupTimeout: 300 })
        const started = Date.now()
        const error = yield* Effect.flip(a.rpc.ask(Endpoints.ref(silent, Endpoints.master), status("d-1")))
        assert.instanceOf(error, Errors.ConnectFailed)
        assert.include(error.message, "no answer within 300ms (kindling.rpc.lookupTimeout)")
        assert.isBelow(Date.now() - started, 2_000)
      }))

    live("an asker that gives up does not wait for the dial, and the dial still serves the others", () =>
      Effect.gen(function*() {
        const silent = yield* silentListener
        const a = yield* startNode({ lookupTimeout: 60_000 })
        const started = Date.now()
        const impatient = yield* Effect.flip(
          a.rpc.ask(Endpoints.ref(silent, Endpoints.master), status("d-1"), { timeout: 200 })
        )
        assert.instanceOf(impatient, Errors.AskTimeout)
        const interrupted = yield* Effect.fork(a.rpc.ask(Endpoints.ref(silent, Endpoints.master), status("d-2")))
        yield* Effect.sleep(50)
        yield* Fiber.interrupt(interrupted)
        assert.isBelow(Date.now() - started, 1_500)
        const b = yield* startNode()
        const master = yield* registerMaster(b.rpc)
        assert.isTrue((yield* a.rpc.ask(master.ref, status("elsewhere"))).found)
      }))

    live("sending to a node that is not there fails with ConnectFailed: no connection was made, so none was lost", () =>
      Effect.gen(function*() {
        const a = yield* startNode()
        const b = yield* startStoppableNode()
        const port = b.address.port
        yield* b.stop
        const error = yield* Effect.flip(
          a.rpc.send(Endpoints.ref(RpcAddress.make("127.0.0.1", port), testWorker), heartbeat(7, a.address))
        )
        assert.instanceOf(error, Errors.ConnectFailed)
        assert.match(error.message, new RegExp(`^Cannot connect to 127\\.0\\.0\\.1:${port}: .*(ECONNREFUSED|refused)`))
      }))

    live("an address refuses connections only when nothing listens there", () =>
      Effect.gen(function*() {
        const a = yield* startNode()
        const b = yield* startStoppableNode()
        assert.isFalse(yield* a.rpc.refusesConnections(b.address))
        assert.isFalse(yield* a.rpc.refusesConnections(yield* silentListener))
        yield* b.stop
        assert.isTrue(yield* a.rpc.refusesConnections(b.address))
      }))

    live("a client-only node asks without listening", () =>
      Effect.gen(function*() {
        const b = yield* startNode()
        const master = yield* registerMaster(b.rpc)
        const rpc = yield* RpcEnv.make({})
        assert.isUndefined(rpc.address)
        const reply = yield* rpc.ask(master.ref, status("from a client"))
        assert.deepStrictEqual(reply.workerId, Option.some(Ids.WorkerId.make("from a client")))
        const event = yield* Queue.take(master.events)
        assert.match(event, /^connected /)
      }))
  })

suite("the in-memory transport", Transport.layerMemory)
suite("the in-memory transport handing over values", handingOver)
suite("TCP", NodeTransport.layer)
suite("encrypted TCP", encryptedTcp())
