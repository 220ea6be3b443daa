import { assert, describe, it } from "@effect/vitest"
import { Conf, Registry } from "@kindling/conf"
import { ProtocolConf } from "@kindling/rpc"
import { Either } from "effect"

const options = (values: Readonly<Record<string, string>>) =>
  ProtocolConf.rpcOptions(
    Either.getOrThrow(Conf.resolve(Registry.make(ProtocolConf.group), [{ name: "test", values }]))
  )

describe("ProtocolConf.rpcOptions", () => {
  it("kindling.network.timeout bounds the asks, idle connections and stalled data connections alike", () => {
    const rpc = Either.getOrThrow(options({ "kindling.network.timeout": "30s" }))
    assert.deepStrictEqual([rpc.askTimeout, rpc.idleTimeout, rpc.dataPlane?.idleTimeout], [30_000, 30_000, 30_000])
    // The ask timeout has a key of its own, which the data plane does not follow.
    const ask = Either.getOrThrow(options({ "kindling.rpc.askTimeout": "5s" }))
    assert.deepStrictEqual([ask.askTimeout, ask.dataPlane?.idleTimeout], [5_000, 120_000])
  })

  it("refuses authentication without its secret, and encryption without authentication", () => {
    const noSecret = options({ "kindling.authenticate": "true" })
    assert.isTrue(Either.isLeft(noSecret) && noSecret.left.message.includes("kindling.authenticate.secret"))
    const cleartextKeys = options({ "kindling.network.crypto.enabled": "true" })
    assert.isTrue(Either.isLeft(cleartextKeys) && cleartextKeys.left.message.includes("kindling.authenticate=true"))
  })
})
