import { assert, describe, it } from "@effect/vitest"
import { TaskScheduler, TaskSetId } from "@kindling/driver"
import { FastCheck as fc } from "effect"

const config = (overrides: Partial<TaskScheduler.Config> = {}): TaskScheduler.Config => ({
  maxFailures: 4,
  cpusPerTask: 1,
  mode: "FIFO",
  speculation: { enabled: false, multiplier: 1.5, quantile: 0.75, minTaskRuntimeMillis: 100 },
  seed: 1,
  ...overrides
})

// Drives the core as its shell would, keeping what the commands said: which attempts run where, and how each
// task set ended.
class World {
  readonly state: TaskScheduler.State
  now = 0
  nextSet = 0
  readonly running = new Map<number, { executorId: string; taskSet: TaskSetId.TaskSetId; index: number }>()
  readonly ended = new Map<TaskSetId.Key, Array<string>>()
  readonly succeeded = new Map<TaskSetId.Key, Set<number>>()
  readonly submitted = new Map<TaskSetId.Key, { readonly id: TaskSetId.TaskSetId; readonly size: number }>()
  readonly killed = new Set<number>()
  readonly decommissioned = new Set<string>()

  constructor(cfg: TaskScheduler.Config) {
    this.state = TaskScheduler.make(cfg)
  }

  apply(input: TaskScheduler.Input) {
    const commands = TaskScheduler.step(this.state, input)
    for (const command of commands) {
      switch (command._tag) {
        case "LaunchTask": {
          const key = TaskSetId.key(command.taskSet)
          assert.isFalse(this.ended.has(key), `launch for ended set ${key}`)
          assert.isFalse(this.running.has(command.taskId), `TID ${command.taskId} launched twice`)
          assert.isFalse(this.decommissioned.has(command.executorId), `launch on decommissioned ${command.executorId}`)
          // A speculative copy takes a free core: queued behind another task it would overtake nothing.
          if (command.speculative) {
            assert.notInclude(this.state.executors.get(command.executorId)!.queued, command.taskId)
          }
          this.running.set(command.taskId, command)
          break
        }
        case "KillTask":
          this.killed.add(command.taskId)
          break
        case "TaskSucceeded": {
          const key = TaskSetId.key(command.taskSet)
          const done = this.succeeded.get(key) ?? new Set()
          assert.isFalse(done.has(command.index), `task ${key}/${command.index} succeeded twice`)
          done.add(command.index)
          this.succeeded.set(key, done)
          break
        }
        case "TaskSetFinished":
          assert.strictEqual(
            this.succeeded.get(TaskSetId.key(command.taskSet))?.size ?? 0,
            this.submitted.get(TaskSetId.key(command.taskSet))?.size
          )
          this.end(command.taskSet, "finished")
          break
        case "TaskSetFailed":
          this.end(command.taskSet, "failed")
          break
        case "Log":
          break
        default:
          // The shell acts on every command; one it cannot read would be dropped silently.
          assert.fail(`a command the shell cannot read: ${JSON.stringify(command)}`)
      }
    }
    assert.deepStrictEqual(TaskScheduler.validate(this.state), [])
    // No executor is sent more than it runs at once and may queue, by the shell's own count of what it launched.
    const queued = this.state.config.queuedTasksPerCore ?? 0
    for (const executor of this.state.executors.values()) {
      const sent = [...this.running.values()].filter((attempt) => attempt.executorId === executor.id).length
      assert.isAtMost(sent, Math.floor((executor.cores * (1 + queued)) / this.state.config.cpusPerTask))
    }
    // What dynamic allocation and a lost executor read: the attempts the shell was told to start and not yet heard
    // the end of (a killed attempt runs until its executor reports it).
    const executors = new Set([...this.running.values()].map((attempt) => attempt.executorId))
    for (const executorId of executors) {
      const here = [...this.running].filter(([, attempt]) => attempt.executorId === executorId).map(([id]) => id)
      assert.deepStrictEqual(TaskScheduler.runningOn(this.state, executorId).sort(), here.sort())
      assert.strictEqual(TaskScheduler.backlog(this.state).running.get(executorId), here.length)
    }
    assert.strictEqual(TaskScheduler.backlog(this.state).running.size, executors.size)
    return commands
  }

  end(taskSet: TaskSetId.TaskSetId, how: string) {
    const key = TaskSetId.key(taskSet)
    const ends = this.ended.get(key) ?? []
    ends.push(how)
    this.ended.set(key, ends)
    assert.strictEqual(ends.length, 1, `task set ${key} ended ${ends.join(", ")}`)
  }

  // Each set is a stage of its own, and a job of its own, numbered from 1.
  submit(size: number, pool = "default") {
    const id = TaskSetId.make(++this.nextSet, 0)
    this.submitted.set(TaskSetId.key(id), { id, size })
    return this.apply({
      _tag: "SubmitTaskSet",
      taskSet: id,
      jobId: id.stageId,
      pool,
      partitions: Array.from({ length: size }, (_, i) => i),
      now: this.now
    })
  }

  report(taskId: number, state: "FINISHED" | "FAILED" | "KILLED", reason = "boom") {
    this.running.delete(taskId)
    return this.apply({ _tag: "StatusUpdate", taskId, state, reason, now: this.now })
  }
}

type Op = (world: World) => void
const pickRunning = (world: World, n: number) => {
  const ids = [...world.running.keys()]
  return ids.length === 0 ? undefined : ids[n % ids.length]
}

const operation: fc.Arbitrary<Op> = fc.oneof(
  fc.integer({ min: 0, max: 6 }).map((size): Op => (world) => world.submit(size)),
  fc.tuple(fc.integer({ min: 1, max: 4 }), fc.integer({ min: 0, max: 5 })).map(([cores, n]): Op => (world) =>
    world.apply({ _tag: "ExecutorAdded", executorId: `exec-${n}`, host: `host-${n % 2}`, cores, now: world.now })
  ),
  fc.integer({ min: 0, max: 5 }).map((n): Op => (world) => {
    for (const [taskId, attempt] of world.running) if (attempt.executorId === `exec-${n}`) world.running.delete(taskId)
    world.decommissioned.delete(`exec-${n}`)
    world.apply({ _tag: "ExecutorLost", executorId: `exec-${n}`, reason: "lost", now: world.now })
  }),
  // A worker leaving: its executor takes no new task, and what still runs on it past the kill time gets a copy.
  fc.tuple(fc.integer({ min: 0, max: 5 }), fc.option(fc.integer({ min: 0, max: 3000 }))).map(
    ([n, grace]): Op => (world) => {
      const executorId = `exec-${n}`
      if (!world.state.executors.has(executorId)) return
      world.decommissioned.add(executorId)
      world.apply({
        _tag: "ExecutorDecommissioned",
        executorId,
        killAt: grace === null ? undefined : world.now + grace,
        now: world.now
      })
    }
  ),
  fc.tuple(
    fc.nat(),
    fc.constantFrom("FINISHED", "FINISHED", "FAILED", "KILLED") as fc.Arbitrary<
      "FINISHED" | "FAILED" | "KILLED"
    >
  ).map(([n, state]): Op => (world) => {
    const taskId = pickRunning(world, n)
    if (taskId !== undefined) world.report(taskId, state)
  }),
  fc.nat().map((n): Op => (world) => {
    const open = [...world.submitted.entries()].filter(([key]) => !world.ended.has(key))
    if (open.length === 0) return
    const { id } = open[n % open.length]![1]
    world.apply({ _tag: "CancelStage", stageId: id.stageId, reason: "job cancelled", now: world.now })
    world.end(id, "cancelled")
  }),
  // The DAG scheduler gave up on the stage attempt (a fetch failed): the set launches nothing more and never ends.
  fc.nat().map((n): Op => (world) => {
    const open = [...world.submitted.entries()].filter(([key]) => !world.ended.has(key))
    if (open.length === 0) return
    const { id } = open[n % open.length]![1]
    world.apply({ _tag: "StopTaskSet", taskSet: id, now: world.now })
    world.end(id, "stopped")
  }),
  fc.integer({ min: 1, max: 2000 }).map((millis): Op => (world) => {
    world.now += millis
    world.apply({ _tag: "CheckSpeculation", now: world.now })
  }),
  fc.constant<Op>((world) => world.apply({ _tag: "ReviveOffers", now: world.now }))
)

describe("TaskScheduler", () => {
  it("model: random offers, completions, failures, losses and kills keep every invariant, and every task set ends once", () => {
    fc.assert(
      fc.property(
        fc.array(operation, { maxLength: 80, size: "max" }),
        fc.boolean(),
        fc.nat(),
        fc.integer({ min: 0, max: 2 }),
        fc.integer({ min: 1, max: 2 }),
        fc.integer({ min: 0, max: 3000 }),
        (ops, speculation, seed, queuedTasksPerCore, cpusPerTask, queuedTaskMaxMillis) => {
          const world = new World(config({
            seed,
            speculation: { enabled: speculation, multiplier: 1.5, quantile: 0.5, minTaskRuntimeMillis: 100 },
            queuedTasksPerCore,
            queuedTaskMaxMillis,
            cpusPerTask
          }))
          for (const op of ops) op(world)
          // Then the cluster behaves: a fresh executor, and every attempt finishes, until nothing runs.
          world.apply({ _tag: "ExecutorAdded", executorId: "exec-final", host: "host-final", cores: 2, now: world.now })
          for (let rounds = 0; world.running.size > 0; rounds++) {
            assert.isBelow(rounds, 10_000)
            world.report([...world.running.keys()][0]!, "FINISHED")
          }
          for (const key of world.submitted.keys()) {
            assert.strictEqual(world.ended.get(key)?.length, 1, `task set ${key} never ended`)
          }
          assert.strictEqual(world.state.attempts.size, 0)
          assert.strictEqual(world.state.taskSets.size, 0, "a task set outlived its last attempt")
        }
      ),
      { numRuns: 300 }
    )
  })

  it("a task failing maxFailures times fails its set with Spark's message and kills the rest", () => {
    const world = new World(config())
    world.apply({ _tag: "ExecutorAdded", executorId: "1", host: "h", cores: 2, now: 0 })
    world.submit(2)
    const failing = [...world.running].find(([, a]) => a.index === 0)![0]
    let commands = world.report(failing, "FAILED", "Error: boom")
    for (let attempt = 1; attempt < 4; attempt++) {
      const retry = commands.find((c) => c._tag === "LaunchTask")!
      assert.deepStrictEqual(retry._tag === "LaunchTask" && [retry.index, retry.attempt], [0, attempt])
      commands = world.report(retry._tag === "LaunchTask" ? retry.taskId : -1, "FAILED", "Error: boom")
    }
    const failed = commands.find((c) => c._tag === "TaskSetFailed")
    assert.strictEqual(
      failed?._tag === "TaskSetFailed" ? failed.reason : undefined,
      "Task 0 in stage 1.0 failed 4 times, most recent failure: Lost task 0.3 in stage 1.0 (TID 4) (h executor 1): " +
        "Error: boom"
    )
    assert.isTrue(commands.some((c) => c._tag === "KillTask"))
  })

  it("FAIR: a job in another pool gets cores before the running pool's next task; FIFO: it waits", () => {
    const launchedFrom = (mode: "FIFO" | "FAIR") => {
      const world = new World(config({ mode }))
      world.apply({ _tag: "ExecutorAdded", executorId: "1", host: "h", cores: 2, now: 0 })
      world.submit(4, "etl")
      world.submit(4, "reports")
      // One task of the first set ends: the freed core goes to the pool running fewest tasks under FAIR.
      const commands = world.report([...world.running.keys()][0]!, "FINISHED")
      return commands.flatMap((c) => (c._tag === "LaunchTask" ? [c.taskSet] : []))
    }
    assert.deepStrictEqual(launchedFrom("FAIR"), [TaskSetId.make(2, 0)])
    assert.deepStrictEqual(launchedFrom("FIFO"), [TaskSetId.make(1, 0)])
  })

  it("the tasks of a lost executor run again elsewhere, without counting as failures", () => {
    const world = new World(config({ maxFailures: 1 }))
    world.apply({ _tag: "ExecutorAdded", executorId: "a", host: "h", cores: 2, now: 0 })
    world.submit(2)
    world.apply({ _tag: "ExecutorAdded", executorId: "b", host: "h", cores: 1, now: 0 })
    world.running.clear()
    const lost = world.apply({ _tag: "ExecutorLost", executorId: "a", reason: "worker lost", now: 0 })
    const relaunched = lost.flatMap((c) => (c._tag === "LaunchTask" ? [[c.index, c.executorId]] : []))
    assert.deepStrictEqual(relaunched, [[0, "b"]])
  })

  it("speculation copies a straggler onto another executor and kills the slower attempt", () => {
    const world = new World(config({
      speculation: { enabled: true, multiplier: 1.5, quantile: 0.75, minTaskRuntimeMillis: 100 }
    }))
    world.apply({ _tag: "ExecutorAdded", executorId: "a", host: "h1", cores: 4, now: 0 })
    world.submit(4)
    const attempts = [...world.running]
    world.now = 1000
    for (const [taskId, attempt] of attempts) if (attempt.index !== 3) world.report(taskId, "FINISHED")
    world.apply({ _tag: "ExecutorAdded", executorId: "b", host: "h2", cores: 1, now: world.now })
    world.now = 3000
    const copy = world.apply({ _tag: "CheckSpeculation", now: world.now }).find((c) => c._tag === "LaunchTask")
    assert.deepStrictEqual(copy?._tag === "LaunchTask" && [copy.index, copy.executorId, copy.speculative], [
      3,
      "b",
      true
    ])
    const done = world.report(copy?._tag === "LaunchTask" ? copy.taskId : -1, "FINISHED")
    const straggler = attempts.find(([, a]) => a.index === 3)![0]
    assert.deepStrictEqual(done.filter((c) => c._tag === "KillTask"), [{
      _tag: "KillTask",
      taskId: straggler,
      executorId: "a",
      reason: TaskScheduler.anotherAttemptSucceeded
    }])
    assert.isTrue(done.some((c) => c._tag === "TaskSetFinished"))
  })

  it("delay scheduling: a task waits for the executor holding its block, then for its host, then runs anywhere", () => {
    const launches = (commands: ReadonlyArray<TaskScheduler.Command>) =>
      commands.flatMap((c) => (c._tag === "LaunchTask" ? [[c.index, c.executorId, c.locality]] : []))
    const submit = (world: World) =>
      world.apply({
        _tag: "SubmitTaskSet",
        taskSet: TaskSetId.make(0, 0),
        jobId: 0,
        pool: "default",
        partitions: [0, 1, 2],
        // Tasks 0 and 1 read blocks on executor a (host h1); task 2 reads none.
        preferences: [[{ executorId: "a", host: "h1" }], [{ executorId: "a", host: "h1" }], []],
        now: world.now
      })
    for (const sameHost of [true, false]) {
      const world = new World(config({ localityWaitMillis: 3000 }))
      world.apply({ _tag: "ExecutorAdded", executorId: "a", host: "h1", cores: 1, now: 0 })
      world.apply({ _tag: "ExecutorAdded", executorId: "c", host: "h2", cores: 1, now: 0 })
      // a takes task 0 where its block is; c takes task 2, which has no preference; task 1 waits for a.
      assert.deepStrictEqual(launches(submit(world)).sort(), [[0, "a", "PROCESS_LOCAL"], [2, "c", "ANY"]])
      for (const [taskId, run] of world.running) if (run.executorId === "c") world.report(taskId, "FINISHED")
      world.now = 1000
      if (sameHost) world.apply({ _tag: "ExecutorAdded", executorId: "b", host: "h1", cores: 1, now: world.now })
      assert.deepStrictEqual(launches(world.apply({ _tag: "ReviveOffers", now: world.now })), [], "within the wait")
      // Once the wait is over, another executor of its host will do; with none, after one more wait, any.
      world.now = 3000
      const afterOneWait = launches(world.apply({ _tag: "ReviveOffers", now: world.now }))
      if (sameHost) {
        assert.deepStrictEqual(afterOneWait, [[1, "b", "NODE_LOCAL"]])
        continue
      }
      assert.deepStrictEqual(afterOneWait, [])
      world.now = 6000
      assert.deepStrictEqual(launches(world.apply({ _tag: "ReviveOffers", now: world.now })), [[1, "c", "ANY"]])
    }
  })
})

describe("TaskScheduler, leaving and stopping", () => {
  const launches = (commands: ReadonlyArray<TaskScheduler.Command>) =>
    commands.flatMap((c) => (c._tag === "LaunchTask" ? [[c.taskSet, c.index, c.executorId, c.speculative]] : []))
  const runningIndex = (world: World, taskSet: TaskSetId.TaskSetId, index: number) =>
    [...world.running].find(([, a]) => TaskSetId.key(a.taskSet) === TaskSetId.key(taskSet) && a.index === index)![0]
  // The World numbers its sets from 1, each a stage of its own.
  const first = TaskSetId.make(1, 0)
  const second = TaskSetId.make(2, 0)

  it("a stopped task set launches nothing more, keeps its successes and never reports finished", () => {
    const world = new World(config())
    world.apply({ _tag: "ExecutorAdded", executorId: "a", host: "h", cores: 1, now: 0 })
    world.submit(3)
    world.submit(1)
    assert.deepStrictEqual(TaskScheduler.backlog(world.state).pending, 3)
    world.apply({ _tag: "StopTaskSet", taskSet: first, now: 0 })
    world.end(first, "stopped")
    // Its two waiting tasks are no longer work to size the app for; the other set's task is.
    assert.deepStrictEqual(TaskScheduler.backlog(world.state).pending, 1)
    const done = world.report(runningIndex(world, first, 0), "FINISHED")
    // The finished map output still counts; the freed core goes to the other set.
    assert.deepStrictEqual(done.filter((c) => c._tag === "TaskSucceeded").length, 1)
    assert.deepStrictEqual(launches(done), [[second, 0, "a", false]])
    assert.isFalse(world.state.taskSets.has(TaskSetId.key(first)), "a stopped set is forgotten once nothing of it runs")
  })

  // With speculation on: a set of two on executor a, its first task done at 1 s, the other running on at 5 s,
  // and executor b free for a copy.
  const straggling = () => {
    const world = new World(config({
      speculation: { enabled: true, multiplier: 1.5, quantile: 0.5, minTaskRuntimeMillis: 100 }
    }))
    world.apply({ _tag: "ExecutorAdded", executorId: "a", host: "h1", cores: 2, now: 0 })
    world.submit(2)
    world.now = 1000
    world.report(runningIndex(world, first, 0), "FINISHED")
    world.apply({ _tag: "ExecutorAdded", executorId: "b", host: "h2", cores: 1, now: world.now })
    world.now = 5000
    return world
  }

  it("a stopped task set is forgotten when the loser of a speculative race ends last", () => {
    const world = straggling()
    const copy = launches(world.apply({ _tag: "CheckSpeculation", now: world.now }))
    assert.deepStrictEqual(copy, [[first, 1, "b", true]])
    const straggler = [...world.running].find(([, a]) => a.index === 1 && a.executorId === "a")![0]
    const winner = [...world.running].find(([, a]) => a.index === 1 && a.executorId === "b")![0]
    // The copy wins (the set is complete) while the stage is given up on; the straggler's kill is reported last.
    world.apply({ _tag: "StopTaskSet", taskSet: first, now: world.now })
    world.end(first, "stopped")
    world.report(winner, "FINISHED")
    assert.isTrue(world.killed.has(straggler))
    world.report(straggler, "KILLED", TaskScheduler.anotherAttemptSucceeded)
    assert.isFalse(world.state.taskSets.has(TaskSetId.key(first)), "a stopped set outlived its last attempt")
  })

  it("a decommissioned executor gets no new task; at its kill time what still runs on it is copied elsewhere", () => {
    // Without speculation: the copy is the only way the task outlives its worker.
    const world = new World(config())
    world.apply({ _tag: "ExecutorAdded", executorId: "a", host: "h1", cores: 2, now: 0 })
    world.submit(3)
    world.decommissioned.add("a")
    world.apply({ _tag: "ExecutorDecommissioned", executorId: "a", killAt: 5000, now: 0 })
    assert.deepStrictEqual(launches(world.report(runningIndex(world, first, 0), "FINISHED")), [], "a is leaving")
    assert.deepStrictEqual(
      launches(world.apply({ _tag: "ExecutorAdded", executorId: "b", host: "h2", cores: 1, now: 0 })),
      [
        [first, 2, "b", false]
      ]
    )
    world.now = 1000
    assert.deepStrictEqual(launches(world.report(runningIndex(world, first, 2), "FINISHED")), [], "before its kill")
    world.now = 5000
    assert.deepStrictEqual(launches(world.apply({ _tag: "ReviveOffers", now: world.now })), [[first, 1, "b", true]])
    // Whichever attempt ends first finishes the set; the decommissioned executor's is killed.
    const onA = runningIndex(world, first, 1)
    const copy = [...world.running].find(([, r]) => r.executorId === "b")![0]
    const done = world.report(copy, "FINISHED")
    assert.deepStrictEqual(done.filter((c) => c._tag === "KillTask").map((c) => c._tag === "KillTask" && c.taskId), [
      onA
    ])
    assert.isTrue(done.some((c) => c._tag === "TaskSetFinished"))
  })

  it("a stop or a decommission that comes after its task set or executor is gone changes nothing", () => {
    const world = new World(config())
    world.apply({ _tag: "ExecutorAdded", executorId: "a", host: "h1", cores: 1, now: 0 })
    world.submit(1)
    world.report([...world.running.keys()][0]!, "FINISHED")
    world.apply({ _tag: "ExecutorLost", executorId: "a", reason: "worker lost", now: 0 })
    assert.deepStrictEqual(world.apply({ _tag: "StopTaskSet", taskSet: first, now: 0 }), [])
    assert.deepStrictEqual(world.apply({ _tag: "ExecutorDecommissioned", executorId: "a", killAt: 0, now: 0 }), [])
  })

  it("an executor decommissioned without a kill time keeps its attempts and gets no copy of them", () => {
    const world = new World(config())
    world.apply({ _tag: "ExecutorAdded", executorId: "a", host: "h1", cores: 1, now: 0 })
    world.submit(1)
    world.decommissioned.add("a")
    world.apply({ _tag: "ExecutorDecommissioned", executorId: "a", killAt: undefined, now: 0 })
    world.apply({ _tag: "ExecutorAdded", executorId: "b", host: "h2", cores: 1, now: 0 })
    world.now = 1_000_000
    assert.deepStrictEqual(launches(world.apply({ _tag: "ReviveOffers", now: world.now })), [])
    assert.deepStrictEqual(TaskScheduler.runningOn(world.state, "a").length, 1)
  })

  it("reviving offers launches waiting work only; stragglers are looked for on the speculation check", () => {
    const world = straggling()
    assert.deepStrictEqual(launches(world.apply({ _tag: "ReviveOffers", now: world.now })), [])
    assert.deepStrictEqual(launches(world.apply({ _tag: "CheckSpeculation", now: world.now })), [[
      first,
      1,
      "b",
      true
    ]])
  })

  it("the seed decides how offers spread: seeds differ, and seed 0 shuffles too", () => {
    const firstExecutor = (world: World) => {
      const [launch] = launches(world.submit(1))
      world.report([...world.running.keys()][0]!, "FINISHED")
      return launch![2]
    }
    const cluster = (seed: number) => {
      const world = new World(config({ seed }))
      for (const id of ["a", "b", "c", "d"]) {
        world.apply({ _tag: "ExecutorAdded", executorId: id, host: id, cores: 1, now: 0 })
      }
      return world
    }
    const bySeed = new Set(Array.from({ length: 20 }, (_, seed) => firstExecutor(cluster(seed + 1))))
    assert.isAbove(bySeed.size, 1, "every seed offered the same executor first")
    const zero = cluster(0)
    const byRound = new Set(Array.from({ length: 20 }, () => firstExecutor(zero)))
    assert.isAbove(byRound.size, 1, "seed 0 offered the same executor first every round")
  })
})

describe("TaskScheduler, tasks queued on executors", () => {
  const launches = (commands: ReadonlyArray<TaskScheduler.Command>) =>
    commands.flatMap((c) => (c._tag === "LaunchTask" ? [[c.index, c.executorId]] : []))
  const kills = (commands: ReadonlyArray<TaskScheduler.Command>) =>
    commands.flatMap((c) => (c._tag === "KillTask" ? [[c.taskId, c.reason]] : []))
  const taskOf = (world: World, index: number) => [...world.running].find(([, a]) => a.index === index)![0]
  const queuedOn = (world: World, executorId: string) => world.state.executors.get(executorId)!.queued
  const firstSet = TaskSetId.key(TaskSetId.make(1, 0))
  // A set whose first task took 10 ms: its tasks are short, so the rest may be queued.
  const shortSet = (world: World, size: number) => {
    world.submit(size)
    world.now += 10
    return world.report(taskOf(world, 0), "FINISHED")
  }

  it("a set is queued once its tasks prove short: free cores everywhere first, then the queues, in order", () => {
    const world = new World(config({ queuedTasksPerCore: 2, seed: 3 }))
    world.apply({ _tag: "ExecutorAdded", executorId: "a", host: "h1", cores: 2, now: 0 })
    // Before any of its tasks has ended, a set takes free cores only: a's two.
    assert.deepStrictEqual(launches(world.submit(11)), [[0, "a"], [1, "a"]])
    assert.deepStrictEqual(queuedOn(world, "a"), [])
    // Task 0 took 10 ms: the core it freed takes task 2, and a's queue (2 per core) the next four.
    world.now = 10
    const short = world.report(taskOf(world, 0), "FINISHED")
    assert.deepStrictEqual(launches(short), [[2, "a"], [3, "a"], [4, "a"], [5, "a"], [6, "a"]])
    assert.strictEqual(queuedOn(world, "a").length, 4)
    // b joins with one core: the next task takes that core, and then b's queue two more; the last waits.
    world.apply({ _tag: "ExecutorAdded", executorId: "b", host: "h2", cores: 1, now: world.now })
    assert.deepStrictEqual(world.state.executors.get("b")!.freeCores, 0)
    assert.strictEqual(queuedOn(world, "b").length, 2)
    // A task of a ends: the oldest queued there takes its core (and runs from now), and the last task is sent.
    const [oldest] = queuedOn(world, "a")
    world.now = 20
    const refilled = world.report(taskOf(world, 1), "FINISHED")
    assert.strictEqual(world.state.attempts.get(oldest!)!.runningSince, 20)
    assert.deepStrictEqual(launches(refilled), [[10, "a"]])
    const sent = refilled.find((c) => c._tag === "LaunchTask")
    assert.strictEqual(queuedOn(world, "a").at(-1), sent?._tag === "LaunchTask" ? sent.taskId : undefined)
  })

  it("a set whose tasks mostly run long is not queued: a core that comes free elsewhere can take its tasks", () => {
    const world = new World(config({ queuedTasksPerCore: 2, queuedTaskMaxMillis: 50 }))
    world.apply({ _tag: "ExecutorAdded", executorId: "a", host: "h1", cores: 1, now: 0 })
    world.submit(4)
    world.now = 60
    assert.deepStrictEqual(launches(world.report(taskOf(world, 0), "FINISHED")), [[1, "a"]])
    assert.deepStrictEqual(queuedOn(world, "a"), [])
    // One short task of two is not most of them; a second short one is.
    world.now = 70
    assert.deepStrictEqual(launches(world.report(taskOf(world, 1), "FINISHED")), [[2, "a"]])
    world.now = 80
    assert.deepStrictEqual(launches(world.report(taskOf(world, 2), "FINISHED")), [[3, "a"]])
    assert.deepStrictEqual(queuedOn(world, "a"), [])
    assert.strictEqual(world.state.taskSets.get(firstSet)!.shortSuccesses, 2)
  })

  it("speculation: a task waiting for a core is no straggler; its running time counts from when it took one", () => {
    const world = new World(config({
      queuedTasksPerCore: 1,
      queuedTaskMaxMillis: 2000,
      speculation: { enabled: true, multiplier: 1.5, quantile: 0.5, minTaskRuntimeMillis: 100 }
    }))
    world.apply({ _tag: "ExecutorAdded", executorId: "a", host: "h1", cores: 1, now: 0 })
    world.apply({ _tag: "ExecutorAdded", executorId: "b", host: "h2", cores: 1, now: 0 })
    world.submit(6)
    // Tasks 0 and 1 take 1 s each; then each executor runs one task and has one queued.
    world.now = 1000
    world.report(taskOf(world, 0), "FINISHED")
    world.report(taskOf(world, 1), "FINISHED")
    assert.deepStrictEqual([queuedOn(world, "a").length, queuedOn(world, "b").length], [1, 1])
    const queued = [queuedOn(world, "a")[0]!, queuedOn(world, "b")[0]!]
    // The running two end at 1.2 s: the queued ones take their cores then. At 2.6 s they have run 1.4 s, under
    // 1.5 × the 1 s median, though 1.6 s have passed since their launch.
    world.now = 1200
    for (const taskId of [...world.running.keys()]) {
      if (!queued.includes(taskId)) world.report(taskId, "FINISHED")
    }
    assert.deepStrictEqual(queued.map((taskId) => world.state.attempts.get(taskId)!.runningSince), [1200, 1200])
    world.now = 2600
    assert.deepStrictEqual(launches(world.apply({ _tag: "CheckSpeculation", now: world.now })), [])
    // Past 1.5 s of running, they are stragglers; a copy takes a free core only, never a queue.
    world.now = 2800
    world.apply({ _tag: "CheckSpeculation", now: world.now })
    const onA = queued[0]!
    const ended = world.report(taskOf(world, world.running.get(queued[1]!)!.index), "FINISHED")
    const copy = ended.find((c) => c._tag === "LaunchTask")
    assert.deepStrictEqual(copy?._tag === "LaunchTask" && [copy.index, copy.executorId, copy.speculative], [
      world.running.get(onA)!.index,
      "b",
      true
    ])
  })

  it("a decommissioned executor's queued tasks are killed and run elsewhere, not counted as failures", () => {
    const world = new World(config({ queuedTasksPerCore: 1, maxFailures: 1 }))
    world.apply({ _tag: "ExecutorAdded", executorId: "a", host: "h1", cores: 1, now: 0 })
    shortSet(world, 3)
    const [queued] = queuedOn(world, "a")
    world.decommissioned.add("a")
    const decommission = world.apply({ _tag: "ExecutorDecommissioned", executorId: "a", killAt: undefined, now: 0 })
    assert.deepStrictEqual(kills(decommission), [[queued, "executor a is decommissioned"]])
    // Told again, it kills nothing twice.
    assert.deepStrictEqual(
      kills(world.apply({ _tag: "ExecutorDecommissioned", executorId: "a", killAt: 5000, now: 0 })),
      []
    )
    // The kill arrives: the task waits for another executor (with maxFailures 1, a failure would have failed the
    // set), while the task that runs on a goes on.
    const queuedIndex = world.running.get(queued!)!.index
    assert.deepStrictEqual(launches(world.report(queued!, "KILLED", "killed")), [])
    assert.deepStrictEqual(
      launches(world.apply({ _tag: "ExecutorAdded", executorId: "b", host: "h2", cores: 1, now: 0 })),
      [[queuedIndex, "b"]]
    )
    for (const taskId of [...world.running.keys()]) world.report(taskId, "FINISHED")
    assert.deepStrictEqual([...world.ended.values()], [["finished"]])
  })

  it("a queued task killed, or lost with its executor, frees its place in the queue, not a core", () => {
    const world = new World(config({ queuedTasksPerCore: 1 }))
    world.apply({ _tag: "ExecutorAdded", executorId: "a", host: "h1", cores: 1, now: 0 })
    shortSet(world, 3)
    const [queued] = queuedOn(world, "a")
    // The second set is short too, but waits: a's core and queue are taken.
    world.submit(1)
    // The first set's stage is cancelled: its queued task is killed with its running one, which keeps the core
    // until its end is reported.
    const cancelled = world.apply({ _tag: "CancelStage", stageId: 1, reason: "job cancelled", now: world.now })
    world.end(TaskSetId.make(1, 0), "cancelled")
    assert.includeDeepMembers(kills(cancelled), [[queued, "job cancelled"]])
    world.report(queued!, "KILLED", "killed")
    assert.strictEqual(world.state.executors.get("a")!.freeCores, 0)
    assert.deepStrictEqual(queuedOn(world, "a"), [])
    // The running task's kill arrives: the second set's task takes the core.
    assert.deepStrictEqual(launches(world.report([...world.running.keys()][0]!, "KILLED", "killed")), [[0, "a"]])
    // The executor is lost: everything on it runs again elsewhere without a failure.
    world.running.clear()
    world.apply({ _tag: "ExecutorLost", executorId: "a", reason: "worker lost", now: world.now })
    assert.deepStrictEqual(
      launches(world.apply({ _tag: "ExecutorAdded", executorId: "b", host: "h2", cores: 1, now: world.now })),
      [[0, "b"]]
    )
    assert.strictEqual(world.state.taskSets.get(TaskSetId.key(TaskSetId.make(2, 0)))!.tasks[0]!.failures, 0)
  })

  it("a fetch failure with tasks queued: the set launches nothing more; what was queued still runs and counts", () => {
    const world = new World(config({ queuedTasksPerCore: 2 }))
    world.apply({ _tag: "ExecutorAdded", executorId: "a", host: "h1", cores: 1, now: 0 })
    shortSet(world, 5)
    const [running, ...queued] = [[...world.running.keys()].find((id) => !queuedOn(world, "a").includes(id))!]
      .concat(queuedOn(world, "a"))
    assert.strictEqual(queued.length, 2)
    world.running.delete(running!)
    const failed = world.apply({
      _tag: "StatusUpdate",
      taskId: running!,
      state: "FAILED",
      reason: "fetch",
      fetchFailed: true,
      now: world.now
    })
    world.end(TaskSetId.make(1, 0), "stopped")
    // Nothing new is sent (task 4 never goes), and the queued attempts are not killed: a map output is an output.
    assert.deepStrictEqual(launches(failed), [])
    assert.deepStrictEqual(kills(failed), [])
    const ends = queued.map((taskId) => world.report(taskId, "FINISHED"))
    assert.deepStrictEqual(ends.map((commands) => commands.filter((c) => c._tag === "TaskSucceeded").length), [1, 1])
    assert.isFalse(world.state.taskSets.has(firstSet), "the zombie is forgotten after its last attempt")
  })
})
