import { assert, describe, it } from "@effect/vitest"
import { Conf, Registry } from "@kindling/conf"
import { ProtocolConf } from "@kindling/rpc"
import { Either } from "effect"

const options = (values: Readonly<Record<string, string>>) =>
  ProtocolConf.rpcOptions(
    Either.getOrThrow(Conf.resolve(Registry.make(ProtocolConf.group), [{ name: "test", values }]))
  )

describe("ProtocolConf.rpcOptions", () => {
  it("the frame limit, the timeouts and the connection limits", () => {
    assert.deepStrictEqual(
      options({
        "kindling.rpc.message.maxSize": "2",
        "kindling.rpc.askTimeout": "5s",
        "kindling.rpc.lookupTimeout": "1500ms",
        "kindling.network.timeout": "30s",
        "kindling.rpc.maxConnections": "100",
        "kindling.rpc.maxHandshakes": "8",
        "kindling.rpc.maxHandshakesPerAddress": "3",
        "kindling.rpc.handshakeTimeout": "2s"
      }),
      Either.right({
        maxFrameSize: 2 * 1024 * 1024,
        askTimeout: 5_000,
        lookupTimeout: 1_500,
        idleTimeout: 30_000,
        dataPlane: { idleTimeout: 30_000 },
        maxConnections: 100,
        maxHandshakes: 8,
        maxHandshakesPerAddress: 3,
        handshakeTimeout: 2_000
      })
    )
  })

  it("kindling.network.timeout bounds the asks, idle connections and stalled data connections alike", () => {
    const rpc = Either.getOrThrow(options({ "kindling.network.timeout": "30s" }))
    assert.deepStrictEqual([rpc.askTimeout, rpc.idleTimeout, rpc.dataPlane?.idleTimeout], [30_000, 30_000, 30_000])
    // The ask timeout has a key of its own, which the data plane does not follow.
    const ask = Either.getOrThrow(options({ "kindling.rpc.askTimeout": "5s" }))
    assert.deepStrictEqual([ask.askTimeout, ask.dataPlane?.idleTimeout], [5_000, 120_000])
  })

  it("the secret with authentication; refused without it, and encryption without authentication", () => {
    const secret = options({ "kindling.authenticate": "true", "kindling.authenticate.secret": "s" })
    assert.deepStrictEqual(Either.map(secret, (rpc) => rpc.secret), Either.right("s"))
    const noSecret = options({ "kindling.authenticate": "true" })
    assert.include(
      Either.isLeft(noSecret) ? noSecret.left.message : "",
      "kindling.authenticate.secret is not set, but kindling.authenticate is true"
    )
    const cleartextKeys = options({ "kindling.network.crypto.enabled": "true" })
    assert.isTrue(Either.isLeft(cleartextKeys) && cleartextKeys.left.message.includes("kindling.authenticate=true"))
  })
})
