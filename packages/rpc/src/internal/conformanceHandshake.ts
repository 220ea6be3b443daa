// The handshake checks: with and without a shared secret, another protocol version, an ask before the handshake.
import { Envelope } from "@kindling/protocol"
import * as Effect from "effect/Effect"
import type { Check } from "../Conformance.js"
import { askFrame, bodyOf, check, dial, expectKind, expectRefusal, hello, open } from "./conformanceConversation.js"
import { fail, frameOf, show } from "./conformanceSession.js"
import * as Handshake from "./handshake.js"

// A hello whose nonce does not match the node's secret, or lack of one.
const refusedHello = (name: string, nonce: Uint8Array | null) =>
  check(name, (target) =>
    Effect.gen(function*() {
      const session = yield* dial(target)
      yield* session.write(frameOf(hello(nonce)))
      yield* expectRefusal(session, "AuthenticationFailed")
    }))

export const handshakeChecks = (secret: boolean): ReadonlyArray<Check> => [
  secret
    ? check("handshake: the node proves the shared secret in its challenge and welcomes our proof", open)
    : check("handshake: a hello without a nonce is answered with welcome, version 1", open),
  ...(secret
    ? [
      refusedHello("handshake: a hello without a nonce is rejected with AuthenticationFailed, then closed", null),
      check(
        "handshake: a wrong proof is rejected with AuthenticationFailed, then closed",
        (target) =>
          Effect.gen(function*() {
            const session = yield* dial(target)
            yield* session.write(frameOf(hello(Handshake.makeNonce())))
            yield* expectKind(session, "challenge")
            yield* session.write(frameOf({ _tag: "proof", proof: Handshake.makeNonce() }))
            yield* expectRefusal(session, "AuthenticationFailed")
          })
      )
    ]
    : [
      refusedHello(
        "handshake: a hello with a nonce (a secret the node does not have) is rejected with AuthenticationFailed",
        Handshake.makeNonce()
      )
    ]),
  check(
    "handshake: another protocol version is rejected with ProtocolVersionMismatch, then closed",
    (target) =>
      Effect.gen(function*() {
        const session = yield* dial(target)
        const version = Envelope.protocolVersion + 1
        yield* session.write(frameOf(hello(target.key === undefined ? null : Handshake.makeNonce(), version)))
        const error = yield* expectRefusal(session, "ProtocolVersionMismatch")
        if (error.remote !== version || error.local !== Envelope.protocolVersion) {
          return yield* fail(`expected remote ${version} and local ${Envelope.protocolVersion}, got ${show(error)}`)
        }
      })
  ),
  check(
    "handshake: an ask before the handshake is rejected with AuthenticationFailed, never answered",
    (target) =>
      Effect.gen(function*() {
        const session = yield* dial(target)
        const body = yield* bodyOf(target.probe)
        yield* session.write(askFrame(target, target.endpoint, body).bytes)
        yield* expectRefusal(session, "AuthenticationFailed")
      })
  )
]
