// Nodes of one process on a network that hands over values: messages, replies and errors go from endpoint to
// endpoint as they are — the very objects, never encoded — with the delivery an RpcEnv gives over frames.
import { assert, describe, it } from "@effect/vitest"
import type { WorkerMessages } from "@kindling/protocol"
import { Catalogue, type Codec, Errors, Ids, RpcAddress, SubmissionMessages } from "@kindling/protocol"
import { type RpcEnv, Transport } from "@kindling/rpc"
import { Arbitrary, Effect, Either, FastCheck, Layer, Queue, Schema, type Scope } from "effect"
import { heartbeat, registerMaster, startNode, startStoppableNode } from "./fixtures/nodes.js"

const handingOver = Layer.effect(Transport.Transport, Transport.makeMemoryWith({ handOverValues: true }))

const live = (title: string, test: () => Effect.Effect<void, unknown, Transport.Transport | Scope.Scope>) =>
  it.scopedLive(title, () => test().pipe(Effect.provide(handingOver)), 30_000)

const status = (id: string) => new SubmissionMessages.RequestDriverStatus({ driverId: Ids.DriverId.make(id) })

type Result = { readonly success: Schema.Schema<any, any, never>; readonly failure: Schema.Schema<any, any, never> }
const resultOf = (message: unknown): Result | undefined =>
  typeof message === "object" && message !== null && Schema.symbolWithResult in message
    ? (message as Record<symbol, Result>)[Schema.symbolWithResult]
    : undefined

interface Arrived {
  readonly message: Codec.Message
  readonly context: RpcEnv.MessageContext
}

// An endpoint that takes every message of `union`, keeps what arrives, and answers each ask with the reply (or the
// error) `answers` holds for it.
const registerCatchAll = (
  rpc: RpcEnv.RpcEnv,
  name: string,
  union: Schema.Schema<any, any, never>,
  answers: Map<unknown, Either.Either<unknown, unknown>>
) =>
  Effect.gen(function*() {
    const arrived = yield* Queue.unbounded<Arrived>()
    const handler = (message: Codec.Message, context: RpcEnv.MessageContext) => {
      Queue.unsafeOffer(arrived, { message, context })
      const answer = answers.get(message)
      return answer === undefined ? Effect.void : Either.isRight(answer) ? Effect.succeed(answer.right) : Effect.fail(
        answer.left
      )
    }
    // Every tag of the union has this handler.
    const handlers = new Proxy({}, { get: () => handler }) as RpcEnv.Handlers<Codec.Message, never>
    yield* rpc.register(name, { inbound: union, handlers })
    return arrived
  })

describe("RpcEnv handing over values in process", () => {
  live(
    "every message of every conversation arrives as the object sent, and each ask's reply as the object answered",
    () =>
      Effect.gen(function*() {
        const a = yield* startNode()
        const b = yield* startNode()
        for (const [n, conversation] of Catalogue.conversations.entries()) {
          const answers = new Map<unknown, Either.Either<unknown, unknown>>()
          const arrived = yield* registerCatchAll(b.rpc, `conversation-${n}`, conversation.union, answers)
          // One-way messages and asks alike: which one a message is, is checked where it is sent.
          type Any = Codec.Message & Schema.WithResult.All
          const ref = RpcAddress.endpoint<Any>(b.address, `conversation-${n}`)
          const messages = FastCheck.sample(Arbitrary.make(conversation.union), { numRuns: 40, seed: n }) as Array<Any>
          for (const [i, message] of messages.entries()) {
            const result = resultOf(message)
            if (result === undefined) {
              yield* a.rpc.send(ref, message)
              continue
            }
            // Every other ask is answered with one of its declared errors, when it declares any.
            const fails = i % 2 === 1 && result.failure.ast._tag !== "NeverKeyword"
            const [answer] = FastCheck.sample(Arbitrary.make(fails ? result.failure : result.success), {
              numRuns: 1,
              seed: i
            })
            answers.set(message, fails ? Either.left(answer) : Either.right(answer))
            const outcome = yield* Effect.either(a.rpc.ask(ref, message))
            assert.strictEqual(Either.isLeft(outcome) ? outcome.left : outcome.right, answer)
            assert.strictEqual(Either.isLeft(outcome), fails)
          }
          const fromA = Array.from(yield* Queue.takeBetween(arrived, messages.length, messages.length))
          // The one-way messages again, from b to itself.
          const oneWay = messages.filter((message) => resultOf(message) === undefined)
          for (const message of oneWay) yield* b.rpc.send(ref, message)
          const fromB = Array.from(yield* Queue.takeBetween(arrived, oneWay.length, oneWay.length))
          fromA.forEach((arrival, i) => {
            assert.strictEqual(arrival.message, messages[i])
            assert.deepStrictEqual(arrival.context.sender, a.address)
            assert.notStrictEqual(arrival.context.connection, 0)
          })
          fromB.forEach((arrival, i) => {
            assert.strictEqual(arrival.message, oneWay[i])
            assert.strictEqual(arrival.context.connection, 0)
          })
        }
      })
  )

  live(
    "sends and asks on one connection reach a sequential endpoint in the order they were made",
    () =>
      Effect.gen(function*() {
        const a = yield* startNode()
        const b = yield* startNode()
        const master = yield* registerMaster(b.rpc)
        const order: Array<string> = []
        const asked = yield* Effect.forEach(Array.from({ length: 200 }, (_, i) => i), (i) =>
          i % 3 === 0
            ? Effect.map(a.rpc.ask(master.ref, status(`ask-${i}`)), (reply) => {
              order.push(`reply-${i}`)
              return reply
            })
            : Effect.as(a.rpc.send(master.worker, heartbeat(i, a.address)), undefined), { concurrency: "unbounded" })
        assert.strictEqual(asked.filter((reply) => reply !== undefined).length, 67)
        const heartbeats = Array.from(yield* Queue.takeBetween(master.received, 133, 133))
        const numbers = heartbeats.map(({ message }) => Number((message as WorkerMessages.Heartbeat).workerId.slice(7)))
        assert.deepStrictEqual(numbers, [...numbers].sort((x, y) => x - y))
        assert.strictEqual(order.length, 67)
      })
  )

  live(
    "a message the endpoint does not take is refused with MalformedFrame, as from a frame",
    () =>
      Effect.gen(function*() {
        const a = yield* startNode()
        const b = yield* startNode()
        const master = yield* registerMaster(b.rpc)
        const wrong = RpcAddress.endpoint<SubmissionMessages.RequestDriverStatus>(b.address, "Worker")
        const error = yield* Effect.flip(a.rpc.ask(wrong, status("to the wrong endpoint")))
        assert.instanceOf(error, Errors.MalformedFrame)
        assert.include(error.reason, "RequestDriverStatus")
        // Nor is a look-alike that is no instance of its message class.
        const lookAlike = {
          ...status("plain"),
          _tag: "RequestDriverStatus"
        } as unknown as SubmissionMessages.RequestDriverStatus
        assert.instanceOf(yield* Effect.flip(a.rpc.ask(master.ref, lookAlike)), Errors.MalformedFrame)
        assert.isTrue((yield* a.rpc.ask(master.ref, status("after"))).found)
      })
  )

  live(
    "asks to a node that goes fail with ConnectionLost, and what is sent to it after fails to connect",
    () =>
      Effect.gen(function*() {
        const a = yield* startNode()
        const b = yield* startStoppableNode()
        const master = yield* registerMaster(b.rpc)
        assert.isTrue((yield* a.rpc.ask(master.ref, status("first"))).found)
        const waiting = yield* Effect.fork(Effect.flip(a.rpc.ask(master.ref, new SubmissionMessages.RequestReadyz())))
        yield* Effect.sleep(20)
        yield* b.stop
        assert.instanceOf(yield* waiting.await.pipe(Effect.flatten), Errors.ConnectionLost)
        const error = yield* Effect.flip(a.rpc.send(master.worker, heartbeat(1, a.address)))
        assert.instanceOf(error, Errors.ConnectFailed)
      })
  )

  live(
    "an endpoint that is gone answers EndpointNotFound, and a handler's defect RemoteHandlerError",
    () =>
      Effect.gen(function*() {
        const a = yield* startNode()
        const b = yield* startNode()
        yield* registerMaster(b.rpc)
        const nobody = RpcAddress.endpoint<SubmissionMessages.RequestDriverStatus>(b.address, "Nobody")
        assert.instanceOf(yield* Effect.flip(a.rpc.ask(nobody, status("x"))), Errors.EndpointNotFound)
        yield* b.rpc.register("Dying", {
          inbound: SubmissionMessages.SubmissionRequest,
          handlers: new Proxy({}, { get: () => () => Effect.die("boom") }) as RpcEnv.Handlers<
            SubmissionMessages.SubmissionRequest,
            never
          >
        })
        const dying = RpcAddress.endpoint<SubmissionMessages.RequestDriverStatus>(b.address, "Dying")
        const error = yield* Effect.flip(a.rpc.ask(dying, status("y")))
        assert.instanceOf(error, Errors.RemoteHandlerError)
        assert.include(error.reason, "boom")
      })
  )

  live("through a layer over its connections (a tap), messages go in frames again", () =>
    Effect.gen(function*() {
      const frames: Array<Transport.TappedFrame> = []
      const network = yield* Transport.makeMemoryWith({ handOverValues: true })
      const tapped = Transport.tap(network, (frame) => frames.push(frame))
      const run = Effect.gen(function*() {
        const a = yield* startNode()
        const b = yield* startNode()
        const master = yield* registerMaster(b.rpc)
        const sent = heartbeat(5, a.address)
        yield* a.rpc.send(master.worker, sent)
        const got = yield* Queue.take(master.received)
        assert.notStrictEqual(got.message, sent)
        assert.deepStrictEqual(got.message, sent)
      })
      yield* Effect.provideService(run, Transport.Transport, tapped)
      // hello, welcome and the heartbeat, seen on both sides.
      assert.isAtLeast(frames.length, 6)
    }))

  it.scopedLive("on a network that carries bytes only, messages are encoded and decoded", () =>
    Effect.gen(function*() {
      const a = yield* startNode()
      const b = yield* startNode()
      const master = yield* registerMaster(b.rpc)
      const sent = heartbeat(6, a.address)
      yield* a.rpc.send(master.worker, sent)
      const got = yield* Queue.take(master.received)
      assert.notStrictEqual(got.message, sent)
      assert.deepStrictEqual(got.message, sent)
    }).pipe(Effect.provide(Transport.layerMemory)))
})
