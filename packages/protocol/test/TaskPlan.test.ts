import { assert, describe, it } from "@effect/vitest"
import { Records, TaskPlan } from "@kindling/protocol"
import { Arbitrary, Context, Effect, Either, FastCheck as fc, Option, Schema } from "effect"
import { EventEmitter } from "node:events"
import * as Fs from "node:fs"
import * as Net from "node:net"

// The two things `Records` documents it does not carry: -0 (it arrives as 0, as through JSON) and an own key
// named `__proto__` (it arrives as `__proto_`, which is what keeps a decoded record from setting its prototype).
// fast-check's dictionaries also make that key by assignment, which sets the record's prototype to another value
// instead — a prototype without its own `constructor` — and no encoding sees such a key.
const prototypeIsAValue = (v: object): boolean => {
  const prototype = Object.getPrototypeOf(v)
  return prototype !== null && !Object.hasOwn(prototype, "constructor")
}
const unsupported = (v: unknown): boolean =>
  Object.is(v, -0) ||
  (typeof v === "object" && v !== null &&
    (Object.hasOwn(v, "__proto__") || prototypeIsAValue(v) || Object.values(v).some(unsupported)))
// Values the app puts in plans: records of JSON-like shapes (MessagePack's own types).
const value = fc.jsonValue({ maxDepth: 2 }).filter((v) => !unsupported(v))

describe("TaskPlan", () => {
  it("every task, and every outcome, roundtrips through the records encoding and the schema", () => {
    const tasks = Arbitrary.make(TaskPlan.Task)
    const outcomes = Arbitrary.make(TaskPlan.TaskOutcome)
    const roundtrips = fc.property(tasks, outcomes, value, (task, outcome, record) => {
      fc.pre(!unsupported(task))
      const encodedTask = Schema.encodeSync(TaskPlan.Task)(task)
      fc.pre(!unsupported(encodedTask))
      const back = Schema.decodeUnknownSync(TaskPlan.Task)(Records.decode(Records.encode(encodedTask)))
      assert.deepStrictEqual(back, task)
      fc.pre(!unsupported(outcome))
      const encodedOutcome = Schema.encodeSync(TaskPlan.TaskOutcome)(outcome)
      fc.pre(!unsupported(encodedOutcome))
      assert.deepStrictEqual(
        Schema.decodeUnknownSync(TaskPlan.TaskOutcome)(Records.decode(Records.encode(encodedOutcome))),
        outcome
      )
      assert.deepStrictEqual(Records.decode(Records.encode(record)), record)
    })
    fc.assert(roundtrips, { numRuns: 200 })
    // The seed that once generated a record whose prototype was set by a `__proto__` key.
    fc.assert(roundtrips, { numRuns: 10, seed: 817782471 })
  })

  it("records keep what JSON would lose: maps, sets, dates, big integers, undefined; -0 becomes 0", () => {
    assert.deepStrictEqual(Records.decode(Records.encode(JSON.parse(`{"__proto__":1,"a":2}`))), { __proto_: 1, a: 2 })
    const record = { m: new Map([[1, "a"]]), s: new Set([2]), d: new Date(0), b: 2n ** 70n, u: undefined }
    assert.deepStrictEqual(Records.decode(Records.encode(record)), record)
    assert.isTrue(Object.is(Records.decode(Records.encode(-0)), 0))
  })

  it("an instance of a registered class arrives as one, fields and methods; others are refused, by name", () => {
    class Point {
      constructor(readonly x: number, readonly y: number, readonly label?: Point) {}
      norm() {
        return Math.hypot(this.x, this.y)
      }
    }
    class Unregistered {
      readonly n = 1
    }
    Records.registerClass(Point, "test.Point")
    fc.assert(
      fc.property(fc.integer(), fc.integer(), fc.boolean(), (x, y, nested) => {
        const point = new Point(x, y, nested ? new Point(y, x) : undefined)
        const back = Records.decode(Records.encode({ key: [point, new Map([[1, point]])] })) as {
          key: [Point, Map<number, Point>]
        }
        const [arrived, map] = back.key
        assert.instanceOf(arrived, Point)
        assert.strictEqual(arrived.norm(), point.norm())
        assert.deepStrictEqual(arrived, point)
        assert.instanceOf(map.get(1), Point)
        if (nested) assert.instanceOf(arrived.label, Point)
      })
    )
    assert.throws(() => Records.encode([1, { inside: new Unregistered() }]), /class Unregistered is not registered/)
    assert.throws(() => Records.encode({ parse: (s: string) => s }), /A value is a function/)
    // Another class under a name already taken is refused; the same one again is not.
    assert.throws(() => Records.registerClass(Unregistered, "test.Point"), /already registered as test\.Point/)
    Records.registerClass(Point, "test.Point")
  })

  it("an Effect is refused as one, a forgotten `yield*`; Option and Either are data, not Effects", () => {
    assert.throws(() => Records.encode([1, Effect.succeed(2)]), /A value is an Effect .*did you forget `yield\*`\?/)
    assert.throws(() => Records.encode({ total: Effect.gen(function*() {}) }), /is an Effect \(EffectPrimitive\)/)
    // A Context tag is one too: what was meant is the service, `yield* Service`.
    class Service extends Context.Tag("Service")<Service, number>() {}
    assert.deepStrictEqual(Records.untravelled(Service), { _tag: "Effect", name: "Service" })
    for (const data of [Option.some(1), Either.right(1)]) {
      assert.isTrue(Records.untravelled(data)?._tag !== "Effect")
      assert.isFalse(Records.isEffect(data))
    }
  })

  it("a handle on something of this process cannot travel, whatever its class; a registered class travels", () => {
    const socket = new Net.Socket()
    const timer = setTimeout(() => undefined, 1)
    const stream = Fs.createReadStream(import.meta.filename)
    const { port1, port2 } = new MessageChannel()
    const handles = [socket, timer, stream, port1, new AbortController().signal, Promise.resolve(1)]
    try {
      for (const handle of handles) {
        const name = handle.constructor.name
        assert.deepStrictEqual(Records.untravelled(handle), { _tag: "Handle", name })
        assert.throws(() => Records.encode({ handle }), new RegExp(`cannot travel: it is a ${name}, a handle`))
      }
    } finally {
      socket.destroy()
      clearTimeout(timer)
      stream.destroy()
      port1.close()
      port2.close()
    }
    // An app's own emitter, registered, is the app's to send.
    class Emitter extends EventEmitter {
      readonly n = 1
    }
    Records.registerClass(Emitter, "test.Emitter")
    assert.instanceOf(Records.decode(Records.encode(new Emitter())), Emitter)
  })

  it("a value of a class registered where it was sent but not where it arrives is a clear error", () => {
    class Sent {
      readonly v = 1
    }
    Records.registerClass(Sent, "test.Sent")
    const bytes = Records.encode(new Sent())
    // What a thread that has not registered it sees: the name, and nothing else of the class.
    const registry = (globalThis as any)[Symbol.for("@kindling/registeredClasses")]
    registry.byName.delete("test.Sent")
    assert.throws(() => Records.decode(bytes), /class test\.Sent arrived, but no class is registered/)
  })
})
