import { assert, describe, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import * as Keys from "../src/Keys.js"

// Keys of every kind, with the values that `===` gets wrong for keys (NaN, -0) and arrays that differ in kind alone.
const primitive: fc.Arbitrary<Keys.Key> = fc.oneof(
  fc.constantFrom<Keys.Key>(0, -0, NaN, 1, "1", "", true, false, 1n, 1024, 2048, 1 << 20),
  fc.integer({ min: -50, max: 50 }),
  fc.integer({ min: 0, max: 40 }).map((i) => i * 4096),
  fc.double(),
  fc.string({ maxLength: 3 }),
  fc.bigInt({ min: -5n, max: 5n })
)
const key: fc.Arbitrary<Keys.Key> = fc.oneof(
  { weight: 3, arbitrary: primitive },
  { weight: 1, arbitrary: fc.array(primitive, { maxLength: 3 }) },
  { weight: 1, arbitrary: fc.array(fc.array(primitive, { maxLength: 2 }), { maxLength: 2 }) }
)

describe("KeyMap", () => {
  it("holds one entry per key as Keys.compare tells keys apart, in the order keys first came", () => {
    fc.assert(
      fc.property(fc.array(key, { maxLength: 300 }), (keys) => {
        const map = new Keys.KeyMap<number>()
        // The model: a list of distinct keys, searched one by one.
        const model: Array<[Keys.Key, number]> = []
        keys.forEach((k, i) => {
          const entry = model.find(([known]) => Keys.compare(known, k) === 0)
          if (entry === undefined) model.push([k, i])
          else entry[1] += i
          const at = map.locate(k)
          map.values[at < 0 ? ~at : at] = at < 0 ? i : map.values[at]! + i
        })
        assert.strictEqual(map.size, model.length)
        assert.deepStrictEqual([...map.entries()].map(([, v]) => v), model.map(([, v]) => v))
        for (const [k, v] of model) assert.strictEqual(map.get(k), v)
      })
    )
  })

  it("finds each of many keys again after growing, and nothing after clear", () => {
    const map = new Keys.KeyMap<string>()
    const keys = Array.from(
      { length: 5000 },
      (_, i): Keys.Key => (i % 3 === 0 ? i * 1024 : i % 3 === 1 ? `w${i}` : [i, "x"])
    )
    for (const k of keys) map.set(k, JSON.stringify(k))
    assert.strictEqual(map.size, keys.length)
    for (const k of keys) assert.strictEqual(map.get(Array.isArray(k) ? [...k] : k), JSON.stringify(k))
    assert.strictEqual(map.get("absent"), undefined)
    map.clear()
    assert.strictEqual(map.size, 0)
    assert.strictEqual(map.get(keys[1]!), undefined)
    map.set(-0, "zero")
    assert.strictEqual(map.get(0), "zero")
    assert.strictEqual(map.locate(0), 0)
  })
})
