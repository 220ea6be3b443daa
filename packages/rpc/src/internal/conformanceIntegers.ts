// The 64-bit integer checks: ask ids of 2^32 and more in either MessagePack form, and (on the master) a body's
// integer beyond 32 bits read as a number, one beyond 2^53 refused naming its field.
import * as Effect from "effect/Effect"
import type { Check, Role } from "../Conformance.js"
import { requestExecutorsOfUnknownApp, unknownApp } from "./conformanceAsks.js"
import { answerTo, failureOf, opened, probeBody, replyOf } from "./conformanceConversation.js"
import { fail, frame, int64, map, packed, show, uint64 } from "./conformanceSession.js"

// An ask written by hand, so that its id can be any MessagePack integer.
const rawAsk = (to: string, id: Uint8Array, body: Uint8Array) =>
  frame(map([["_tag", packed("ask")], ["id", id], ["from", packed(null)], ["to", packed(to)], ["body", body]]))

const wideIdCheck = (form: "uint64" | "int64", id: bigint) =>
  opened(
    `integers: an ask id of ${id} (≥ 2^32) written as ${form} is answered with that id`,
    (target, session) =>
      Effect.gen(function*() {
        const encoded = form === "uint64" ? uint64(id) : int64(id)
        yield* session.write(rawAsk(target.endpoint, encoded, packed(yield* probeBody(target))))
        yield* replyOf(target.probe, yield* answerTo(session, Number(id)))
      })
  )

// RequestExecutors for an unknown app, with its one integer written by hand.
const requestExecutors = (requestedTotal: Uint8Array) =>
  map([["_tag", packed("RequestExecutors")], ["appId", packed(unknownApp)], ["requestedTotal", requestedTotal]])

export const integerChecks = (role: Role): ReadonlyArray<Check> => [
  wideIdCheck("uint64", 2n ** 32n + 7n),
  wideIdCheck("int64", 2n ** 40n + 3n),
  ...(role === "master"
    ? [
      opened(
        "integers: a body's integer of 2^32 + 1 written as uint64 is read as a number",
        (target, session) =>
          Effect.gen(function*() {
            const id = target.nextId()
            yield* session.write(rawAsk(target.endpoint, packed(id), requestExecutors(uint64(2n ** 32n + 1n))))
            // An unknown app, not a malformed body: the number was read.
            yield* failureOf(requestExecutorsOfUnknownApp, yield* answerTo(session, id), "AppNotFound")
          })
      ),
      opened(
        "integers: a body's integer beyond 2^53 fails with MalformedFrame naming the field",
        (target, session) =>
          Effect.gen(function*() {
            const id = target.nextId()
            yield* session.write(rawAsk(target.endpoint, packed(id), requestExecutors(uint64(2n ** 64n - 1n))))
            const error = yield* failureOf(requestExecutorsOfUnknownApp, yield* answerTo(session, id), "MalformedFrame")
            if (!String(error.reason).includes("requestedTotal")) {
              return yield* fail(`the reason does not name requestedTotal: ${show(error.reason)}`)
            }
          })
      )
    ]
    : [])
]
