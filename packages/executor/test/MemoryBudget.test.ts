import { assert, describe, it } from "@effect/vitest"
import { MemoryBudget } from "@kindling/executor"
import { FastCheck as fc } from "effect"

const mebibyte = 1024 * 1024

describe("MemoryBudget", () => {
  it("the shares fit in what the runtime leaves, and never exceed what the app asked for", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 32, max: 64 * 1024 }),
        fc.integer({ min: 40, max: 400 }),
        fc.integer({ min: 1, max: 64 }),
        fc.integer({ min: 1, max: 1024 }),
        fc.integer({ min: 1, max: 1024 }),
        (memoryMb, baselineMb, cores, spillMb, inFlightMb) => {
          const asked = { spillThreshold: spillMb * mebibyte, maxBytesInFlight: inFlightMb * mebibyte }
          const budget = MemoryBudget.share({
            memory: memoryMb * mebibyte,
            baseline: baselineMb * mebibyte,
            cores,
            ...asked
          })
          const free = Math.max(MemoryBudget.floor, (memoryMb - baselineMb) * mebibyte)
          assert.isAtMost(budget.spillThreshold, asked.spillThreshold)
          assert.isAtMost(budget.maxBytesInFlight, asked.maxBytesInFlight)
          // Every task at its threshold held twice over (a heap's overhead), the fetches and the cache together.
          assert.isAtMost(2 * budget.spillThreshold * cores + budget.maxBytesInFlight + budget.storageMemory, free)
          assert.isAbove(budget.spillThreshold, 0)
          assert.isAbove(budget.maxBytesInFlight, 0)
        }
      )
    )
  })

  it("a large executor keeps the defaults; a small one lowers them", () => {
    const defaults = { spillThreshold: 64 * mebibyte, maxBytesInFlight: 48 * mebibyte }
    const large = MemoryBudget.share({ memory: 1024 * mebibyte, baseline: 130 * mebibyte, cores: 2, ...defaults })
    assert.deepStrictEqual([large.spillThreshold, large.maxBytesInFlight], [64 * mebibyte, 48 * mebibyte])
    const small = MemoryBudget.share({ memory: 256 * mebibyte, baseline: 130 * mebibyte, cores: 1, ...defaults })
    assert.strictEqual(small.spillThreshold, Math.floor((126 * mebibyte) / 4))
    assert.strictEqual(small.maxBytesInFlight, Math.floor((126 * mebibyte) / 5))
  })
})
