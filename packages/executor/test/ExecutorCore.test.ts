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
    serializedTask: new Uint8Array([taskId]),
    needs: { persisted: [], shuffleReads: [], broadcasts: [] }
  })
const launch = (...taskIds: ReadonlyArray<number>) =>
  new ClusterMessages.LaunchTasks({ executorId, tasks: taskIds.map(task) })

// Drives the core as its shell and driver would; checks that every launched task runs once and is reported
// ended once, that kills go only to running tasks, and that a stopping executor kills what runs and exits once.
class World {
  readonly state: ExecutorCore.State
  readonly running = new Set<number>()
  /** Every task it was told to run, and when. */
  readonly launched = new Map<number, number>()
  readonly reportedEnds = new Map<number, number>()
  exits = 0
  now = 0
  nextTaskId = 0
  /** Told to decommission, and how often it offered its blocks since. */
  decommissioned = false
  offers = 0

  constructor(config: Partial<ExecutorCore.Config> = {}) {
    this.state = ExecutorCore.make({
      executorId,
      self,
      driver,
      hostname: "exec-1",
      cores: 2,
      heartbeatIntervalMillis: 10_000,
      ...config
    })
  }

  apply(input: Parameters<typeof ExecutorCore.step>[1]) {
    const commands = ExecutorCore.step(this.state, input)
    const killed = new Set<number>()
    for (const command of commands) {
      if (command._tag === "RunTask") {
        assert.isFalse(this.running.has(command.taskId), `TID ${command.taskId} run twice`)
        // It runs the attempt the driver launched (the test's task n is partition n, its bytes [n]).
        assert.deepStrictEqual([command.info.taskAttemptId, command.info.partitionId, [...command.task]], [
          command.taskId,
          command.taskId,
          [command.taskId]
        ])
        this.running.add(command.taskId)
        this.launched.set(command.taskId, this.now)
      }
      if (command._tag === "KillTask") {
        assert.isTrue(this.running.has(command.taskId), "a kill for nothing")
        killed.add(command.taskId)
      }
      if (command._tag === "Exit") {
        this.exits++
        // Stopping, it kills what runs: nothing of the app runs on past its executor.
        assert.deepStrictEqual([...this.running].filter((id) => !killed.has(id)), [], "left running at exit")
      }
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
          assert.isTrue(this.launched.has(taskId), `an end of TID ${taskId}, never run here`)
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
    arbitrary: fc.integer({ min: 0, max: 30 }).map((id): Op => (world) => {
      const kills = world.receive(
        new ClusterMessages.KillTask({ taskId: id, executor: executorId, interruptThread: true, reason: "r" })
      ).filter((c) => c._tag === "KillTask")
      // A kill reaches a running task, even a stopping executor's (whose kill went out already).
      assert.strictEqual(kills.length, world.running.has(id) ? 1 : 0)
    }),
    weight: 2
  },
  // The runner tells of the end of a task the core no longer runs (killed, it ended on its own): not news.
  {
    arbitrary: fc.nat().map((n): Op => (world) => {
      const over = [...world.launched.keys()].filter((id) => !world.running.has(id))
      if (over.length === 0) return
      world.end([[over[n % over.length]!, "KILLED"]])
    }),
    weight: 1
  },
  {
    arbitrary: fc.integer({ min: 0, max: 20_000 }).map((millis): Op => (world) => {
      world.now += millis
      const beats = world.apply({ _tag: "SendHeartbeat", now: world.now }).flatMap((c) =>
        c._tag === "Heartbeat" ? [c.message] : []
      )
      if (world.exits > 0) return assert.deepStrictEqual(beats, [], "a stopped executor beat its heart")
      // Each beat carries every running task and how long it has run: the driver's only news of it.
      assert.strictEqual(beats.length, 1)
      assert.deepStrictEqual(
        beats[0]!.taskMetrics.map((m) => [m.taskId, m.metrics.executorRunTime]).sort(([a], [b]) => a! - b!),
        [...world.running].sort((a, b) => a - b).map((id) => [id, world.now - world.launched.get(id)!])
      )
    }),
    weight: 1
  },
  { arbitrary: fc.constant<Op>((world) => world.receive(new ClusterMessages.StopExecutor())), weight: 1 },
  {
    arbitrary: fc.constant<Op>((world) => {
      if (world.exits === 0) world.decommissioned = true
      world.receive(new ClusterMessages.DecommissionExecutor())
    }),
    weight: 1
  },
  {
    // Losing its driver ends it (exit 1); losing a peer executor does not.
    arbitrary: fc.boolean().map((fromDriver): Op => (world) => {
      const peer = fromDriver ? driver.address : RpcAddress.make("exec-2", 5000)
      const exitedBefore = world.exits
      const exits = world.apply({ _tag: "Disconnected", peer, connection: 1, now: world.now }).filter((c) =>
        c._tag === "Exit"
      )
      assert.deepStrictEqual(
        exits.map((c) => c._tag === "Exit" && [c.code, c.reason]),
        fromDriver && exitedBefore === 0 ? [[1, "Driver driver:7078 disassociated! Shutting down."]] : []
      )
    }),
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
    const migrated = sent[1] as ClusterMessages.BlocksMigrated
    assert.deepStrictEqual([migrated.mapOutputs, migrated.blocks, migrated.failures], [
      [{ shuffleId: 0, mapIndex: 3 }],
      ["rdd_1_0"],
      ["block rdd_1_1: not kept here"]
    ])
    assert.isTrue(copied.some((c) => c._tag === "Log" && c.level === "Warning" && c.message.includes("rdd_1_1")))
    const stopped = world.receive(new ClusterMessages.StopExecutor())
    assert.deepStrictEqual(stopped.filter((c) => c._tag === "Exit"), [{
      _tag: "Exit",
      code: 0,
      reason: "Decommissioned"
    }])
  })

  const registered = (config: Partial<ExecutorCore.Config> = {}) => {
    const world = new World(config)
    const started = world.apply({ _tag: "Start", now: 0 })
    const joined = world.apply({ _tag: "Registered", now: 0 })
    return { world, started, joined }
  }

  it("registers with its cores and shuffle service, then tells the driver it launched and beats every interval", () => {
    const shuffleService = RpcAddress.make("exec-1", 7337)
    const { joined, started } = registered({ shuffleService })
    const register = started.find((c) => c._tag === "Register")
    assert.deepStrictEqual(
      register?._tag === "Register" && [register.message.cores, register.message.shuffleService?.hostPort],
      [2, "exec-1:7337"]
    )
    assert.isTrue(started.some((c) => c._tag === "Log" && c.message === "Connecting to driver: " + driver.toString()))
    assert.deepStrictEqual(joined.flatMap((c) => (c._tag === "Send" ? [c.message._tag] : [])), ["LaunchedExecutor"])
    const timer = joined.find((c) => c._tag === "StartTimer")
    assert.deepStrictEqual(timer?._tag === "StartTimer" && [timer.input, timer.delayMillis, timer.periodMillis], [
      { _tag: "SendHeartbeat" },
      10_000,
      10_000
    ])
    // A local app's executor is the driver's own: it connects to nothing.
    const local = registered({ executorId: Ids.ExecutorId.make("driver") })
    assert.isFalse(local.started.some((c) => c._tag === "Log" && c.message.startsWith("Connecting")))
  })

  it("a launch beyond its cores is run too (it waits for a core); a stop kills all and exits 0 as the driver said", () => {
    const { world } = registered()
    const launched = world.receive(launch(0, 1, 2))
    assert.deepStrictEqual(launched.filter((c) => c._tag === "RunTask").length, 3)
    assert.isFalse(launched.some((c) => c._tag === "Log" && c.level === "Warning"))
    const stopped = world.receive(new ClusterMessages.StopExecutor())
    assert.deepStrictEqual(stopped.flatMap((c) => (c._tag === "KillTask" ? [c.taskId] : [])), [0, 1, 2])
    assert.deepStrictEqual(stopped.filter((c) => c._tag === "Exit"), [{
      _tag: "Exit",
      code: 0,
      reason: "Driver commanded a shutdown"
    }])
  })

  it("a task's stored blocks are told before its end, and a batch of ends goes in one report", () => {
    const { world } = registered()
    world.receive(launch(0, 1))
    world.running.clear()
    const ended = world.apply({
      _tag: "TasksEnded",
      ends: [
        {
          taskId: 0,
          state: "FINISHED",
          outcome: new Uint8Array(),
          stored: [{ blockId: "rdd_4_0", level: "MEMORY_AND_DISK", memSize: 100, diskSize: 5 }]
        },
        { taskId: 1, state: "FAILED", outcome: new Uint8Array() }
      ],
      now: 0
    })
    const sent = ended.flatMap((c) => (c._tag === "Send" ? [c.message] : []))
    assert.deepStrictEqual(sent.map((m) => m._tag), ["UpdateBlockInfo", "StatusUpdates"])
    const block = sent[0] as ClusterMessages.UpdateBlockInfo
    assert.deepStrictEqual([block.executorId, block.blockId, block.storageLevel, block.memSize, block.diskSize], [
      executorId,
      "rdd_4_0",
      "MEMORY_AND_DISK",
      100,
      5
    ])
    const report = sent[1] as ClusterMessages.StatusUpdates
    assert.deepStrictEqual(report.updates.map((u) => [u.taskId, u.state]), [[0, "FINISHED"], [1, "FAILED"]])
  })

  it("the driver's other requests become work for the shell, until it stops", () => {
    const { world } = registered()
    const from = Ids.ExecutorId.make("2")
    const address = RpcAddress.make("exec-2", 5000)
    const migrate = new ClusterMessages.MigrateBlocks({ from, address, token: "t", mapOutputs: [], blocks: [] })
    const tags = (commands: ReadonlyArray<ExecutorCore.Command>) =>
      commands.map((c) => c._tag).filter((t) => t !== "Log")
    assert.deepStrictEqual(tags(world.receive(migrate)), ["Migrate"])
    assert.deepStrictEqual(world.receive(new ClusterMessages.RemoveRdd({ rddId: 4 })).filter((c) => c._tag !== "Log"), [
      { _tag: "RemoveRdd", rddId: 4 }
    ])
    const lost = world.receive(new ClusterMessages.PeerLost({ executorId: from, address }))
    assert.deepStrictEqual(lost.filter((c) => c._tag !== "Log"), [{ _tag: "ForgetPeer", address, executorId: "2" }])
    world.receive(new ClusterMessages.StopExecutor())
    // Stopping, it copies nothing more and tells nothing of what a copy still in flight brought.
    assert.deepStrictEqual(tags(world.receive(migrate)), [])
    assert.deepStrictEqual(
      tags(world.apply({ _tag: "Migrated", from, mapOutputs: [], stored: [], failures: [], now: 0 })),
      []
    )
  })

  it("a failed heartbeat is a warning, not the end: the driver's silence is its to judge", () => {
    const { world } = registered()
    const failed = world.apply({ _tag: "HeartbeatFailed", reason: "timed out after 10 s", now: 0 })
    assert.deepStrictEqual(failed, [{
      _tag: "Log",
      level: "Warning",
      message: "Issue communicating with driver in heartbeater: timed out after 10 s"
    }])
  })

  it("the validator flags a task run before registration", () => {
    const world = new World()
    ExecutorCore.step(world.state, { _tag: "Start", now: 0 })
    ExecutorCore.step(world.state, {
      _tag: "Receive",
      message: launch(0),
      ask: undefined,
      sender: driver.address,
      peer: driver.address,
      connection: 1,
      now: 0
    })
    assert.deepStrictEqual(ExecutorCore.validate(world.state), ["tasks run before the executor registered"])
  })
})
