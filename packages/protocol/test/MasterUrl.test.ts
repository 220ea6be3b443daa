import { assert, describe, it } from "@effect/vitest"
import { MasterUrl, RpcAddress } from "@kindling/protocol"
import { Either } from "effect"

describe("MasterUrl", () => {
  it("reads one or several masters, in order", () => {
    assert.deepStrictEqual(
      MasterUrl.parse("kindling://h1:7077,h2:7078"),
      Either.right([RpcAddress.make("h1", 7077), RpcAddress.make("h2", 7078)])
    )
    assert.deepStrictEqual(MasterUrl.parse("kindling://localhost"), Either.right([RpcAddress.make("localhost", 7077)]))
    assert.deepStrictEqual(MasterUrl.parse("kindling://[::1]:7000"), Either.right([RpcAddress.make("::1", 7000)]))
  })

  it("formats what it reads", () => {
    const url = "kindling://h1:7077,[::1]:7000"
    assert.strictEqual(MasterUrl.format(Either.getOrThrow(MasterUrl.parse(url))), url)
  })

  it("rejects what is not a master URL, saying why", () => {
    for (
      const [url, reason] of [
        ["spark://h:7077", "must start with kindling://"],
        ["kindling://", "no master"],
        ["kindling://h:0", "port 0"],
        ["kindling://h:99999", "port 99999"],
        ["kindling://h:x", "cannot read"],
        ["kindling://h1:7077,", "cannot read"]
      ] as const
    ) {
      const result = MasterUrl.parse(url)
      assert.isTrue(Either.isLeft(result), url)
      if (Either.isLeft(result)) assert.include(result.left.message, reason)
    }
  })
})
