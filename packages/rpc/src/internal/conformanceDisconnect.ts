// The disconnect checks: a peer that drops its connection half-way (in its handshake, in a frame, with an ask
// unanswered) leaves the node serving its other connections and new ones.
import * as Effect from "effect/Effect"
import type { Check } from "../Conformance.js"
import { askFrame, check, dial, hello, open, pause, probe, probeBody, type Target } from "./conformanceConversation.js"
import { type CheckFailed, frameOf, type Session } from "./conformanceSession.js"

// A peer goes away half-way through something; the node goes on serving a connection opened before and new ones.
const survives = (name: string, leave: (target: Target, session: Session) => Effect.Effect<void, CheckFailed>, {
  handshake: shakes
}: { readonly handshake: boolean }) =>
  check(
    `disconnect: a peer that drops ${name} leaves the node serving other connections and new ones`,
    (target) =>
      Effect.gen(function*() {
        const other = yield* open(target)
        const leaving = yield* (shakes ? open(target) : dial(target))
        yield* leave(target, leaving)
        yield* leaving.drop
        yield* pause(100)
        yield* probe(target, other, "on a connection opened before")
        yield* probe(target, yield* open(target), "on a new connection")
      })
  )

const halfOf = (bytes: Uint8Array) => bytes.subarray(0, Math.ceil(bytes.length / 2))

export const disconnectChecks: ReadonlyArray<Check> = [
  survives("in the middle of its handshake", (_, session) => session.write(halfOf(frameOf(hello(null)))), {
    handshake: false
  }),
  survives(
    "in the middle of a frame",
    (target, session) =>
      Effect.flatMap(probeBody(target), (body) => session.write(halfOf(askFrame(target, target.endpoint, body).bytes))),
    { handshake: true }
  ),
  survives(
    "with an ask unanswered",
    (target, session) =>
      Effect.flatMap(probeBody(target), (body) => session.write(askFrame(target, target.endpoint, body).bytes)),
    { handshake: true }
  )
]
