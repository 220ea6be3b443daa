import { assert, describe, it } from "@effect/vitest"
import { Scheduling } from "@kindling/master"
import { FastCheck as fc } from "effect"
import * as Spark from "./fixtures/sparkScheduling.js"

const app = (demand: Partial<Scheduling.ExecutorDemand>): Scheduling.ExecutorDemand => ({
  coresPerExecutor: undefined,
  memoryPerExecutorMb: 1024,
  coresLeft: Infinity,
  executorLimit: Infinity,
  existingExecutors: 0,
  ...demand
})

// Workers with more memory than any example asks for, so that only cores decide.
const cores = (...free: ReadonlyArray<number>): ReadonlyArray<Scheduling.FreeResources> =>
  free.map((coresFree) => ({ coresFree, memoryFreeMb: 1 << 20 }))

const both = (
  demand: Scheduling.ExecutorDemand,
  workers: ReadonlyArray<Scheduling.FreeResources>,
  spreadOut: boolean,
  expected: ReadonlyArray<number>
) => {
  assert.deepStrictEqual(Scheduling.scheduleExecutorsOnWorkers(demand, workers, spreadOut), expected, "ours")
  assert.deepStrictEqual(Spark.scheduleExecutorsOnWorkers(demand, workers, spreadOut), expected, "Spark's loop")
}

describe("scheduleExecutorsOnWorkers", () => {
  it("spreads one core per worker per pass, or fills each worker first", () => {
    // 12 cores over three 8-core workers: four passes of one core each, or 8 on the first and the rest on the next.
    both(app({ coresLeft: 12 }), cores(8, 8, 8), true, [4, 4, 4])
    both(app({ coresLeft: 12 }), cores(8, 8, 8), false, [8, 4, 0])
    // A partial last pass goes to the first workers: two passes give 6, the 7th core goes to worker 0.
    both(app({ coresLeft: 7 }), cores(4, 4, 4), true, [3, 2, 2])
  })

  it("hands out coresPerExecutor cores at a time", () => {
    // 10 cores in units of 2 is 5 executors: 3 in the first pass, 2 in the second.
    both(app({ coresPerExecutor: 2, coresLeft: 10 }), cores(8, 8, 8), true, [4, 4, 2])
    both(app({ coresPerExecutor: 2, coresLeft: 10 }), cores(8, 8, 8), false, [8, 2, 0])
    // 7 cores left in units of 3 is 2 units; an 8-core worker holds 2 units, its 2 spare cores stay free.
    both(app({ coresPerExecutor: 3, coresLeft: 7 }), cores(8, 8), true, [3, 3])
    both(app({ coresPerExecutor: 3, coresLeft: 7 }), cores(8, 8), false, [6, 0])
    // Fewer cores left than one executor needs: nothing.
    both(app({ coresPerExecutor: 4, coresLeft: 3 }), cores(8, 8), true, [0, 0])
  })

  it("SPARK-8881: cores.max 48 with 16-core executors on four 16-core workers gives three executors", () => {
    both(app({ coresPerExecutor: 16, coresLeft: 48 }), cores(16, 16, 16, 16), true, [16, 16, 16, 0])
    // Handing out single cores instead would leave 12 on each worker, too few for any 16-core executor; without
    // coresPerExecutor those 12-core executors are what the app gets.
    both(app({ coresLeft: 48 }), cores(16, 16, 16, 16), true, [12, 12, 12, 12])
  })

  it("needs memory for every executor it starts", () => {
    const workers = [{ coresFree: 8, memoryFreeMb: 2048 }, { coresFree: 8, memoryFreeMb: 4096 }]
    // 2-core executors of 1 GiB: worker 0 has memory for 2 of them, worker 1 for all 4 its cores allow.
    both(app({ coresPerExecutor: 2 }), workers, true, [4, 8])
    both(app({ coresPerExecutor: 2 }), workers, false, [4, 8])
    // Executors of 3 GiB: none fits worker 0, one fits worker 1.
    both(app({ coresPerExecutor: 2, memoryPerExecutorMb: 3072 }), workers, true, [0, 2])
    // With one executor per worker, memory for one is enough however many cores it takes; worker 1 has less
    // memory than one executor needs and gets nothing.
    const small = [{ coresFree: 8, memoryFreeMb: 1024 }, { coresFree: 8, memoryFreeMb: 512 }]
    both(app({}), small, true, [8, 0])
    both(app({}), small, false, [8, 0])
  })

  it("starts no executor beyond the limit, earlier workers first", () => {
    // 2-core executors, limit 3: the first pass starts one on each worker, the second one more on worker 0.
    both(app({ coresPerExecutor: 2, executorLimit: 3 }), cores(8, 8), true, [4, 2])
    // Filling worker 0 first, its third executor reaches the limit.
    both(app({ coresPerExecutor: 2, executorLimit: 3 }), cores(8, 8), false, [6, 0])
    // Single-core executors, limit 4 on three 2-core workers: three in the first pass, then only worker 0.
    both(app({ coresPerExecutor: 1, executorLimit: 4 }), cores(2, 2, 2), true, [2, 1, 1])
    // One executor per worker: the limit picks the workers, and then they grow to their full size.
    both(app({ executorLimit: 2 }), cores(4, 4, 4), true, [4, 4, 0])
    both(app({ executorLimit: 2 }), cores(4, 4, 4), false, [4, 4, 0])
  })

  it("counts the executors the app already has against the limit", () => {
    both(app({ executorLimit: 2, existingExecutors: 1 }), cores(4, 4, 4), true, [4, 0, 0])
    both(app({ coresPerExecutor: 2, executorLimit: 3, existingExecutors: 2 }), cores(8, 8), true, [2, 0])
    // At (or, after the limit was lowered, above) the limit: nothing, whether or not executors would grow.
    both(app({ executorLimit: 3, existingExecutors: 3 }), cores(4, 4), true, [0, 0])
    both(app({ coresPerExecutor: 1, executorLimit: 2, existingExecutors: 5 }), cores(4, 4), false, [0, 0])
  })

  it("with no cap and no limit, takes every core it can use", () => {
    both(app({}), cores(3, 5), true, [3, 5])
    // 4-core executors leave a 3-core worker alone and the 3 spare cores of a 7-core one.
    both(app({ coresPerExecutor: 4 }), cores(3, 7, 8), true, [0, 4, 8])
    both(app({ coresPerExecutor: 4 }), cores(3, 7, 8), false, [0, 4, 8])
  })

  it("skips workers with no free cores", () => {
    // 5 of 6 free cores: passes give 2 to each of workers 1 and 3, then worker 3 is full and worker 1 takes the 5th.
    both(app({ coresLeft: 5 }), cores(0, 4, 0, 2), true, [0, 3, 0, 2])
    both(app({ coresLeft: 5 }), cores(0, 4, 0, 2), false, [0, 4, 0, 1])
    both(app({}), cores(0, 0), true, [0, 0])
    both(app({}), [], true, [])
  })

  it("checks each worker again before giving it a unit within a pass", () => {
    // Both workers can take the one core left when the pass starts; only the first gets it.
    both(app({ coresLeft: 1 }), cores(1, 1), true, [1, 0])
  })

  const demand = fc.record({
    coresPerExecutor: fc.option(fc.integer({ min: 1, max: 8 }), { nil: undefined }),
    memoryPerExecutorMb: fc.oneof(fc.constantFrom(0, 512, 1024), fc.integer({ min: 0, max: 8192 })),
    coresLeft: fc.oneof(fc.integer({ min: 0, max: 320 }), fc.constant(Infinity)),
    executorLimit: fc.oneof(fc.integer({ min: 0, max: 24 }), fc.constant(Infinity)),
    existingExecutors: fc.integer({ min: 0, max: 5 })
  })
  const workers = fc.array(
    fc.record({ coresFree: fc.integer({ min: 0, max: 40 }), memoryFreeMb: fc.integer({ min: 0, max: 8192 }) }),
    { maxLength: 8 }
  )

  it.prop("gives exactly the answers of Spark's loop", [demand, workers, fc.boolean()], ([demand, workers, spread]) => {
    assert.deepStrictEqual(
      Scheduling.scheduleExecutorsOnWorkers(demand, workers, spread),
      Spark.scheduleExecutorsOnWorkers(demand, workers, spread)
    )
  }, { fastCheck: { numRuns: 5000 } })

  it.prop(
    "its executors fit the workers and the app's cap and limit",
    [demand, workers, fc.boolean()],
    ([demand, workers, spread]) => {
      const assigned = Scheduling.scheduleExecutorsOnWorkers(demand, workers, spread)
      let cores = 0
      let executors = 0
      assigned.forEach((n, i) => {
        const allocation = Scheduling.allocate(n, demand.coresPerExecutor)
        assert.strictEqual(allocation.executors * allocation.coresEach, n)
        assert.isAtMost(n, workers[i].coresFree)
        assert.isAtMost(allocation.executors * demand.memoryPerExecutorMb, workers[i].memoryFreeMb)
        cores += n
        executors += allocation.executors
      })
      assert.isAtMost(cores, demand.coresLeft)
      if (executors > 0) assert.isAtMost(executors + demand.existingExecutors, demand.executorLimit)
    },
    { fastCheck: { numRuns: 2000 } }
  )
})

describe("allocate", () => {
  it("splits a worker's cores into executors", () => {
    assert.deepStrictEqual(Scheduling.allocate(8, 4), { executors: 2, coresEach: 4 })
    assert.deepStrictEqual(Scheduling.allocate(48, 16), { executors: 3, coresEach: 16 })
    assert.deepStrictEqual(Scheduling.allocate(7, undefined), { executors: 1, coresEach: 7 })
    assert.deepStrictEqual(Scheduling.allocate(0, undefined), { executors: 0, coresEach: 0 })
    assert.deepStrictEqual(Scheduling.allocate(0, 4), { executors: 0, coresEach: 0 })
  })
})

describe("placeDrivers", () => {
  const worker = (coresFree: number, memoryFreeMb: number) => ({ coresFree, memoryFreeMb })
  const driver = (cores: number, memoryMb: number) => ({ cores, memoryMb })

  it("moves one cursor past every worker it visits", () => {
    // Each launch moves the cursor on, so four small drivers go round the three workers.
    assert.deepStrictEqual(
      Scheduling.placeDrivers(Array.from({ length: 4 }, () => driver(1, 1024)), [
        worker(4, 4096),
        worker(2, 1024),
        worker(8, 8192)
      ]),
      [0, 1, 2, 0]
    )
    // Driver 0 skips worker 0 (too small) for worker 1; driver 1 starts after it, at worker 2, not back at 0.
    assert.deepStrictEqual(
      Scheduling.placeDrivers([driver(2, 1024), driver(2, 1024)], [worker(1, 512), worker(4, 4096), worker(4, 4096)]),
      [1, 2]
    )
  })

  it("leaves a driver waiting when no worker fits it, and the cursor where it was", () => {
    // Driver 1 visits both workers and so comes back to worker 1, where driver 2 then goes.
    assert.deepStrictEqual(
      Scheduling.placeDrivers([driver(1, 1024), driver(8, 1024), driver(1, 1024)], [worker(2, 2048), worker(4, 4096)]),
      [0, undefined, 1]
    )
    assert.deepStrictEqual(Scheduling.placeDrivers([driver(1, 1)], []), [undefined])
    assert.deepStrictEqual(Scheduling.placeDrivers([], [worker(1, 1)]), [])
  })

  it("charges each launch to its worker before placing the next driver", () => {
    // Memory for two 1 GiB drivers; the third waits.
    assert.deepStrictEqual(
      Scheduling.placeDrivers([driver(1, 1024), driver(1, 1024), driver(1, 1024)], [worker(4, 2048)]),
      [0, 0, undefined]
    )
    // Cores for one 3-core driver per worker; the cursor then finds worker 0 full for driver 2.
    assert.deepStrictEqual(
      Scheduling.placeDrivers([driver(3, 1), driver(3, 1), driver(3, 1)], [worker(4, 100), worker(4, 100)]),
      [0, 1, undefined]
    )
  })

  it.prop(
    "places each driver on the first worker with room from the cursor on, within capacity",
    [
      fc.array(fc.record({ cores: fc.integer({ min: 0, max: 8 }), memoryMb: fc.integer({ min: 0, max: 4096 }) }), {
        maxLength: 12
      }),
      fc.array(
        fc.record({ coresFree: fc.integer({ min: 0, max: 16 }), memoryFreeMb: fc.integer({ min: 0, max: 8192 }) }),
        { maxLength: 6 }
      )
    ],
    ([drivers, workers]) => {
      const placed = Scheduling.placeDrivers(drivers, workers)
      assert.strictEqual(placed.length, drivers.length)
      const cores = workers.map((w) => w.coresFree)
      const memory = workers.map((w) => w.memoryFreeMb)
      const fits = (i: number, d: Scheduling.DriverDemand) => cores[i] >= d.cores && memory[i] >= d.memoryMb
      let pos = 0
      drivers.forEach((d, k) => {
        const chosen = placed[k]
        // Every worker visited before the chosen one (or all of them, if none was) had no room.
        const visited = chosen === undefined ? workers.length : (chosen - pos + workers.length) % workers.length
        for (let step = 0; step < visited; step++) assert.isFalse(fits((pos + step) % workers.length, d))
        if (chosen !== undefined) {
          assert.isTrue(fits(chosen, d))
          cores[chosen] -= d.cores
          memory[chosen] -= d.memoryMb
          pos = (chosen + 1) % workers.length
        }
      })
      for (let i = 0; i < workers.length; i++) {
        assert.isAtLeast(cores[i], 0)
        assert.isAtLeast(memory[i], 0)
      }
    },
    { fastCheck: { numRuns: 2000 } }
  )
})
