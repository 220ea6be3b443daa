import { Defects } from "@kindling/kernel/testing"
import { Deadlines } from "@kindling/protocol/testing"
import { Cluster } from "@kindling/simulation"
import { assert, describe, it } from "vitest"

// `KINDLING_SIM_SEEDS=1-5000 pnpm test packages/simulation` sweeps more seeds; `pnpm bench simulation` reports
// thousands with figures. A failing seed replays exactly: `Cluster.run({ seed })` and read its `trace`.
// The default window is seeds 201–300, carried on (up to 600) until every kind of fault has struck, a leader has
// changed and a map output has migrated: the rarest fault, a crash while fetching a block into a file, strikes only
// when a trap on a worker meets a remote fetch over the in-memory bound (about once in a hundred seeds), and which
// seeds it strikes in moves with any change to the order of events, so a fixed window would go blind to it.
const asked = process.env["KINDLING_SIM_SEEDS"]
const [first, last] = (asked ?? "201-300").split("-").map(Number) as [number, number]
const carryOnTo = asked === undefined ? 600 : last

// What the sweep must have exercised: the cluster's faults and the engine's.
const faultKinds = [
  "kill master",
  "kill ",
  "pause master",
  "pause ",
  "partition master",
  "break master",
  "disk full ",
  "rot ",
  "vanish ",
  "crash ",
  "crash writing map output ",
  "crash serving map output ",
  "crash fetching a block ",
  "decommission (signal) ",
  "decommission (master) "
]

describe("the simulated cluster", () => {
  it(`keeps its guarantees under faults, seeds ${first}-${last} and on until every fault has struck`, async () => {
    const failures: Array<string> = []
    const kinds = new Set<string>()
    let leaderChanges = 0
    let migrations = 0
    const exercised = () => leaderChanges > 0 && migrations > 0 && faultKinds.every((kind) => kinds.has(kind))
    let seed = first
    for (; seed <= last || (seed <= carryOnTo && !exercised()); seed++) {
      const outcome = Cluster.run({ seed })
      leaderChanges += outcome.leaderChanges
      migrations += outcome.trace.filter((line) => / INFO +Migrating [1-9]\d* map output/.test(line)).length
      for (const fault of outcome.faults) kinds.add(`${fault.kind} ${fault.nodes.includes("master") ? "master" : ""}`)
      if (outcome.problems.length > 0) failures.push(`seed ${seed}: ${outcome.problems.slice(0, 5).join(" | ")}`)
      // A seed runs synchronously: between seeds the test's worker answers vitest, which gives up on a worker
      // silent for a minute ("Timeout calling onTaskUpdate").
      await new Promise((resolve) => setImmediate(resolve))
    }
    assert.deepStrictEqual(failures, [])
    // The sweep did exercise the faults it claims to survive, the cluster's and the engine's.
    const swept = `seeds ${first}-${seed - 1}`
    for (const kind of faultKinds) {
      assert.isTrue(kinds.has(kind), `no "${kind.trim()}" fault in ${swept}: ${[...kinds].join(", ")}`)
    }
    assert.isAbove(leaderChanges, 0, `no leader change in ${swept}`)
    // Decommissioned workers' executors handed map outputs over to peers, not only gave them up.
    assert.isAbove(migrations, 0, `no map output migrated in ${swept}`)
  }, Deadlines.scaled(300_000))

  it("replays a seed exactly", () => {
    const one = Cluster.run({ seed: 7 })
    const two = Cluster.run({ seed: 7 })
    assert.isAbove(one.faults.length, 0)
    assert.deepStrictEqual(two.trace, one.trace)
    assert.notDeepEqual(Cluster.run({ seed: 8 }).trace, one.trace)
  })

  it("runs clean without faults", () => {
    const outcome = Cluster.run({ seed: 1, faults: false, computing: 2 })
    assert.deepStrictEqual(outcome.faults, [])
    assert.deepStrictEqual(outcome.problems, [])
    // Its computing apps ran their jobs on real executors, and every job that should succeed did.
    assert.isAbove(outcome.jobs, 3)
    assert.strictEqual(outcome.jobsFailed, 0)
    assert.isTrue(outcome.trace.some((line) => /jobs-2 job \d .* ended: success/.test(line)))
  })

  // The checks are worth something only if they catch a broken master: one that times workers out long before
  // their heartbeats are due takes healthy workers for dead, and drivers get run twice or never settle.
  it("catches a master that takes healthy workers for dead", () => {
    const outcome = Cluster.run({ seed: 3, faults: false, master: { workerTimeoutMillis: 300 } })
    assert.isAbove(outcome.problems.length, 0)
  })

  // A defect in a computing app's driver, on a cluster: its jobs fail with a typed internal error, and it leaves —
  // its executors stop, its master ends the app and frees its cores, its workers remove its files. The only
  // problems are the jobs that failed for it and the event stream it no longer published.
  it("a driver whose core throws fails its jobs, leaves its master and frees what it held", () => {
    let statusUpdates = 0
    const outcome = Cluster.run({
      seed: 1,
      faults: false,
      coreWrapper: Defects.throwing(
        "CoarseGrainedScheduler",
        (tag) => tag === "StatusUpdates" && ++statusUpdates === 12
      )
    })
    assert.isTrue(outcome.trace.some((line) => /jobs-1 ERROR The driver stopped \(70\): internal error/.test(line)))
    assert.isTrue(outcome.problems.some((problem) => problem.includes("the driver stopped on an internal error")))
    for (const problem of outcome.problems) {
      assert.match(
        problem,
        /the driver stopped on an internal error: .*injected defect at StatusUpdates|^jobs-1: (job|stage|TID) /
      )
    }
  })

  // A defect in one executor's core: that executor stops (exit 70, which the run reports) and frees its cores;
  // its tasks run again on the others, and every job still gives its answer.
  it("an executor whose core throws stops with 70; its tasks run elsewhere", () => {
    let launches = 0
    const outcome = Cluster.run({
      seed: 1,
      faults: false,
      coreWrapper: Defects.throwing("Executor", (tag) => tag === "LaunchTasks" && ++launches === 3)
    })
    assert.isTrue(
      outcome.trace.some((line) => /Executor stops: internal error: failed to handle Receive LaunchTasks/.test(line))
    )
    assert.strictEqual(outcome.problems.length, 1, outcome.problems.join("\n"))
    assert.match(outcome.problems[0]!, /^executor \/sim\/worker-\d\/app-[\w-]+\/\d+ stopped on an internal error$/)
    assert.strictEqual(outcome.jobsFailed, 0)
  })

  // A defect in the app's link to its master (the app client) is a defect of its driver: the driver ends as above.
  it("an app client whose core throws ends its driver the same way", () => {
    let updates = 0
    const outcome = Cluster.run({
      seed: 1,
      faults: false,
      coreWrapper: Defects.throwing("AppClient", (tag) => tag === "ExecutorUpdated" && ++updates === 2)
    })
    assert.isTrue(
      outcome.trace.some((line) => /jobs-1 ERROR The driver stopped \(70\): its app client stopped/.test(line))
    )
    assert.isTrue(outcome.problems.some((problem) => problem.includes("the driver stopped on an internal error")))
    for (const problem of outcome.problems) {
      assert.match(problem, /the driver stopped on an internal error: its app client stopped|^jobs-1: (job|stage|TID) /)
    }
  })
})
