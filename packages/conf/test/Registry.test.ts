import { assert, describe, it } from "@effect/vitest"
import { Key, Registry, ValueType } from "@kindling/conf"
import { registry, resources, timing } from "./fixtures/keys.js"

const flag = (name: string) => Key.make(name, ValueType.boolean, { default: "false", description: "" })

const group = (keys: Readonly<Record<string, Key.Any>>) => Registry.group({ title: "T", description: "", keys })

describe("Registry", () => {
  it("holds the groups' keys in order, each by name", () => {
    assert.deepStrictEqual(registry.keys, [...Object.values(timing), ...Object.values(resources)])
    assert.deepStrictEqual(registry.groups.map((g) => g.title), ["Timing", "Resources"])
    assert.strictEqual(registry.byName.get("kindling.example.spreadOut"), resources.spreadOut)
  })

  it("refuses names that differ only in case, as their environment variables would be one", () => {
    assert.throws(
      () => Registry.make(group({ a: flag("kindling.x.spreadOut") }), group({ b: flag("kindling.x.spreadout") })),
      "kindling.x.spreadout and kindling.x.spreadOut differ only in case"
    )
  })

  it("refuses a name that is not kindling. and dotted letters and digits", () => {
    for (const name of ["spark.x", "kindling.x_y", "kindling..x", "kindling"]) {
      assert.throws(() => Registry.make(group({ a: flag(name) })), `${name} is not kindling.`)
    }
  })

  it("refuses a key named as a credential that is not declared secret, whose value would be listed", () => {
    const text = (name: string, secret: boolean) =>
      Key.make(name, ValueType.string, { description: "", ...(secret ? { secret: true } : {}) })
    for (
      const name of [
        "kindling.s3.secret.key",
        "kindling.x.password",
        "kindling.x.sessionToken",
        "kindling.x.access.key"
      ]
    ) {
      assert.throws(() => Registry.make(group({ a: text(name, false) })), `${name} is named as a credential`)
      assert.strictEqual(Registry.make(group({ a: text(name, true) })).keys.length, 1)
    }
  })

  it("refuses a default its own key refuses", () => {
    const bad = Key.make("kindling.x.cores", ValueType.int({ min: 1 }), { default: "0", description: "" })
    assert.throws(() => Registry.make(group({ bad })), "kindling.x.cores's default: 0 is less than 1")
  })

  it("refuses a fallback to a key that is not registered", () => {
    assert.throws(
      () => Registry.make(group(resources)),
      "kindling.example.recoveryTimeout falls back to kindling.example.timeout, which is not registered"
    )
  })
})
