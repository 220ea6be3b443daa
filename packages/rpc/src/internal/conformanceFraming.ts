// The framing checks: frames split over many writes or sharing one, payloads that are not MessagePack maps, empty
// frames, and a frame over the node's limit.
import * as Effect from "effect/Effect"
import type { Check } from "../Conformance.js"
import { concat } from "./bytes.js"
import {
  answerTo,
  askFrame,
  expectRefusal,
  ignored,
  opened,
  pause,
  probeBody,
  replyOf
} from "./conformanceConversation.js"
import { fail, frame, frameOf, show } from "./conformanceSession.js"

export const framingChecks: ReadonlyArray<Check> = [
  opened(
    "framing: a frame split over many writes (the header byte by byte) is read",
    (target, session) =>
      Effect.gen(function*() {
        const { bytes, id } = askFrame(target, target.endpoint, yield* probeBody(target))
        const half = Math.ceil((bytes.length + 6) / 2)
        const pieces = [0, 1, 2, 3, 4, 5].map((i) => bytes.subarray(i, i + 1))
        pieces.push(bytes.subarray(6, half), bytes.subarray(half))
        for (const piece of pieces) {
          yield* session.write(piece)
          yield* pause(5)
        }
        yield* replyOf(target.probe, yield* answerTo(session, id))
      })
  ),
  opened(
    "framing: two asks in one write are both answered, each by its id",
    (target, session) =>
      Effect.gen(function*() {
        const body = yield* probeBody(target)
        const first = askFrame(target, target.endpoint, body)
        const second = askFrame(target, target.endpoint, body)
        yield* session.write(concat([first.bytes, second.bytes]))
        const ids = new Set<unknown>()
        for (let i = 0; i < 2; i++) ids.add((yield* session.next("an answer")).value.id)
        if (!ids.has(first.id) || !ids.has(second.id)) {
          return yield* fail(`expected answers to asks ${first.id} and ${second.id}, got ${show([...ids])}`)
        }
      })
  ),
  ignored(
    "framing: a frame of bytes that are not MessagePack is dropped; the connection goes on",
    () => Effect.succeed(frame(Uint8Array.of(0xc1, 0xdc, 0xff, 0xff, 0x00)))
  ),
  ignored(
    "framing: a MessagePack value that is not a map is dropped; the connection goes on",
    () => Effect.succeed(frameOf([1, "ask", null]))
  ),
  ignored("framing: an empty frame is dropped; the connection goes on", () => Effect.succeed(frame(new Uint8Array(0)))),
  opened(
    "framing: a frame longer than the node's limit is rejected with FrameTooLarge, then closed",
    (target, session) =>
      Effect.gen(function*() {
        // The header alone says it: no node reads on into a frame it will not take.
        const header = new Uint8Array(4)
        new DataView(header.buffer).setUint32(0, Math.min(target.maxFrameSize + 1, 0xffffffff))
        yield* session.write(header)
        yield* expectRefusal(session, "FrameTooLarge")
      })
  )
]
