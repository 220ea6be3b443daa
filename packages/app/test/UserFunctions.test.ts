// What a transformation refuses to send to executors, when it is declared: each says where the value is and what it
// is, with what to do about it — never "register the class" for what no registration makes travel.
import { assert, describe, it } from "@effect/vitest"
import { UserFunctions } from "@kindling/app"
import { Context, Effect } from "effect"
import * as Net from "node:net"

const refusal = (env: unknown): string => {
  try {
    UserFunctions.reference((x: number) => x, env, "map", {})
  } catch (error) {
    return (error as Error).message
  }
  return "accepted"
}

describe("values a transformation needs", () => {
  it("an Effect, where its result was meant, is a forgotten `yield*`, named by its place", () => {
    const message = refusal({ limits: [1, Effect.succeed(2)] })
    assert.match(message, /^The function given to map needs `env\.limits\[1\]`, which is an Effect \(\w+\), not its/)
    assert.include(message, "did you forget `yield*`")
    assert.notInclude(message, "register")
  })

  it("a Context tag is an Effect too: the service it stands for was meant", () => {
    class Prices extends Context.Tag("Prices")<Prices, Map<string, number>>() {}
    assert.match(
      refusal(Prices),
      /needs `env`, which is an Effect \(Prices\), not its result: did you forget `yield\*`/
    )
  })

  it("a socket cannot travel, and is not a class to register", () => {
    const socket = new Net.Socket()
    try {
      const message = refusal({ out: socket })
      assert.match(message, /needs `env\.out`, which cannot travel: it is a Socket, a handle on something open/)
      assert.notInclude(message, "registerClass")
    } finally {
      socket.destroy()
    }
  })
})
