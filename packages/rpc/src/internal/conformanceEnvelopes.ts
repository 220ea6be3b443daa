// The envelope checks: asks to unknown endpoints or with bodies the endpoint does not accept, invalid envelopes,
// and what a node must drop without answering (sends it cannot deliver, pings, envelopes of unknown kinds).
import * as Effect from "effect/Effect"
import type { Check } from "../Conformance.js"
import { answerTo, ask, failureOf, ignored, opened, probeBody } from "./conformanceConversation.js"
import { fail, frameOf, show } from "./conformanceSession.js"

export const envelopeChecks: ReadonlyArray<Check> = [
  opened(
    "envelope: an ask to an unknown endpoint fails with EndpointNotFound naming it",
    (target, session) =>
      Effect.gen(function*() {
        const answer = yield* ask(target, session, "NoSuchEndpoint", yield* probeBody(target))
        const error = yield* failureOf(target.probe, answer, "EndpointNotFound")
        if (!String(error.endpoint).includes("NoSuchEndpoint")) {
          return yield* fail(`the error does not name the endpoint: ${show(error)}`)
        }
      })
  ),
  opened(
    "envelope: an ask whose body is no message of the endpoint fails with MalformedFrame",
    (target, session) =>
      Effect.gen(function*() {
        const answer = yield* ask(target, session, target.endpoint, { _tag: "NoSuchMessage" })
        yield* failureOf(target.probe, answer, "MalformedFrame")
      })
  ),
  opened("envelope: an ask that is not a valid envelope (to is a number) but has an id fails with MalformedFrame", (
    target,
    session
  ) =>
    Effect.gen(function*() {
      const id = target.nextId()
      yield* session.write(frameOf({ _tag: "ask", id, from: null, to: 42, body: yield* probeBody(target) }))
      yield* failureOf(target.probe, yield* answerTo(session, id), "MalformedFrame")
    })),
  ignored(
    "envelope: a send to an unknown endpoint is dropped; the connection goes on",
    (target) =>
      Effect.map(probeBody(target), (body) => frameOf({ _tag: "send", from: null, to: "NoSuchEndpoint", body }))
  ),
  ignored(
    "envelope: a send whose body does not decode is dropped; the connection goes on",
    (target) =>
      Effect.succeed(frameOf({ _tag: "send", from: null, to: target.endpoint, body: { _tag: "NoSuchMessage" } }))
  ),
  ignored("envelope: a ping gets no answer; the connection goes on", () => Effect.succeed(frameOf({ _tag: "ping" }))),
  ignored(
    "envelope: an envelope of an unknown kind is dropped; the connection goes on",
    () => Effect.succeed(frameOf({ _tag: "conformance" }))
  )
]
