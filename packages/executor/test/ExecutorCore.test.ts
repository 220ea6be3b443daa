import { assert, describe, it } from "@effect/vitest"
import { ExecutorCore } from "@kindling/executor"
import { ClusterMessages, Endpoints, Ids, RpcAddress } from "@kindling/protocol"
import { FastCheck as fc } from "effect"

const driver = Endpoints.ref(RpcAddress.make("driver", 7078), Endpoints.scheduler)
const self = Endpoints.ref(RpcAddress.make("exec-1", 5000), Endpoints.executor)
const executorId = Ids.ExecutorId.make("1")

const task = (taskId: number) =>
  new ClusterMessages.TaskDescription({
    taskId,
    attemptNumber: 0,
    name: `task ${taskId}`,
    index: taskId,
    partitionId: taskId,
    stageId: 0,
    stageAttemptId: 0,
    cpus: 1,
    properties: {},
    resources: {},
    serializedTask: new Uint8Array([taskId])
  })
const launch = (...taskIds: ReadonlyArray<number>) =>
  new ClusterMessages.LaunchTasks({ executorId, tasks: taskIds.map(task) })

// Drives the core as its shell and driver would; checks that every launched task runs once and is reported
// ended once, that kills go only to running tasks, and that a stopping executor kills what runs and exits once.
class World {
  readonly state = ExecutorCore.make({
    executorId,
    self,
    driver,
    hostname: "exec-1",
    cores: 2,
    heartbeatIntervalMillis: 10_000
  })
  readonly running = new Set<number>()
  readonly reportedEnds = new Map<number, number>()
  exits = 0
  now = 0
  nextTaskId = 0
  /** Told to decommission, and how often it offered its blocks since. */
  decommissioned = false
  offers = 0

  apply(input: Parameters<typeof ExecutorCore.step>[1]) {
    const commands = ExecutorCore.step(this.state, input)
    for (const command of commands) {
      if (command._tag === "RunTask") {
        assert.isFalse(this.running.has(command.taskId), `TID ${command.taskId} run twice`)
        this.running.add(command.taskId)
      }
      if (command._tag === "KillTask") assert.isTrue(this.running.has(command.taskId), "a kill for nothing")
      if (command._tag === "Exit") this.exits++
      // Decommissioned, it offers its blocks once, when no task runs; and it runs nothing new.
      if (command._tag === "OfferMigration") {
        assert.isTrue(this.decommissioned, "blocks offered without a decommission")
        assert.strictEqual(this.running.size, 0, "blocks offered while tasks run")
        this.offers++
      }
      if (command._tag === "Send" && command.message instanceof ClusterMessages.StatusUpdates) {
        assert.isAbove(command.message.updates.length, 0, "an empty report")
        for (const { state, taskId } of command.message.updates) {
          assert.notStrictEqual(state, "RUNNING")
          this.reportedEnds.set(taskId, (this.reportedEnds.get(taskId) ?? 0) + 1)
        }
      }
    }
    assert.deepStrictEqual(ExecutorCore.validate(this.state), [])
    assert.isAtMost(this.exits, 1)
    assert.isAtMost(this.offers, 1)
    if (this.decommissioned && this.running.size === 0 && this.exits === 0) {
      assert.strictEqual(this.offers, 1, "a drained decommissioned executor did not offer its blocks")
    }
    return commands
  }

  receive(message: ClusterMessages.DriverToExecutor) {
    return this.apply({
      _tag: "Receive",
      message,
      ask: undefined,
      sender: driver.address,
      peer: driver.address,
      connection: 1,
      now: this.now
    })
  }

  // Tasks that ended in one turn; the runner tells each once, but may tell of one the core no longer runs.
  end(ends: ReadonlyArray<readonly [number, "FINISHED" | "FAILED" | "KILLED"]>) {
    for (const [taskId] of ends) this.running.delete(taskId)
    this.apply({
      _tag: "TasksEnded",
      ends: ends.map(([taskId, state]) => ({ taskId, state, outcome: new Uint8Array() })),
      now: this.now
    })
  }
}

type Op = (world: World) => void
const operation: fc.Arbitrary<Op> = fc.oneof(
  // The driver never reuses a task id; a launch it repeats (a duplicated frame) names tasks already running.
  {
    arbitrary: fc.tuple(fc.boolean(), fc.integer({ min: 1, max: 3 })).map(([again, count]): Op => (world) => {
      const first = again && world.nextTaskId >= count ? world.nextTaskId - count : world.nextTaskId
      world.receive(launch(...Array.from({ length: count }, (_, i) => first + i)))
      world.nextTaskId = Math.max(world.nextTaskId, first + count)
    }),
    weight: 4
  },
  {
    arbitrary: fc.array(
      fc.tuple(
        fc.integer({ min: 0, max: 30 }),
        fc.constantFrom("FINISHED", "FAILED", "KILLED") as fc.Arbitrary<"FINISHED" | "FAILED" | "KILLED">
      ),
      { minLength: 1, maxLength: 3 }
    ).map((ends): Op => (world) => {
      const running = ends.filter(([id], i) => world.running.has(id) && ends.findIndex(([other]) => other === id) === i)
      if (running.length > 0) world.end(running)
    }),
    weight: 4
  },
  {
    arbitrary: fc.integer({ min: 0, max: 30 }).map((id): Op => (world) =>
      world.receive(
        new ClusterMessages.KillTask({ taskId: id, executor: executorId, interruptThread: true, reason: "r" })
      )
    ),
    weight: 2
  },
  { arbitrary: fc.constant<Op>((world) => world.apply({ _tag: "SendHeartbeat", now: world.now })), weight: 1 },
  { arbitrary: fc.constant<Op>((world) => world.receive(new ClusterMessages.StopExecutor())), weight: 1 },
  {
    arbitrary: fc.constant<Op>((world) => {
      if (world.exits === 0) world.decommissioned = true
      world.receive(new ClusterMessages.DecommissionExecutor())
    }),
    weight: 1
  },
  {
    arbitrary: fc.constant<Op>((world) =>
      world.apply({ _tag: "Disconnected", peer: driver.address, connection: 1, now: world.now })
    ),
    weight: 1
  }
)

describe("ExecutorCore", () => {
  it("model: random launches, ends, kills, stops and a lost driver: every task runs once, ends reported once", () => {
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 50, size: "max" }), (ops) => {
        const world = new World()
        world.apply({ _tag: "Start", now: 0 })
        world.apply({ _tag: "Registered", now: 0 })
        for (const op of ops) op(world)
        for (const taskId of [...world.running]) world.end([[taskId, "KILLED"]])
        for (const [taskId, reports] of world.reportedEnds) assert.strictEqual(reports, 1, `TID ${taskId}`)
      }),
      { numRuns: 300 }
    )
  })

  it("registers first; a refused registration exits 1", () => {
    const world = new World()
    const started = world.apply({ _tag: "Start", now: 0 })
    assert.isTrue(started.some((c) => c._tag === "Register"))
    const refused = world.apply({ _tag: "RegistrationFailed", reason: "Duplicate executor ID", now: 0 })
    assert.deepStrictEqual(refused.filter((c) => c._tag === "Exit"), [{
      _tag: "Exit",
      code: 1,
      reason: "Cannot register with driver: Duplicate executor ID"
    }])
  })

  it("decommissioned, it finishes its tasks, offers its blocks, and stops when told as decommissioned", () => {
    const world = new World()
    world.apply({ _tag: "Start", now: 0 })
    world.apply({ _tag: "Registered", now: 0 })
    world.receive(launch(0))
    world.decommissioned = true
    assert.deepStrictEqual(world.receive(new ClusterMessages.DecommissionExecutor()).map((c) => c._tag), ["Log"])
    world.end([[0, "FINISHED"]])
    assert.strictEqual(world.offers, 1)
    // What it copies for another decommissioning executor is told: each cached block, then what moved.
    const copied = world.apply({
      _tag: "Migrated",
      from: Ids.ExecutorId.make("2"),
      mapOutputs: [{ shuffleId: 0, mapIndex: 3 }],
      stored: [{ blockId: "rdd_1_0", level: "MEMORY_ONLY", memSize: 10, diskSize: 0 }],
      failures: ["block rdd_1_1: not kept here"],
      now: 0
    })
    const sent = copied.flatMap((c) => (c._tag === "Send" ? [c.message] : []))
    assert.deepStrictEqual(sent.map((m) => m._tag), ["UpdateBlockInfo", "BlocksMigrated"])
    assert.deepStrictEqual(
      (sent[1] as ClusterMessages.BlocksMigrated).mapOutputs,
      [{ shuffleId: 0, mapIndex: 3 }]
    )
    const stopped = world.receive(new ClusterMessages.StopExecutor())
    assert.deepStrictEqual(stopped.filter((c) => c._tag === "Exit"), [{
      _tag: "Exit",
      code: 0,
      reason: "Decommissioned"
    }])
  })
})
