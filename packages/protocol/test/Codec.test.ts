import { assert, describe, it } from "@effect/vitest"
import { Catalogue, Codec, Descriptions, Endpoints, Envelope, Errors, SubmissionMessages } from "@kindling/protocol"
import { Arbitraries } from "@kindling/protocol/testing"
import { Arbitrary, Either, FastCheck as fc, Option, ParseResult, Schema } from "effect"
import { Packr } from "msgpackr"

// Two values are the same on the wire when their schema-encoded forms pack to the same bytes.
const packr = new Packr({ useRecords: false, moreTypes: false, mapsAsObjects: true })
const wireBytes = (schema: Schema.Schema<any, any, never>, value: unknown) =>
  packr.pack(Schema.encodeSync(schema)(value))

const maxFrameSize = 1 << 24

// Any valid description: the tests below change one of its fields.
const [description] = fc.sample(Arbitrary.make(Descriptions.DriverDescription), { numRuns: 1, seed: 1 })

// Feeds a frame to a decoder in pieces cut at the given points, as a socket would deliver it.
const deframe = (frame: Uint8Array, cuts: ReadonlyArray<number>) => {
  const decoder = new Codec.FrameDecoder(maxFrameSize)
  const points = [...new Set(cuts.map((c) => c % (frame.length + 1)))].sort((a, b) => a - b)
  const payloads: Array<Uint8Array> = []
  let from = 0
  for (const point of [...points, frame.length]) {
    payloads.push(...Either.getOrThrow(decoder.push(frame.subarray(from, point))))
    from = point
  }
  assert.strictEqual(decoder.pending, 0)
  return payloads
}

const roundtrip = (union: Schema.Schema<any, any, never>, message: any, cuts: ReadonlyArray<number>) => {
  // msgpackr renames a map key `__proto__` (see docs/protocol.md), so such records do not come back equal.
  fc.pre(!JSON.stringify(Schema.encodeSync(union)(message)).includes(`"__proto__"`))
  const body = Either.getOrThrow(Codec.encodeMessage(message))
  const frame = Either.getOrThrow(
    Codec.encodeFrame({ _tag: "send", from: null, to: "Endpoint", body }, maxFrameSize)
  )
  const payloads = deframe(frame, cuts)
  assert.strictEqual(payloads.length, 1)
  const envelope = Either.getOrThrow(Codec.decodePayload(payloads[0]!))
  assert.strictEqual(envelope._tag, "send")
  const decoded = Either.getOrThrow(Codec.decodeWith(union, (envelope as { body: unknown }).body))
  assert.strictEqual(decoded.constructor, message.constructor)
  assert.deepStrictEqual(wireBytes(union, decoded), wireBytes(union, message))
}

describe("Codec", () => {
  describe("every message roundtrips through the codec and framing", () => {
    for (const conversation of Catalogue.conversations) {
      it.prop(conversation.title, [Arbitrary.make(conversation.union), fc.array(fc.nat())], ([message, cuts]) => {
        roundtrip(conversation.union, message, cuts)
      }, { fastCheck: { numRuns: 150 } })
    }
    for (const union of Catalogue.replies) {
      const title = Catalogue.members(union).map((member) => (member as unknown as { _tag: string })._tag).join(", ")
      it.prop(`replies: ${title}`, [Arbitrary.make(union), fc.array(fc.nat())], ([message, cuts]) => {
        roundtrip(union, message, cuts)
      }, { fastCheck: { numRuns: 100 } })
    }
    const errors = Schema.Union(...Object.values(Errors.all))
    it.prop("errors", [Arbitrary.make(errors), fc.array(fc.nat())], ([error, cuts]) => {
      roundtrip(errors, error, cuts)
    }, { fastCheck: { numRuns: 200 } })
  })

  it("the catalogue has every message exactly once", () => {
    const tags = Catalogue.conversations.flatMap((c) =>
      Catalogue.members(c.union).map((m) => (m as unknown as { _tag: string })._tag)
    )
    // MasterChanged is one message that both workers and app clients receive.
    const counts = new Map<string, number>()
    for (const tag of tags) counts.set(tag, (counts.get(tag) ?? 0) + 1)
    assert.deepStrictEqual([...counts].filter(([, n]) => n > 1), [["MasterChanged", 2]])
    assert.isAtLeast(counts.size, 56)
  })

  describe("the envelope checks agree with the Envelope schema", () => {
    const decodeSchema = ParseResult.decodeUnknownEither(Envelope.Envelope)
    it.prop("valid envelopes", [Arbitrary.make(Envelope.Envelope)], ([envelope]) => {
      const wire = Schema.encodeSync(Envelope.Envelope)(envelope)
      // msgpackr renames a map key `__proto__` (a guard against prototype pollution); see docs/protocol.md.
      fc.pre(!JSON.stringify(wire).includes(`"__proto__"`))
      const ours = Either.getOrThrow(Codec.decodeEnvelope(packr.unpack(packr.pack(wire))))
      assert.deepStrictEqual(packr.pack(Schema.encodeSync(Envelope.Envelope)(ours)), packr.pack(wire))
    }, { fastCheck: { numRuns: 300 } })

    const nearEnvelope = fc.record({
      _tag: fc.constantFrom(
        "hello",
        "challenge",
        "proof",
        "welcome",
        "reject",
        "send",
        "ask",
        "reply",
        "failure",
        "fetch",
        "chunk",
        "credit",
        "end",
        "cancel",
        "fetchFailed",
        "x"
      ),
      version: fc.oneof(fc.integer(), fc.double(), fc.string()),
      purpose: fc.oneof(fc.constantFrom("control", "data", "bulk"), fc.integer()),
      block: fc.oneof(fc.string(), fc.integer()),
      offset: fc.oneof(fc.integer({ min: -3, max: 1 << 30 }), fc.double(), fc.constant(2 ** 53)),
      window: fc.oneof(fc.integer({ min: -3, max: 1 << 30 }), fc.string()),
      crc: fc.oneof(fc.integer({ min: -3, max: 2 ** 32 + 3 }), fc.double()),
      data: fc.oneof(fc.uint8Array(), fc.string()),
      bytes: fc.oneof(fc.integer({ min: -3, max: 1 << 30 }), fc.double()),
      size: fc.oneof(fc.integer({ min: -3, max: 1 << 30 }), fc.string()),
      address: fc.oneof(fc.constant(null), fc.record({ host: fc.string(), port: fc.integer({ min: -5, max: 70000 }) })),
      from: fc.oneof(fc.constant(null), fc.record({ host: fc.string(), port: fc.integer() }), fc.string()),
      to: fc.oneof(fc.string(), fc.integer()),
      id: fc.oneof(fc.integer({ min: -3, max: 1 << 30 }), fc.double(), fc.string()),
      nonce: fc.oneof(fc.constant(null), fc.uint8Array(), fc.string()),
      proof: fc.oneof(fc.uint8Array(), fc.string()),
      body: fc.anything(),
      error: fc.anything()
    }, { requiredKeys: ["_tag"] })
    it.prop("accepts exactly what the schema accepts", [nearEnvelope], ([value]) => {
      const wire = packr.unpack(packr.pack(value))
      assert.strictEqual(Either.isRight(Codec.decodeEnvelope(wire)), Either.isRight(decodeSchema(wire)))
    }, { fastCheck: { numRuns: 1000 } })
  })

  // The data plane's envelopes, through the codec and the framing as a socket cuts it, come back the same.
  it.prop(
    "data plane envelopes and data-connection hellos roundtrip through the codec and framing",
    [
      fc.oneof(
        Arbitrary.make(Envelope.DataEnvelope),
        Arbitrary.make(Envelope.Hello).map((hello) => ({ ...hello, purpose: "data" as const }))
      ),
      fc.array(fc.nat())
    ],
    ([envelope, cuts]) => {
      // msgpackr renames a map key `__proto__` (see docs/protocol.md), so such bodies do not come back equal.
      fc.pre(!JSON.stringify(Schema.encodeSync(Envelope.Envelope)(envelope)).includes(`"__proto__"`))
      const payloads = deframe(Either.getOrThrow(Codec.encodeFrame(envelope, maxFrameSize)), cuts)
      assert.strictEqual(payloads.length, 1)
      const decoded = Either.getOrThrow(Codec.decodePayload(payloads[0]!))
      assert.deepStrictEqual(
        packr.pack(Schema.encodeSync(Envelope.Envelope)(decoded)),
        packr.pack(Schema.encodeSync(Envelope.Envelope)(envelope))
      )
    },
    { fastCheck: { numRuns: 300 } }
  )

  // A chunk written in two pieces, cut anywhere on the way, is read back without joining its data, and is the same
  // envelope the general decoder sees.
  it.prop(
    "chunk frames roundtrip through encodeChunkFrame, pushPieces and decodeChunkPieces",
    [Arbitrary.make(Envelope.Chunk), fc.array(fc.nat())],
    ([chunk, cuts]) => {
      const [header, data] = Codec.encodeChunkFrame(chunk)
      // Without its crc (a fetch that asked for no checksums) a chunk's frame is shorter.
      assert.isTrue(chunk.crc === undefined ? header.length < Codec.chunkFrameOverhead : true)
      assert.isAtMost(header.length, Codec.chunkFrameOverhead)
      const frame = new Uint8Array(header.length + data.length)
      frame.set(header)
      frame.set(data, header.length)
      const decoder = new Codec.FrameDecoder(maxFrameSize)
      const points = [...new Set(cuts.map((c) => c % (frame.length + 1)))].sort((a, b) => a - b)
      const payloads: Array<Array<Uint8Array>> = []
      let from = 0
      for (const point of [...points, frame.length]) {
        payloads.push(...Either.getOrThrow(decoder.pushPieces(frame.subarray(from, point))))
        from = point
      }
      assert.strictEqual(payloads.length, 1)
      const pieces = payloads[0]!
      assert.isTrue(pieces.every((piece) => piece.buffer === frame.buffer), "a piece was copied")
      const whole = Either.getOrThrow(Codec.decodePayload(frame.subarray(Codec.headerSize)))
      assert.deepStrictEqual(whole, chunk)
      const read = Codec.decodeChunkPieces(pieces)
      if (pieces[0]!.length < header.length - Codec.headerSize) {
        assert.isUndefined(read)
        return
      }
      assert.deepStrictEqual({ ...read!, data: Buffer.concat(read!.data) }, {
        id: chunk.id,
        offset: chunk.offset,
        crc: chunk.crc,
        data: Buffer.from(chunk.data)
      })
    },
    { fastCheck: { numRuns: 300 } }
  )

  it.prop("decodeChunkPieces reads only its own layout", [Arbitrary.make(Envelope.Envelope)], ([envelope]) => {
    const frame = Either.getOrThrow(Codec.encodeFrame(envelope, maxFrameSize))
    assert.isUndefined(Codec.decodeChunkPieces([frame.subarray(Codec.headerSize)]))
  }, { fastCheck: { numRuns: 300 } })

  describe("fuzz: bad input only ever gives MalformedFrame or FrameTooLarge", () => {
    const onlyTypedErrors = (decoder: Codec.FrameDecoder, bytes: Uint8Array) => {
      const frames = decoder.push(bytes)
      if (Either.isLeft(frames)) {
        assert.strictEqual(frames.left._tag, "FrameTooLarge")
        return
      }
      for (const payload of frames.right) {
        const envelope = Codec.decodePayload(payload)
        if (Either.isLeft(envelope)) assert.strictEqual(envelope.left._tag, "MalformedFrame")
      }
    }

    it.prop("random bytes", [fc.uint8Array({ maxLength: 4096 })], ([bytes]) => {
      onlyTypedErrors(new Codec.FrameDecoder(1024), bytes)
    }, { fastCheck: { numRuns: 2000 } })

    const validFrame = Arbitraries.message.map((message) =>
      Either.getOrThrow(Codec.encodeFrame(
        {
          _tag: "ask",
          id: 7,
          from: null,
          to: "Master",
          body: Either.getOrThrow(Codec.encodeMessage(message as Codec.Message))
        },
        maxFrameSize
      ))
    )
    const mutation = fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 8 })
    it.prop("mutated valid frames", [validFrame, mutation, fc.nat()], ([frame, flips, cut]) => {
      const mutated = frame.slice(0, frame.length - (cut % 3 === 0 ? cut % frame.length : 0))
      for (const [at, value] of flips) mutated[at % mutated.length] = value
      const decoder = new Codec.FrameDecoder(maxFrameSize)
      onlyTypedErrors(decoder, mutated)
      // Whatever the mutated payload decoded to, body decoding must fail typed too.
      for (const union of Catalogue.conversations.map((c) => c.union)) {
        const decoded = Codec.decodePayload(mutated.subarray(Codec.headerSize))
        if (Either.isRight(decoded) && decoded.right._tag === "ask") {
          const body = Codec.decodeWith(union, decoded.right.body)
          if (Either.isLeft(body)) assert.strictEqual(body.left._tag, "MalformedFrame")
        }
      }
    }, { fastCheck: { numRuns: 500 } })

    it("a frame over the limit poisons the decoder with FrameTooLarge", () => {
      const decoder = new Codec.FrameDecoder(16)
      const header = new Uint8Array([0, 0, 0, 17])
      const first = decoder.push(header)
      assert.isTrue(Either.isLeft(first) && first.left._tag === "FrameTooLarge" && first.left.size === 17)
      assert.isTrue(Either.isLeft(decoder.push(new Uint8Array([1]))))
    })

    it("the sender refuses a frame over the limit", () => {
      const result = Codec.encodeFrame({ _tag: "reply", id: 1, body: new Uint8Array(100) }, 64)
      assert.isTrue(Either.isLeft(result) && result.left._tag === "FrameTooLarge")
    })
  })

  describe("integers are MessagePack integers both ways", () => {
    // What another language's MessagePack writes for an integer of 2^32 and above: uint64 (0xcf) or int64 (0xd3).
    const int64 = (type: 0xcf | 0xd3, n: bigint) => {
      const bytes = new Uint8Array(9)
      bytes[0] = type
      new DataView(bytes.buffer).setBigUint64(1, BigInt.asUintN(64, n))
      return bytes
    }
    const fixstr = (text: string) => [0xa0 | text.length, ...new TextEncoder().encode(text)]
    // An ask envelope whose id is written as a 64-bit integer, with a body packed as msgpackr packs it.
    const askWithId = (id: Uint8Array, body: unknown) =>
      Uint8Array.from([
        0x85,
        ...fixstr("_tag"),
        ...fixstr("ask"),
        ...fixstr("id"),
        ...id,
        ...fixstr("from"),
        0xc0,
        ...fixstr("to"),
        ...fixstr("Master"),
        ...fixstr("body"),
        ...packr.pack(body)
      ])
    const strict = new Packr({ useRecords: false, moreTypes: false, mapsAsObjects: true })

    it.prop(
      "64-bit integers that are safe integers decode to numbers",
      [
        fc.constantFrom<0xcf | 0xd3>(0xcf, 0xd3),
        fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
        fc.bigInt({
          min: -(2n ** 53n) + 1n,
          max: 2n ** 53n - 1n
        })
      ],
      ([type, id, mem]) => {
        const driverDescription = { ...Schema.encodeSync(Descriptions.DriverDescription)(description), mem }
        const envelope = Either.getOrThrow(
          Codec.decodePayload(askWithId(int64(type, BigInt(id)), { _tag: "RequestSubmitDriver", driverDescription }))
        )
        assert.strictEqual((envelope as { id: number }).id, id)
        const body = (envelope as { body: { driverDescription: { mem: unknown } } }).body
        assert.strictEqual(body.driverDescription.mem, Number(mem))
      }
    )

    it("an integer beyond 2^53 − 1 is refused with a reason that names the field", () => {
      const driverDescription = { ...Schema.encodeSync(Descriptions.DriverDescription)(description), mem: 2n ** 60n }
      const envelope = Either.getOrThrow(
        Codec.decodePayload(askWithId(int64(0xcf, 7n), { _tag: "RequestSubmitDriver", driverDescription }))
      )
      const refused = Codec.decodeWith(SubmissionMessages.SubmissionRequest, (envelope as { body: unknown }).body)
      assert.deepStrictEqual(
        Either.getLeft(refused).pipe(Option.map((error) => error.reason)),
        Option.some(
          "RequestSubmitDriver.driverDescription.mem: 1152921504606846976 is not a safe integer (integers must lie " +
            "within ±(2^53 − 1))"
        )
      )
      const badId = Codec.decodePayload(askWithId(int64(0xcf, 2n ** 63n), null))
      assert.include(Either.getLeft(badId).pipe(Option.getOrThrow).reason, "id must be a non-negative safe integer")
    })

    it.prop("a message's reason is one line naming the field", [Arbitrary.make(SubmissionMessages.SubmissionRequest)], (
      [message]
    ) => {
      const wire = Schema.encodeSync(SubmissionMessages.SubmissionRequest)(message) as Record<string, unknown>
      for (const broken of [{ ...wire, _tag: "NoSuchMessage" }, { ...wire, driverId: 5, driverDescription: 5 }]) {
        const refused = Codec.decodeWith(SubmissionMessages.SubmissionRequest, broken)
        if (Either.isRight(refused)) continue
        const reason = refused.left.reason
        assert.isFalse(reason.includes("\n"), reason)
        assert.isAtMost(reason.length, 301)
        assert.match(reason, /^\w+\.(_tag|driverId|driverDescription): /)
      }
    })

    it("in an endpoint's union of unions, the reason names the field of the message the tag chose", () => {
      const refused = Codec.decodeWith(Endpoints.master.inbound, { _tag: "RequestDriverStatus", driverId: 5 })
      assert.deepStrictEqual(
        Either.getLeft(refused).pipe(Option.map((error) => error.reason)),
        Option.some("RequestDriverStatus.driverId: Expected DriverId, actual 5")
      )
    })

    it.prop("whole numbers beyond 32 bits go out as 64-bit integers, never floats", [
      fc.oneof(fc.integer(), fc.maxSafeInteger(), fc.integer({ min: Number.MIN_SAFE_INTEGER, max: -1 }))
    ], ([n]) => {
      const frame = Either.getOrThrow(
        Codec.encodeFrame({ _tag: "reply", id: 3, body: { sizes: [n], nested: { n } } }, maxFrameSize)
      )
      const payload = frame.subarray(Codec.headerSize)
      // A reader that keeps 64-bit integers as BigInt shows how each was written: a float would come back a number.
      const read = strict.unpack(payload) as { body: { sizes: [unknown]; nested: { n: unknown } } }
      const wide = n > 0xffffffff || n < -0x80000000
      assert.strictEqual(read.body.nested.n, wide ? BigInt(n) : n)
      assert.strictEqual(read.body.sizes[0], wide ? BigInt(n) : n)
      assert.deepStrictEqual(Either.getOrThrow(Codec.decodePayload(payload)), {
        _tag: "reply",
        id: 3,
        body: { sizes: [n], nested: { n } }
      })
    })
  })
})
