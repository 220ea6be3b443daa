// The conformance kit against nodes that fall short, in this process over TCP: a kit that never fails proves
// nothing. (It passing against Kindling's own master and worker is the cli package's test.)
import { assert, describe, it } from "@effect/vitest"
import { Deadlines } from "@kindling/protocol/testing"
import { NodeTransport } from "@kindling/rpc/node"
import { Conformance } from "@kindling/rpc/testing"
import { Effect } from "effect"
import { host, startNode } from "./fixtures/nodes.js"

const play = (port: number, secret?: string) =>
  Conformance.run({ host, port, role: "worker", secret, timeout: "2 seconds" })

describe("Conformance", () => {
  it.scopedLive(
    "a node without the role's endpoint passes the handshake but fails every ask of the role",
    () =>
      Effect.gen(function*() {
        const node = yield* startNode({ secret: "s3cret" })
        const results = yield* play(node.address.port, "s3cret")
        assert.deepStrictEqual(
          results.map((result) => result.name),
          Conformance.checks({ role: "worker", secret: "s3cret" }).map((check) => check.name)
        )
        const handshake = results.filter((result) => result.name.startsWith("handshake:"))
        assert.strictEqual(handshake.length, 5)
        for (const result of handshake) assert.isTrue(result.passed, Conformance.format(result))
        const asks = results.filter((result) => result.name.startsWith("RequestWorkerState:"))
        assert.strictEqual(asks.length, 2)
        for (const result of asks) {
          assert.isFalse(result.passed)
          assert.include(result.detail, "EndpointNotFound")
        }
        assert.match(Conformance.format(asks[0]!), /^FAIL {2}RequestWorkerState: .+: .*EndpointNotFound/)
      }).pipe(Effect.provide(NodeTransport.layer)),
    Deadlines.scaled(60_000)
  )

  it.scopedLive(
    "a wrong secret fails the handshake check, and then no other check is run",
    () =>
      Effect.gen(function*() {
        const node = yield* startNode({ secret: "the node's" })
        const [first, ...rest] = yield* play(node.address.port, "another")
        assert.isFalse(first!.passed)
        assert.include(first!.detail, "the node's proof does not match the secret")
        assert.isAbove(rest.length, 10)
        for (const result of rest) assert.strictEqual(result.detail, "not run: the node did not complete the handshake")
      }).pipe(Effect.provide(NodeTransport.layer)),
    Deadlines.scaled(30_000)
  )
})
