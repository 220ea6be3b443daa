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
      }
    }
    assert.deepStrictEqual(TaskScheduler.validate(this.state), [])
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
    world.apply({ _tag: "ExecutorLost", executorId: `exec-${n}`, reason: "lost", now: world.now })
  }),
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
        (ops, speculation, seed) => {
          const world = new World(config({
            seed,
            speculation: { enabled: speculation, multiplier: 1.5, quantile: 0.5, minTaskRuntimeMillis: 100 }
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
