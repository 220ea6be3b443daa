import { assert, describe, it } from "@effect/vitest"
import { Catalogue, Envelope, Errors } from "@kindling/protocol"
import { Arbitrary, FastCheck as fc, ParseResult, Schema } from "effect"
import { Packr } from "msgpackr"
import * as Compiled from "../src/internal/compiled.js"

// The compiled codec is a fast path: on every input it either gives exactly what Effect's parser gives, or
// declines (and the codec falls back to Effect). On valid input it must never decline.
const packr = new Packr({ useRecords: false, moreTypes: false, mapsAsObjects: true })
const bytes = (value: unknown) => packr.pack(value)

const sameValue = (schema: Schema.Schema<any, any, never>, ours: unknown, theirs: unknown) => {
  assert.strictEqual(Object.getPrototypeOf(ours), Object.getPrototypeOf(theirs))
  assert.deepStrictEqual(Reflect.ownKeys(ours as object), Reflect.ownKeys(theirs as object))
  assert.deepStrictEqual(bytes(Schema.encodeSync(schema)(ours)), bytes(Schema.encodeSync(schema)(theirs)))
}

// Replaces the value at a random path of a plain value, or deletes it.
const mutate = (value: unknown, path: ReadonlyArray<number>, replacement: unknown, remove: boolean): unknown => {
  if (path.length === 0 || typeof value !== "object" || value === null || value instanceof Uint8Array) {
    return replacement
  }
  const keys = Object.keys(value)
  if (keys.length === 0) return replacement
  const key = keys[path[0]! % keys.length]!
  const copy: any = Array.isArray(value) ? [...value] : { ...value }
  if (remove && path.length === 1) delete copy[key]
  else copy[key] = mutate(copy[key], path.slice(1), replacement, remove)
  return copy
}

const schemas: ReadonlyArray<readonly [string, Schema.Schema<any, any, never>]> = [
  ...Catalogue.conversations.map((c) => [c.title, c.union] as const),
  ...Catalogue.replies.map((union, i) => [`replies ${i + 1}`, union] as const),
  ["errors", Schema.Union(...Object.values(Errors.all))],
  ["envelopes", Envelope.Envelope]
]

describe("the compiled codec agrees with Effect's parser", () => {
  for (const [title, schema] of schemas) {
    const compiled = Compiled.compile(schema)
    const encode = ParseResult.encodeSync(schema)
    const decode = ParseResult.decodeUnknownEither(schema)

    it.prop(
      `${title}: valid values take the fast path both ways, with the same result`,
      [Arbitrary.make(schema)],
      ([value]) => {
        const encoded = compiled.encode(value)
        assert.notStrictEqual(encoded, Compiled.Fail)
        assert.deepStrictEqual(bytes(encoded), bytes(encode(value)))
        const wire = packr.unpack(bytes(encoded))
        const decoded = compiled.decode(wire)
        assert.notStrictEqual(decoded, Compiled.Fail)
        const theirs = decode(wire)
        assert.isTrue(theirs._tag === "Right")
        if (theirs._tag === "Right") sameValue(schema, decoded, theirs.right)
      },
      { fastCheck: { numRuns: 100 } }
    )

    it.prop(
      `${title}: whatever the fast path accepts from mutated input, Effect accepts the same way`,
      [Arbitrary.make(schema), fc.array(fc.nat(), { maxLength: 4 }), fc.anything(), fc.boolean()],
      ([value, path, replacement, remove]) => {
        const wire = packr.unpack(bytes(encode(value)))
        const mutated = packr.unpack(bytes(mutate(wire, path, replacement, remove)))
        const ours = compiled.decode(mutated)
        if (ours === Compiled.Fail) return
        const theirs = decode(mutated)
        assert.isTrue(theirs._tag === "Right", "the fast path accepted what Effect rejects")
        if (theirs._tag === "Right") sameValue(schema, ours, theirs.right)
      },
      { fastCheck: { numRuns: 200 } }
    )
  }
})
