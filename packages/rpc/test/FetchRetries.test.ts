import { assert, describe, it } from "@effect/vitest"
import { FetchRetries } from "@kindling/rpc"
import { FastCheck as fc } from "effect"

const settings = { maxRetries: 3, retryWaitMillis: 1000 }

describe("FetchRetries", () => {
  it("waits 1, 2 and 4 s after attempts that got nowhere, and gives up after the fourth", () => {
    let failures = 0
    const waits: Array<number> = []
    for (;;) {
      const decision = FetchRetries.afterBroken(settings, failures, false, false)
      failures = decision.failures
      if (decision._tag === "GiveUp") break
      waits.push(decision.waitMillis)
    }
    assert.deepStrictEqual([waits, failures], [[1000, 2000, 4000], 4])
  })

  it("a failed handshake fails the same way every time: the fetch gives up at once", () => {
    assert.deepStrictEqual(FetchRetries.afterBroken(settings, 0, true, true), { _tag: "GiveUp", failures: 1 })
  })

  it(
    "model: over any run of broken attempts, the fetch gives up exactly when a final error comes or more than " +
      "maxRetries attempts in a row got nowhere; each wait is the first doubled per failure in a row",
    () => {
      const attempt = fc.record({ progressed: fc.boolean(), final: fc.integer({ min: 0, max: 9 }).map((n) => n === 0) })
      fc.assert(
        fc.property(
          fc.nat(6),
          fc.integer({ min: 1, max: 5000 }),
          fc.array(attempt, { maxLength: 30 }),
          (maxRetries, retryWaitMillis, attempts) => {
            const settings = { maxRetries, retryWaitMillis }
            let failures = 0
            let inARow = 0 // the reference: attempts in a row since the last that got further, that one included
            for (const { final, progressed } of attempts) {
              inARow = progressed ? 1 : inARow + 1
              const decision = FetchRetries.afterBroken(settings, failures, progressed, final)
              failures = decision.failures
              assert.strictEqual(failures, inARow)
              if (final || inARow > maxRetries) {
                assert.strictEqual(decision._tag, "GiveUp")
                return
              }
              assert.deepStrictEqual(decision, {
                _tag: "Retry",
                failures: inARow,
                waitMillis: retryWaitMillis * 2 ** (inARow - 1)
              })
              // Bounded: never more than maxRetries doublings.
              if (decision._tag === "Retry") {
                assert.isAtMost(decision.waitMillis, retryWaitMillis * 2 ** Math.max(0, maxRetries - 1))
              }
            }
          }
        ),
        { numRuns: 500 }
      )
    }
  )
})
