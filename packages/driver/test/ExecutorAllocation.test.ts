// Dynamic allocation's policy against Spark's rules: a scripted backlog ramps the target 1, 2, 4, 8 and idle
// executors go back to the minimum; and a model of a cluster (tasks arriving and finishing, executors granted after
// a delay, blocks cached, shuffles written, time passing) with the policy's invariants checked after every tick.
import { assert, describe, it } from "@effect/vitest"
import { ExecutorAllocation } from "@kindling/driver"
import { FastCheck as fc } from "effect"

const config: ExecutorAllocation.Config = {
  minExecutors: 1,
  maxExecutors: 10,
  initialExecutors: 1,
  tasksPerExecutor: 2,
  allocationRatio: 1,
  backlogTimeoutMillis: 1000,
  sustainedBacklogTimeoutMillis: 1000,
  idleTimeoutMillis: 60_000,
  cachedIdleTimeoutMillis: Infinity,
  shuffleTracking: true,
  shuffleTrackingTimeoutMillis: Infinity
}

const busy = (id: string, runningTasks: number): ExecutorAllocation.ExecutorLoad => ({
  id,
  runningTasks,
  idleSince: undefined,
  holdsCachedBlocks: false,
  holdsShuffleData: false
})

const idle = (id: string, since: number, holds: Partial<ExecutorAllocation.ExecutorLoad> = {}) => ({
  ...busy(id, 0),
  idleSince: since,
  ...holds
})

describe("ExecutorAllocation", () => {
  it("ramps the target 1, 2, 4, 8 while a backlog lasts, within what the tasks need", () => {
    let state = ExecutorAllocation.initial(config)
    const requests: Array<number | undefined> = []
    // 40 tasks waiting from t = 0 (20 executors' worth, capped at 10); one executor up.
    const load = (t: number): ExecutorAllocation.Load => ({
      pendingTasks: 40,
      runningTasks: 2,
      executors: [busy("1", 2)],
      pendingRemoval: new Set(),
      stageSubmitted: t >= 0
    })
    for (const t of [0, 500, 1000, 1500, 2000, 3000, 4000, 5000]) {
      const [next, decision] = ExecutorAllocation.tick(config, state, load(t), t)
      state = next
      requests.push(decision.requestTotal)
      assert.deepStrictEqual(decision.remove, [])
    }
    // Nothing before the backlog timeout; then +1, +2, +4, and the cap of 10.
    assert.deepStrictEqual(requests, [undefined, undefined, 2, undefined, 4, 8, 10, undefined])
  })

  it("drops the target to what the tasks need, and gives back executors idle past their timeout", () => {
    const grown = { ...ExecutorAllocation.initial(config), target: 4, requested: 4, initializing: false }
    const executors = [
      idle("1", 0),
      idle("2", 0, { holdsCachedBlocks: true }),
      idle("3", 0, { holdsShuffleData: true }),
      idle("4", 30_000)
    ]
    const load = {
      pendingTasks: 0,
      runningTasks: 0,
      executors,
      pendingRemoval: new Set<string>(),
      stageSubmitted: true
    }
    const [lowered, first] = ExecutorAllocation.tick(config, grown, load, 10_000)
    assert.strictEqual(first.requestTotal, 1)
    assert.deepStrictEqual(first.remove, [])
    // At 60 s only the plain executor idle since 0 has timed out; the cached one and the shuffle holder never do.
    const [, second] = ExecutorAllocation.tick(config, lowered, load, 60_000)
    assert.deepStrictEqual(second.remove, ["1"])
    // At 90 s the fourth too — but not below the minimum of one: "2" and "3" stay.
    const [, third] = ExecutorAllocation.tick(config, lowered, { ...load, pendingRemoval: new Set(["1"]) }, 90_000)
    assert.deepStrictEqual(third.remove, ["4"])
  })

  it("keeps its initial executors until the first stage, unless one idles out", () => {
    const withInitial = { ...config, initialExecutors: 3 }
    const start = ExecutorAllocation.initial(withInitial)
    assert.strictEqual(start.target, 3)
    const executors = [idle("1", 0), idle("2", 0), idle("3", 0)]
    const quiet = {
      pendingTasks: 0,
      runningTasks: 0,
      executors,
      pendingRemoval: new Set<string>(),
      stageSubmitted: false
    }
    const [waiting, before] = ExecutorAllocation.tick(withInitial, start, quiet, 30_000)
    assert.deepStrictEqual(before, { requestTotal: undefined, remove: [] })
    const [, after] = ExecutorAllocation.tick(withInitial, waiting, quiet, 60_000)
    assert.strictEqual(after.requestTotal, 1)
    assert.deepStrictEqual(after.remove, ["1", "2"])
  })
})

// ---- the model ------------------------------------------------------------------------------------------------

interface ModelExecutor {
  id: string
  running: number
  idleSince: number | undefined
  cached: boolean
  shuffle: boolean
}

type Event =
  | { readonly _tag: "Advance"; readonly millis: number }
  | { readonly _tag: "Submit"; readonly tasks: number }
  | { readonly _tag: "Start" }
  | { readonly _tag: "Finish"; readonly executor: number }
  | { readonly _tag: "Cache"; readonly executor: number }
  | { readonly _tag: "Unpersist" }
  | { readonly _tag: "Grant" }

const event: fc.Arbitrary<Event> = fc.oneof(
  fc.record({ _tag: fc.constant("Advance" as const), millis: fc.integer({ min: 1, max: 40_000 }) }),
  fc.record({ _tag: fc.constant("Submit" as const), tasks: fc.integer({ min: 1, max: 50 }) }),
  fc.record({ _tag: fc.constant("Start" as const) }),
  fc.record({ _tag: fc.constant("Finish" as const), executor: fc.nat(20) }),
  fc.record({ _tag: fc.constant("Cache" as const), executor: fc.nat(20) }),
  fc.record({ _tag: fc.constant("Unpersist" as const) }),
  fc.record({ _tag: fc.constant("Grant" as const) })
)

const configs: fc.Arbitrary<ExecutorAllocation.Config> = fc.record({
  minExecutors: fc.integer({ min: 0, max: 3 }),
  maxExecutors: fc.integer({ min: 3, max: 12 }),
  initialExecutors: fc.integer({ min: 0, max: 5 }),
  tasksPerExecutor: fc.integer({ min: 1, max: 4 }),
  allocationRatio: fc.constantFrom(1, 0.5),
  backlogTimeoutMillis: fc.constantFrom(1000, 5000),
  sustainedBacklogTimeoutMillis: fc.constantFrom(1000, 3000),
  idleTimeoutMillis: fc.constantFrom(10_000, 60_000),
  cachedIdleTimeoutMillis: fc.constantFrom(Infinity, 120_000),
  shuffleTracking: fc.boolean(),
  shuffleTrackingTimeoutMillis: fc.constantFrom(Infinity, 90_000)
})

describe("ExecutorAllocation against a model cluster", () => {
  it("needs (pending + running) × ratio ÷ tasks per executor, rounded up (Spark's maxNumExecutorsNeeded)", () => {
    const load = {
      pendingTasks: 5,
      runningTasks: 3,
      executors: [],
      pendingRemoval: new Set<string>(),
      stageSubmitted: true
    }
    assert.strictEqual(ExecutorAllocation.maxNeeded(config, load), 4)
    assert.strictEqual(ExecutorAllocation.maxNeeded({ ...config, allocationRatio: 0.5 }, load), 2)
    assert.strictEqual(ExecutorAllocation.maxNeeded({ ...config, tasksPerExecutor: 3 }, load), 3)
    assert.strictEqual(
      ExecutorAllocation.maxNeeded({ ...config, tasksPerExecutor: 3 }, { ...load, runningTasks: 0 }),
      2
    )
  })

  it("an idle executor times out after the idle timeout, or the cached or shuffle one (the shorter) if it holds data", () => {
    const timeouts = {
      ...config,
      idleTimeoutMillis: 60,
      cachedIdleTimeoutMillis: 500,
      shuffleTrackingTimeoutMillis: 300
    }
    const at = (executor: ExecutorAllocation.ExecutorLoad, c = timeouts) => ExecutorAllocation.timesOutAt(c, executor)
    assert.strictEqual(at(busy("1", 1)), Infinity)
    assert.strictEqual(at(idle("1", 1000)), 1060)
    assert.strictEqual(at(idle("1", 1000, { holdsCachedBlocks: true })), 1500)
    assert.strictEqual(at(idle("1", 1000, { holdsShuffleData: true })), 1300)
    assert.strictEqual(at(idle("1", 1000, { holdsCachedBlocks: true, holdsShuffleData: true })), 1300)
    assert.strictEqual(
      at(idle("1", 1000, { holdsCachedBlocks: true, holdsShuffleData: true }), {
        ...timeouts,
        shuffleTrackingTimeoutMillis: 900
      }),
      1500
    )
    // Without shuffle tracking, map outputs do not keep an executor.
    assert.strictEqual(at(idle("1", 1000, { holdsShuffleData: true }), { ...timeouts, shuffleTracking: false }), 1060)
    assert.strictEqual(
      at(idle("1", 1000, { holdsCachedBlocks: true, holdsShuffleData: true }), { ...timeouts, shuffleTracking: false }),
      1500
    )
  })

  it("a ramp step capped by what the tasks need starts the next at 1; at the maximum the target stays", () => {
    const started: ExecutorAllocation.State = { target: 1, toAdd: 4, addAt: 0, initializing: false, requested: 1 }
    const load = (pendingTasks: number, executors = 1) => ({
      pendingTasks,
      runningTasks: 0,
      executors: Array.from({ length: executors }, (_, i) => busy(`${i}`, 0)),
      pendingRemoval: new Set<string>(),
      stageSubmitted: true
    })
    // 6 tasks need 3 executors: the step of 4 is cut to 2, so the next starts again at 1.
    const [capped, asked] = ExecutorAllocation.tick(config, started, load(6), 0)
    assert.deepInclude(capped, { target: 3, toAdd: 1, addAt: 1000, requested: 3 })
    assert.strictEqual(asked.requestTotal, 3)
    // A step taken whole doubles the next; the target grows from the executors there are, when more.
    const [whole] = ExecutorAllocation.tick(config, { ...started, toAdd: 2 }, load(40), 0)
    assert.deepInclude(whole, { target: 3, toAdd: 4 })
    const [fromExisting] = ExecutorAllocation.tick(config, { ...started, toAdd: 2 }, load(40, 4), 0)
    assert.deepInclude(fromExisting, { target: 6, toAdd: 1 })
    // Nothing to add: the step is not taken, and the next starts at 1.
    const [nothing, none] = ExecutorAllocation.tick(config, { ...started, target: 3, requested: 3 }, load(6), 0)
    assert.deepInclude(nothing, { target: 3, toAdd: 1, addAt: 1000 })
    assert.isUndefined(none.requestTotal)
    const [atMax] = ExecutorAllocation.tick(config, { ...started, target: 10, requested: 10 }, load(100), 0)
    assert.deepInclude(atMax, { target: 10, toAdd: 1 })
    // Before its time, the backlog's step waits; once no task waits, the clock stops and the step is 1 again.
    const [waiting] = ExecutorAllocation.tick(config, { ...started, addAt: 500 }, load(40), 499)
    assert.deepInclude(waiting, { target: 1, toAdd: 4, addAt: 500 })
    const [stopped] = ExecutorAllocation.tick(config, started, load(0), 0)
    assert.deepInclude(stopped, { addAt: undefined, toAdd: 1 })
    // Exactly what the tasks need is no reason to drop the target.
    const [kept] = ExecutorAllocation.tick(config, { ...started, target: 3, requested: 3, addAt: 5000 }, load(6), 0)
    assert.strictEqual(kept.target, 3)
  })

  it("gives back idle executors in the order they timed out, then by id, never below the minimum or the target", () => {
    const state: ExecutorAllocation.State = { target: 1, toAdd: 1, addAt: undefined, initializing: false, requested: 1 }
    const executors = [idle("c", 10), idle("b", 0), idle("a", 10), idle("d", 0), busy("e", 1)]
    const load = {
      pendingTasks: 0,
      runningTasks: 1,
      executors,
      pendingRemoval: new Set<string>(),
      stageSubmitted: true
    }
    const now = 100_000
    assert.deepStrictEqual(ExecutorAllocation.tick(config, state, load, now)[1].remove, ["b", "d", "a", "c"])
    assert.deepStrictEqual(
      ExecutorAllocation.tick({ ...config, minExecutors: 3 }, { ...state, target: 3, requested: 3 }, load, now)[1]
        .remove,
      ["b", "d"]
    )
    // One already asked to go counts as gone: it is not asked again, and the floor counts without it.
    assert.deepStrictEqual(
      ExecutorAllocation.tick({ ...config, minExecutors: 3 }, { ...state, target: 3, requested: 3 }, {
        ...load,
        pendingRemoval: new Set(["b"])
      }, now)[1].remove,
      ["d"]
    )
  })

  it("holds Spark's invariants after every tick", () => {
    fc.assert(
      fc.property(configs, fc.array(event, { minLength: 1, maxLength: 120 }), (config, events) => {
        let now = 0
        let pending = 0
        let stageSubmitted = false
        let nextId = 0
        // The cluster manager grants executors up to the last requested total, one per Grant.
        let requested = ExecutorAllocation.initial(config).requested
        const executors: Array<ModelExecutor> = []
        const pendingRemoval = new Set<string>()
        let state = ExecutorAllocation.initial(config)
        let backlogSince: number | undefined

        const load = (): ExecutorAllocation.Load => ({
          pendingTasks: pending,
          runningTasks: executors.reduce((sum, e) => sum + e.running, 0),
          executors: executors.map((e) => ({
            id: e.id,
            runningTasks: e.running,
            idleSince: e.idleSince,
            holdsCachedBlocks: e.cached,
            holdsShuffleData: e.shuffle
          })),
          pendingRemoval: new Set(pendingRemoval),
          stageSubmitted
        })

        for (const step of events) {
          switch (step._tag) {
            case "Advance":
              now += step.millis
              break
            case "Submit":
              pending += step.tasks
              stageSubmitted = true
              break
            case "Start": {
              // Waiting tasks start on free slots.
              for (const e of executors) {
                if (pendingRemoval.has(e.id)) continue
                const free = Math.min(config.tasksPerExecutor - e.running, pending)
                if (free <= 0) continue
                e.running += free
                e.idleSince = undefined
                pending -= free
              }
              break
            }
            case "Finish": {
              const e = executors[step.executor % Math.max(1, executors.length)]
              if (e !== undefined && e.running > 0) {
                e.running -= 1
                e.shuffle = true
                if (e.running === 0) e.idleSince = now
              }
              break
            }
            case "Cache": {
              const e = executors[step.executor % Math.max(1, executors.length)]
              if (e !== undefined) e.cached = true
              break
            }
            case "Unpersist":
              for (const e of executors) {
                e.cached = false
                e.shuffle = false
              }
              break
            case "Grant":
              if (executors.length - pendingRemoval.size < requested) {
                executors.push({ id: String(nextId++), running: 0, idleSince: now, cached: false, shuffle: false })
              }
              break
          }
          if (pending > 0) backlogSince ??= now
          else backlogSince = undefined

          const before = state
          const seen = load()
          const [next, decision] = ExecutorAllocation.tick(config, state, seen, now)
          state = next
          const needed = ExecutorAllocation.maxNeeded(config, seen)
          const floor = Math.max(config.minExecutors, 0)

          // The target stays within the bounds.
          assert.isAtLeast(state.target, floor)
          assert.isAtMost(state.target, Math.max(config.maxExecutors, floor))
          // Past its start, never more than the tasks need (or the minimum).
          if (!state.initializing) assert.isAtMost(state.target, Math.max(needed, config.minExecutors))
          // It grows only after the backlog timeout, and by at most the step it was at.
          if (state.target > before.target && !before.initializing) {
            assert.isDefined(backlogSince)
            assert.isAtLeast(now - backlogSince!, config.backlogTimeoutMillis)
            assert.isAtMost(state.target - Math.max(before.target, seen.executors.length), before.toAdd)
          }
          // A new total is asked exactly when the target changed.
          assert.strictEqual(decision.requestTotal !== undefined, state.target !== before.requested)
          if (decision.requestTotal !== undefined) requested = decision.requestTotal

          // Only idle executors past their own timeout go, and never below the minimum or the target.
          for (const id of decision.remove) {
            const e = seen.executors.find((candidate) => candidate.id === id)!
            assert.strictEqual(e.runningTasks, 0)
            assert.isAtMost(ExecutorAllocation.timesOutAt(config, e), now)
            if (e.holdsCachedBlocks) assert.isAtMost(e.idleSince! + config.cachedIdleTimeoutMillis, now)
            if (config.shuffleTracking && e.holdsShuffleData && !e.holdsCachedBlocks) {
              assert.isAtMost(e.idleSince! + config.shuffleTrackingTimeoutMillis, now)
            }
            assert.isFalse(seen.pendingRemoval.has(id))
          }
          if (decision.remove.length > 0) {
            const left = seen.executors.length - seen.pendingRemoval.size - decision.remove.length
            assert.isAtLeast(left, Math.max(config.minExecutors, state.target))
          }
          // The cluster carries the removals out at once.
          for (const id of decision.remove) {
            const at = executors.findIndex((e) => e.id === id)
            executors.splice(at, 1)
          }
        }
      }),
      { numRuns: 300 }
    )
  })
})
