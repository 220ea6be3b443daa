import { assert, describe, it } from "@effect/vitest"
import { DagScheduler } from "@kindling/driver"
import { FastCheck as fc } from "effect"

const config: DagScheduler.Config = { maxConsecutiveAttempts: 4, resubmitDelayMillis: 200 }

// A random DAG: shuffles whose parents are earlier shuffles, and jobs reading some of them.
interface Shape {
  readonly shuffles: ReadonlyArray<{ readonly maps: number; readonly reduces: number; readonly parents: Array<number> }>
}

const shape: fc.Arbitrary<Shape> = fc.integer({ min: 0, max: 5 }).chain((n) =>
  fc.tuple(
    ...Array.from({ length: n }, (_, i) =>
      fc.record({
        maps: fc.integer({ min: 1, max: 3 }),
        reduces: fc.integer({ min: 1, max: 3 }),
        parents: fc.subarray(Array.from({ length: i }, (_, j) => j), { maxLength: Math.min(2, i) })
      }))
  ).map((shuffles) => ({ shuffles }))
)

const task = { bytes: new Uint8Array([0]), needs: { persisted: [], shuffleReads: [], broadcasts: [] } }

// A task's success as the task scheduler reports it; a map task writes 1 byte for its one reduce partition.
const succeeded = (
  stageId: number,
  stageAttempt: number,
  partition: number,
  executorId: string,
  now = 0
): DagScheduler.Input => ({ _tag: "TaskSucceeded", stageId, stageAttempt, partition, executorId, sizes: [1], now })

// A task of the stage attempt could not fetch map output `mapIndex` of shuffle 0 from the executor (if it knows it).
const fetchFailed = (
  stageId: number,
  stageAttempt: number,
  mapIndex: number,
  executorId: string | undefined
): DagScheduler.Input => ({
  _tag: "FetchFailed",
  stageId,
  stageAttempt,
  shuffleId: 0,
  mapIndex,
  executorId,
  message: "gone",
  now: 0
})

// Drives the core as the driver does, standing in for the task scheduler: task sets run task by task, in an
// order the test picks; checks the invariants after every step.
class World {
  readonly state = DagScheduler.make(config)
  now = 0
  nextJob = 0
  /** Running task sets: stage, attempt, partitions not yet reported. */
  readonly taskSets: Array<{ stageId: number; attempt: number; pending: Array<number>; stopped: boolean }> = []
  readonly ended = new Map<number, Array<string>>()
  /** How the event stream told each job's end (JobEnded), which must be how the job ended. */
  readonly eventEnds = new Map<number, string>()
  readonly results = new Map<number, Set<number>>()
  readonly jobTasks = new Map<number, number>()
  resubmitDue = false
  readonly executors = ["exec-0", "exec-1", "exec-2"]
  /** How many times each stage attempt (`stage.attempt`) submitted has completed. */
  readonly attempts = new Map<string, number>()

  constructor(readonly shape: Shape) {}

  apply(input: DagScheduler.Input) {
    for (const command of DagScheduler.step(this.state, input)) {
      switch (command._tag) {
        case "SubmitTaskSet": {
          // No stage runs before its parents' outputs are all there.
          const stage = this.state.stages.get(command.stageId)!
          for (const parent of stage.parents) {
            const shuffleId = this.state.stages.get(parent)!.shuffleId!
            assert.isTrue(
              DagScheduler.isAvailable(this.state, shuffleId),
              `stage ${stage.id} before its parent ${parent}`
            )
          }
          assert.isAbove(command.partitions.length, 0)
          // Its tasks find every map output of what they read, where it was written.
          for (const parent of stage.parents) {
            const shuffleId = this.state.stages.get(parent)!.shuffleId!
            const found = DagScheduler.locations(this.state, shuffleId, 0)
            assert.strictEqual(found._tag, "Found")
            const blocks = found._tag === "Found" ? found.blocks : []
            assert.strictEqual(blocks.length, this.state.shuffles.get(shuffleId)!.outputs.length)
            for (const [mapIndex, block] of blocks.entries()) {
              assert.deepInclude(DagScheduler.outputsOn(this.state, block.executorId), { shuffleId, mapIndex })
            }
          }
          this.taskSets.push({
            stageId: command.stageId,
            attempt: command.stageAttempt,
            pending: [...command.partitions],
            stopped: false
          })
          break
        }
        case "CancelStage":
          for (const set of this.taskSets) if (set.stageId === command.stageId) set.pending = []
          break
        case "StopStageAttempt":
          for (const set of this.taskSets) {
            if (set.stageId === command.stageId && set.attempt === command.stageAttempt) set.stopped = true
          }
          break
        case "ResultTask": {
          const done = this.results.get(command.jobId) ?? new Set()
          assert.isFalse(done.has(command.index), `job ${command.jobId} got result ${command.index} twice`)
          done.add(command.index)
          this.results.set(command.jobId, done)
          break
        }
        case "JobSucceeded":
        case "JobFailed": {
          const ends = this.ended.get(command.jobId) ?? []
          ends.push(command._tag)
          this.ended.set(command.jobId, ends)
          assert.strictEqual(ends.length, 1, `job ${command.jobId} ended ${ends.join(", ")}`)
          if (command._tag === "JobSucceeded") {
            assert.strictEqual(this.results.get(command.jobId)?.size ?? 0, this.jobTasks.get(command.jobId))
          }
          break
        }
        case "ScheduleResubmit":
          this.resubmitDue = true
          break
        case "StageSubmitted": {
          const key = `${command.stageId}.${command.stageAttempt}`
          assert.isFalse(this.attempts.has(key), `stage ${key} submitted twice`)
          this.attempts.set(key, 0)
          break
        }
        case "StageCompleted": {
          // An attempt completes once, and it is the one that was submitted (a late task of an earlier attempt
          // that finishes the stage completes the latest attempt, not its own again).
          const key = `${command.stageId}.${command.stageAttempt}`
          assert.strictEqual(this.attempts.get(key), 0, `stage ${key} completes, but it is not a running attempt`)
          this.attempts.set(key, 1)
          break
        }
        case "JobEnded":
          assert.isFalse(this.eventEnds.has(command.jobId), `job ${command.jobId} ended twice in the event stream`)
          this.eventEnds.set(command.jobId, command.succeeded ? "JobSucceeded" : "JobFailed")
          break
        case "TaskCounted":
        case "JobStarted":
        case "Log":
          break
        default:
          // The driver acts on every command; one it cannot read would be dropped silently.
          assert.fail(`a command the driver cannot read: ${JSON.stringify(command)}`)
      }
    }
    for (const [jobId, ends] of this.ended) assert.strictEqual(this.eventEnds.get(jobId), ends[0], `job ${jobId}'s end`)
    assert.deepStrictEqual(DagScheduler.validate(this.state), [])
  }

  // Every shuffle of the shape the job needs, parents included.
  submit(reads: Array<number>, tasks: number) {
    const needed = new Set<number>()
    const visit = (id: number) => {
      if (needed.has(id)) return
      needed.add(id)
      this.shape.shuffles[id]!.parents.forEach(visit)
    }
    reads.forEach(visit)
    const jobId = this.nextJob++
    this.jobTasks.set(jobId, tasks)
    this.apply({
      _tag: "SubmitJob",
      job: {
        jobId,
        tasks: Array.from({ length: tasks }, () => task),
        preferredBlocks: [],
        parents: reads,
        shuffles: [...needed].map((id) => {
          const spec = this.shape.shuffles[id]!
          return {
            shuffleId: id,
            numReduces: spec.reduces,
            mapTasks: Array.from({ length: spec.maps }, () => task),
            preferredBlocks: [],
            parents: spec.parents,
            name: "shuffle"
          }
        }),
        pool: "default",
        name: "collect"
      },
      now: this.now
    })
  }

  // A task of attempt `stageAttempt` of the stage cannot fetch the first map output of shuffle 0 from exec-0.
  fetchFails(stageId: number, stageAttempt: number) {
    this.apply({
      _tag: "FetchFailed",
      stageId,
      stageAttempt,
      shuffleId: 0,
      mapIndex: 0,
      executorId: "exec-0",
      message: "gone",
      now: this.now
    })
  }

  // A task of a running set ends: success on an executor, or (for a stage reading a shuffle) a fetch failure.
  finishTask(pick: number, executor: number, fetchFails: boolean) {
    const live = this.taskSets.filter((set) => set.pending.length > 0)
    if (live.length === 0) return
    const set = live[pick % live.length]!
    const partition = set.pending.splice(pick % set.pending.length, 1)[0]!
    const stage = this.state.stages.get(set.stageId)
    if (stage === undefined) return
    const executorId = this.executors[executor % this.executors.length]!
    if (fetchFails && stage.parents.length > 0) {
      const shuffleId = this.state.stages.get(stage.parents[0]!)!.shuffleId!
      this.apply({
        _tag: "FetchFailed",
        stageId: stage.id,
        stageAttempt: set.attempt,
        shuffleId,
        mapIndex: 0,
        executorId: this.state.shuffles.get(shuffleId)?.outputs[0]?.executorId,
        message: "connection refused",
        now: this.now
      })
      // The attempt's other tasks run on (they may still finish, as late successes of an attempt given up on).
      return
    }
    this.apply({
      _tag: "TaskSucceeded",
      stageId: set.stageId,
      stageAttempt: set.attempt,
      partition,
      executorId,
      ...(stage.shuffleId === undefined
        ? {}
        : { sizes: Array.from({ length: this.state.shuffles.get(stage.shuffleId)!.numReduces }, () => 10) }),
      now: this.now
    })
  }
}

type Op = (world: World) => void

const operation: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.tuple(fc.array(fc.nat(), { maxLength: 2 }), fc.integer({ min: 0, max: 3 })).map(
      ([reads, tasks]): Op => (world) => {
        const n = world.shape.shuffles.length
        world.submit(n === 0 ? [] : [...new Set(reads.map((r) => r % n))], tasks)
      }
    )
  },
  {
    weight: 6,
    arbitrary: fc.tuple(fc.nat(), fc.nat(), fc.integer({ min: 0, max: 3 })).map(
      ([pick, executor, roll]): Op => (world) => world.finishTask(pick, executor, roll === 0)
    )
  },
  {
    weight: 1,
    // With a shuffle service its outputs outlive it; without, they go with it.
    arbitrary: fc.tuple(fc.nat(), fc.boolean()).map(([n, outputsLost]): Op => (world) => {
      const executorId = world.executors[n % 3]!
      const before = DagScheduler.outputsOn(world.state, executorId)
      const available = before.map(({ shuffleId }) => DagScheduler.isAvailable(world.state, shuffleId))
      world.apply({ _tag: "ExecutorLost", executorId, outputsLost, now: world.now })
      assert.deepStrictEqual(DagScheduler.outputsOn(world.state, executorId), outputsLost ? [] : before)
      assert.deepStrictEqual(
        before.map(({ shuffleId }) => DagScheduler.isAvailable(world.state, shuffleId)),
        outputsLost ? before.map(() => false) : available
      )
    })
  },
  {
    weight: 1,
    // A decommissioning executor's map output copied to another: served from there, unless it changed since.
    arbitrary: fc.tuple(fc.nat(), fc.nat(), fc.boolean()).map(([n, m, current]): Op => (world) => {
      const from = world.executors[n % 3]!
      const to = world.executors[(n + 1) % 3]!
      const outputs = DagScheduler.outputsOn(world.state, from)
      if (outputs.length === 0) return
      const { mapIndex, shuffleId } = outputs[m % outputs.length]!
      const moved = { _tag: "MapOutputMoved", shuffleId, mapIndex, to, now: world.now } as const
      world.apply({ ...moved, from: current ? from : to })
      assert.strictEqual(
        DagScheduler.outputsOn(world.state, to).some((o) => o.shuffleId === shuffleId && o.mapIndex === mapIndex),
        current
      )
    })
  },
  {
    weight: 1,
    arbitrary: fc.constant<Op>((world) => {
      world.now += 200
      if (world.resubmitDue) {
        world.resubmitDue = false
        world.apply({ _tag: "ResubmitFailedStages", now: world.now })
      }
    })
  },
  {
    weight: 1,
    arbitrary: fc.nat().map((n): Op => (world) => {
      const open = [...world.state.jobs.keys()]
      if (open.length > 0) {
        const jobId = open[n % open.length]!
        world.apply({ _tag: "CancelJob", jobId, reason: "cancelled", now: world.now })
        assert.deepStrictEqual(world.ended.get(jobId), ["JobFailed"])
      }
    })
  },
  {
    weight: 1,
    arbitrary: fc.nat().map((n): Op => (world) => {
      const stages = [...world.state.running]
      if (stages.length > 0) {
        const stageId = stages[n % stages.length]!
        // Every job that needs the stage fails with it.
        const jobs = [...world.state.stages.get(stageId)!.jobIds]
        world.apply({ _tag: "StageAborted", stageId, reason: "boom", now: world.now })
        for (const jobId of jobs) assert.deepStrictEqual(world.ended.get(jobId), ["JobFailed"])
      }
    })
  }
)

describe("DagScheduler", () => {
  it("model: random DAGs, completions, fetch failures and executor losses keep every invariant; every job ends exactly once, every stage attempt completes exactly once", () => {
    fc.assert(
      fc.property(shape, fc.array(operation, { minLength: 20, maxLength: 150, size: "max" }), (dag, ops) => {
        const world = new World(dag)
        for (const op of ops) op(world)
        // Then nothing fails any more: every task set runs to its end, resubmissions happen, until all is done.
        for (let rounds = 0; world.state.jobs.size > 0; rounds++) {
          assert.isBelow(rounds, 10_000, "jobs never ended")
          if (world.taskSets.some((set) => set.pending.length > 0)) world.finishTask(rounds, rounds, false)
          else {
            world.now += 200
            world.resubmitDue = false
            world.apply({ _tag: "ResubmitFailedStages", now: world.now })
            if (world.taskSets.every((set) => set.pending.length === 0) && world.state.jobs.size > 0) {
              assert.fail(
                `stuck with jobs ${[...world.state.jobs.keys()]}: ${JSON.stringify([...world.state.waiting])}`
              )
            }
          }
        }
        for (let jobId = 0; jobId < world.nextJob; jobId++) assert.strictEqual(world.ended.get(jobId)?.length, 1)
        assert.strictEqual(world.eventEnds.size, world.nextJob, "a job ended without its end in the event stream")
        assert.strictEqual(world.state.running.size + world.state.waiting.size + world.state.failed.size, 0)
        for (const [attempt, ends] of world.attempts) assert.strictEqual(ends, 1, `stage ${attempt} never completed`)
      }),
      { numRuns: 300 }
    )
  })

  it("a shuffle done by one job is skipped by the next: only the result stage runs", () => {
    const world = new World({ shuffles: [{ maps: 2, reduces: 2, parents: [] }] })
    world.submit([0], 2)
    for (let i = 0; i < 4; i++) world.finishTask(0, i, false)
    assert.deepStrictEqual(world.ended.get(0), ["JobSucceeded"])
    const before = world.taskSets.length
    world.submit([0], 2)
    assert.strictEqual(world.taskSets.length, before + 1, "one task set: the result stage's")
    const resultSet = world.taskSets.at(-1)!
    assert.isUndefined(world.state.stages.get(resultSet.stageId)!.shuffleId)
  })

  it("a fetch failure resubmits the map partition after the delay; four in a row abort the job", () => {
    const world = new World({ shuffles: [{ maps: 2, reduces: 1, parents: [] }] })
    world.submit([0], 1)
    world.finishTask(0, 0, false)
    world.finishTask(0, 1, false)
    for (let attempt = 0; attempt < 4; attempt++) {
      assert.isFalse(world.ended.has(0))
      world.finishTask(0, 0, true)
      assert.isTrue(world.state.failed.size > 0 || world.ended.has(0))
      world.apply({ _tag: "ResubmitFailedStages", now: world.now })
      // The lost map partition runs again, alone.
      const mapSet = world.taskSets.at(-1)!
      if (!world.ended.has(0)) {
        assert.deepStrictEqual(mapSet.pending, [0])
        world.finishTask(world.taskSets.indexOf(mapSet), 0, false)
      }
    }
    assert.deepStrictEqual(world.ended.get(0), ["JobFailed"])
  })

  // Found by the simulated cluster (seed 173): the late success that finished a stage completed the attempt it
  // came from — given up on already — and the running attempt never completed, in the app's event stream.
  it("a late success of an attempt given up on that finishes the stage completes the latest attempt", () => {
    const world = new World({ shuffles: [{ maps: 1, reduces: 1, parents: [] }] })
    world.submit([0], 2)
    world.finishTask(0, 0, false)
    const result = world.taskSets.at(-1)!
    // Partition 0 of attempt 0 cannot fetch; partition 1 of attempt 0 runs on.
    world.fetchFails(result.stageId, 0)
    world.apply({ _tag: "ResubmitFailedStages", now: (world.now += 200) })
    // The lost map output is computed again, and the result stage's next attempt starts.
    const map = world.taskSets.at(-1)!
    assert.strictEqual(map.stageId, 0)
    world.apply({
      _tag: "TaskSucceeded",
      stageId: 0,
      stageAttempt: map.attempt,
      partition: 0,
      executorId: "exec-1",
      sizes: [10],
      now: world.now
    })
    const again = world.taskSets.at(-1)!
    assert.deepStrictEqual([again.stageId, again.attempt], [result.stageId, 1])
    world.apply({
      _tag: "TaskSucceeded",
      stageId: result.stageId,
      stageAttempt: 1,
      partition: 0,
      executorId: "exec-1",
      now: world.now
    })
    world.apply({
      _tag: "TaskSucceeded",
      stageId: result.stageId,
      stageAttempt: 0,
      partition: 1,
      executorId: "exec-1",
      now: world.now
    })
    assert.deepStrictEqual(world.ended.get(0), ["JobSucceeded"])
    assert.strictEqual(world.attempts.get(`${result.stageId}.1`), 1)
  })

  // Found by the simulated cluster (seed 344): a task of an attempt given up on finished the job before the stage
  // was resubmitted; that attempt completed a second time.
  it("a job finished by a late success while its stage waits to be resubmitted completes no attempt again", () => {
    const world = new World({ shuffles: [{ maps: 1, reduces: 1, parents: [] }] })
    world.submit([0], 1)
    world.finishTask(0, 0, false)
    const result = world.taskSets.at(-1)!
    // A speculative copy of the result task cannot fetch; the original runs on and finishes the job.
    world.fetchFails(result.stageId, 0)
    world.apply({
      _tag: "TaskSucceeded",
      stageId: result.stageId,
      stageAttempt: 0,
      partition: 0,
      executorId: "exec-1",
      now: world.now
    })
    assert.deepStrictEqual(world.ended.get(0), ["JobSucceeded"])
    assert.strictEqual(world.attempts.get(`${result.stageId}.0`), 1)
    assert.strictEqual(world.state.failed.size, 0)
  })

  it("cancelling or aborting ends the jobs concerned with the reason; unknown ones change nothing", () => {
    const world = new World({ shuffles: [{ maps: 1, reduces: 1, parents: [] }] })
    world.submit([0], 1)
    world.submit([0], 1)
    const mapStage = world.taskSets[0]!.stageId
    const step = (input: DagScheduler.Input) =>
      DagScheduler.step(world.state, input).flatMap((c) => (c._tag === "JobFailed" ? [[c.jobId, c.reason]] : []))
    assert.deepStrictEqual(step({ _tag: "CancelJob", jobId: 7, reason: "no such job", now: 0 }), [])
    assert.deepStrictEqual(step({ _tag: "StageAborted", stageId: 99, reason: "no such stage", now: 0 }), [])
    assert.deepStrictEqual(step({ _tag: "CancelJob", jobId: 0, reason: "cancelled by the user", now: 0 }), [
      [0, "cancelled by the user"]
    ])
    assert.deepStrictEqual(step({ _tag: "StageAborted", stageId: mapStage, reason: "Task 0 failed", now: 0 }), [
      [1, "Job aborted due to stage failure: Task 0 failed"]
    ])
    assert.strictEqual(world.state.jobs.size, 0)
  })

  it("map outputs: where each is, what a lost executor takes, what a move changes, who holds a running job's", () => {
    const world = new World({ shuffles: [{ maps: 2, reduces: 2, parents: [] }] })
    assert.deepStrictEqual(DagScheduler.locations(world.state, 0, 0), { _tag: "Missing", mapIndex: 0 })
    world.submit([0], 1)
    const mapStage = world.taskSets[0]!.stageId
    assert.deepStrictEqual(DagScheduler.task(world.state, mapStage, 1), task)
    assert.isUndefined(DagScheduler.task(world.state, 99, 0))
    for (const [partition, executorId, sizes] of [[1, "exec-1", [7, 0]], [0, "exec-0", [3, 4]]] as const) {
      assert.deepStrictEqual(DagScheduler.locations(world.state, 0, 1), { _tag: "Missing", mapIndex: 0 })
      world.apply({ _tag: "TaskSucceeded", stageId: mapStage, stageAttempt: 0, partition, executorId, sizes, now: 0 })
    }
    assert.deepStrictEqual(DagScheduler.locations(world.state, 0, 1), {
      _tag: "Found",
      blocks: [{ executorId: "exec-0", size: 4 }, { executorId: "exec-1", size: 0 }]
    })
    assert.deepStrictEqual(DagScheduler.activeShuffleHolders(world.state), new Set(["exec-0", "exec-1"]))
    // Moved off exec-1 (decommissioned), its output is served by exec-2; a second report of that move is stale.
    world.apply({ _tag: "MapOutputMoved", shuffleId: 0, mapIndex: 1, from: "exec-1", to: "exec-2", now: 0 })
    world.apply({ _tag: "MapOutputMoved", shuffleId: 0, mapIndex: 1, from: "exec-1", to: "exec-0", now: 0 })
    assert.deepStrictEqual(DagScheduler.outputsOn(world.state, "exec-2"), [{ shuffleId: 0, mapIndex: 1 }])
    // Served by a shuffle service, exec-0's output outlives it; otherwise it goes with it.
    world.apply({ _tag: "ExecutorLost", executorId: "exec-0", outputsLost: false, now: 0 })
    assert.isTrue(DagScheduler.isAvailable(world.state, 0))
    world.apply({ _tag: "ExecutorLost", executorId: "exec-0", outputsLost: true, now: 0 })
    assert.deepStrictEqual(DagScheduler.locations(world.state, 0, 0), { _tag: "Missing", mapIndex: 0 })
    // A move told after the output was lost, or of a shuffle this driver does not have, is stale too.
    world.apply({ _tag: "MapOutputMoved", shuffleId: 0, mapIndex: 0, from: "exec-0", to: "exec-1", now: 0 })
    world.apply({ _tag: "MapOutputMoved", shuffleId: 9, mapIndex: 0, from: "exec-0", to: "exec-1", now: 0 })
    assert.deepStrictEqual(DagScheduler.locations(world.state, 0, 0), { _tag: "Missing", mapIndex: 0 })
    assert.deepStrictEqual(DagScheduler.activeShuffleHolders(world.state), new Set(["exec-2"]))
    world.apply({ _tag: "CancelJob", jobId: 0, reason: "done with it", now: 0 })
    assert.deepStrictEqual(DagScheduler.activeShuffleHolders(world.state), new Set())
  })

  // Two maps on exec-0 and one on exec-1, then a reduce stage reading them: the failure named in `fetch`.
  const fetchFailureWorld = () => {
    const world = new World({ shuffles: [{ maps: 3, reduces: 1, parents: [] }] })
    world.submit([0], 1)
    const mapStage = world.taskSets[0]!.stageId
    for (const [partition, executorId] of [[0, "exec-0"], [1, "exec-0"], [2, "exec-1"]] as const) {
      world.apply(succeeded(mapStage, 0, partition, executorId))
    }
    const reduceStage = world.taskSets.at(-1)!.stageId
    const fetch = (executorId: string | undefined, mapIndex: number, stageAttempt = 0) =>
      world.apply(fetchFailed(reduceStage, stageAttempt, mapIndex, executorId))
    return { world, mapStage, reduceStage, fetch }
  }

  it("a fetch failure that names no executor unregisters that map output only; one that does, all of the executor's", () => {
    const unnamed = fetchFailureWorld()
    unnamed.fetch(undefined, 0)
    assert.deepStrictEqual(DagScheduler.outputsOn(unnamed.world.state, "exec-0"), [{ shuffleId: 0, mapIndex: 1 }])
    assert.deepStrictEqual(DagScheduler.outputsOn(unnamed.world.state, "exec-1"), [{ shuffleId: 0, mapIndex: 2 }])
    const named = fetchFailureWorld()
    named.fetch("exec-0", 0)
    assert.deepStrictEqual(DagScheduler.outputsOn(named.world.state, "exec-0"), [])
    assert.deepStrictEqual(DagScheduler.outputsOn(named.world.state, "exec-1"), [{ shuffleId: 0, mapIndex: 2 }])
    // Both stages wait to be resubmitted together, after the delay asked once; then the lost maps run again.
    named.world.apply({ _tag: "ResubmitFailedStages", now: 200 })
    assert.deepStrictEqual(named.world.taskSets.at(-1)!.pending, [0, 1])
    assert.strictEqual(named.world.taskSets.at(-1)!.stageId, named.mapStage)
  })

  it("a fetch failure naming an executor where the output no longer is keeps that output; a second of the attempt asks no second resubmission", () => {
    const { world, fetch, reduceStage } = fetchFailureWorld()
    // Map 2 is on exec-1: a report that it could not be fetched from exec-2 is about a copy no longer listed.
    fetch("exec-2", 2)
    assert.deepStrictEqual(DagScheduler.outputsOn(world.state, "exec-1"), [{ shuffleId: 0, mapIndex: 2 }])
    assert.isTrue(world.state.failed.has(reduceStage))
    // Another task of the same attempt fails on exec-0: its outputs go, and the resubmission already due serves.
    const resubmits = DagScheduler.step(world.state, fetchFailed(reduceStage, 0, 0, "exec-0")).filter((c) =>
      c._tag === "ScheduleResubmit"
    )
    assert.deepStrictEqual(resubmits, [])
    assert.deepStrictEqual(DagScheduler.outputsOn(world.state, "exec-0"), [])
  })

  it("an executor's outputs are unregistered once per failure: a report from an attempt older than it takes only its own output", () => {
    // Two jobs read the same shuffle; their result stages start in the same epoch.
    const world = new World({ shuffles: [{ maps: 2, reduces: 1, parents: [] }] })
    world.submit([0], 1)
    world.submit([0], 1)
    const mapStage = world.taskSets[0]!.stageId
    const mapsOnExec0 = (stageAttempt: number) => {
      for (const partition of [0, 1]) {
        world.apply(succeeded(mapStage, stageAttempt, partition, "exec-0"))
      }
    }
    mapsOnExec0(0)
    const [first, second] = world.taskSets.slice(-2).map((set) => set.stageId)
    const fetchFails = (stageId: number) => world.apply(fetchFailed(stageId, 0, 0, "exec-0"))
    fetchFails(first!)
    assert.deepStrictEqual(DagScheduler.outputsOn(world.state, "exec-0"), [])
    world.apply({ _tag: "ResubmitFailedStages", now: 200 })
    // The maps run again on exec-0, which is back: their new outputs are there.
    mapsOnExec0(1)
    // The other stage's attempt, started before that failure, reports the same loss: only the output it names goes.
    fetchFails(second!)
    assert.deepStrictEqual(DagScheduler.outputsOn(world.state, "exec-0"), [{ shuffleId: 0, mapIndex: 1 }])
  })

  it("a map task's success from an executor lost since its attempt began is not taken; the stage runs that partition again", () => {
    const world = new World({ shuffles: [{ maps: 2, reduces: 1, parents: [] }] })
    world.submit([0], 1)
    const mapStage = world.taskSets[0]!.stageId
    const succeeds = (partition: number, executorId: string) =>
      world.apply(succeeded(mapStage, 0, partition, executorId))
    succeeds(0, "exec-1")
    world.apply({ _tag: "ExecutorLost", executorId: "exec-0", outputsLost: true, now: 0 })
    succeeds(1, "exec-0")
    assert.deepStrictEqual(DagScheduler.outputsOn(world.state, "exec-0"), [])
    const again = world.taskSets.at(-1)!
    assert.deepStrictEqual([again.stageId, again.attempt, again.pending], [mapStage, 1, [1]])
  })

  it("outputs lost while their stage ran are run again when it ends, before any stage reading them", () => {
    const world = new World({ shuffles: [{ maps: 2, reduces: 1, parents: [] }] })
    world.submit([0], 1)
    const mapStage = world.taskSets[0]!.stageId
    world.apply(succeeded(mapStage, 0, 0, "exec-0"))
    world.apply({ _tag: "ExecutorLost", executorId: "exec-0", outputsLost: true, now: 0 })
    world.apply(succeeded(mapStage, 0, 1, "exec-1"))
    assert.deepStrictEqual(world.taskSets.map((set) => [set.stageId, set.attempt]), [[mapStage, 0], [mapStage, 1]])
    assert.deepStrictEqual(world.taskSets.at(-1)!.pending, [0])
  })

  it("a job of no tasks starts and succeeds at once, with no stage; a job's start lists its stages, parents first", () => {
    const state = DagScheduler.make(config)
    const job = (jobId: number, tasks: number): DagScheduler.Input => ({
      _tag: "SubmitJob",
      job: {
        jobId,
        tasks: Array.from({ length: tasks }, () => task),
        preferredBlocks: [],
        parents: tasks === 0 ? [] : [0],
        shuffles: tasks === 0
          ? []
          : [{ shuffleId: 0, numReduces: 1, mapTasks: [task], preferredBlocks: [], parents: [], name: "map" }],
        pool: "default",
        name: "collect"
      },
      now: 0
    })
    const events = (commands: ReadonlyArray<DagScheduler.Command>) =>
      commands.filter((c) => c._tag === "JobStarted" || c._tag === "JobEnded" || c._tag === "JobSucceeded")
    assert.deepStrictEqual(events(DagScheduler.step(state, job(0, 0))), [
      { _tag: "JobStarted", jobId: 0, stageIds: [], stages: [] },
      { _tag: "JobEnded", jobId: 0, succeeded: true },
      { _tag: "JobSucceeded", jobId: 0 }
    ])
    assert.deepStrictEqual(events(DagScheduler.step(state, job(1, 2))), [{
      _tag: "JobStarted",
      jobId: 1,
      stageIds: [0, 1],
      stages: [
        { stageId: 0, name: "map", details: "", numTasks: 1, parentIds: [], datasets: [] },
        { stageId: 1, name: "collect", details: "", numTasks: 2, parentIds: [0], datasets: [] }
      ]
    }])
  })

  it("validate names each broken invariant", () => {
    const broken = (breakIt: (state: DagScheduler.State) => void) => {
      const world = new World({ shuffles: [{ maps: 1, reduces: 1, parents: [] }] })
      world.submit([0], 1)
      assert.deepStrictEqual(DagScheduler.validate(world.state), [])
      breakIt(world.state)
      return DagScheduler.validate(world.state)
    }
    // Stage 0 maps (running), stage 1 is job 0's result stage (waiting for it).
    assert.deepStrictEqual(broken((state) => state.running.add(1)), [
      "stage 1 is in 2 of the waiting, running and failed sets"
    ])
    assert.deepStrictEqual(broken((state) => state.waiting.delete(1)), ["result stage 1 is in no set"])
    assert.deepStrictEqual(broken((state) => state.stages.get(0)!.jobIds.clear()), [
      "stage 0 is kept for no job",
      "job 0 lost stage 0"
    ])
    assert.deepStrictEqual(broken((state) => state.stages.get(0)!.jobIds.add(7)), ["stage 0 is kept for ended job 7"])
    assert.deepStrictEqual(broken((state) => state.stages.delete(0)), [
      "stage 1 lost its parent stage 0",
      "unknown stage 0 in a stage set",
      "job 0 lost stage 0",
      "shuffle 0 maps to a wrong stage"
    ])
    assert.deepStrictEqual(broken((state) => state.jobs.get(0)!.numFinished++), ["job 0 miscounts"])
  })

  it("a fetch failure asks for one resubmission after the delay; a late one from an attempt given up on changes nothing", () => {
    const { world, fetch, mapStage } = fetchFailureWorld()
    const first = DagScheduler.step(world.state, fetchFailed(world.taskSets.at(-1)!.stageId, 0, 2, "exec-1"))
    assert.deepStrictEqual(first.filter((c) => c._tag === "ScheduleResubmit"), [
      { _tag: "ScheduleResubmit", delayMillis: 200 }
    ])
    world.apply({ _tag: "ResubmitFailedStages", now: 200 })
    world.apply(succeeded(mapStage, 1, 2, "exec-2", 200))
    // The stage is on its second attempt: a failure told now by a task of its first is late.
    const outputs = DagScheduler.outputsOn(world.state, "exec-0")
    const failed = [...world.state.failed]
    fetch("exec-0", 0, 0)
    assert.deepStrictEqual([DagScheduler.outputsOn(world.state, "exec-0"), [...world.state.failed]], [outputs, failed])
  })

  it("a stage two jobs need runs for the earliest of them still running: its job id and pool", () => {
    const state = DagScheduler.make(config)
    const submitJob = (jobId: number, pool: string) =>
      DagScheduler.step(state, {
        _tag: "SubmitJob",
        job: {
          jobId,
          tasks: [task],
          preferredBlocks: [],
          parents: [0],
          shuffles: [{ shuffleId: 0, numReduces: 1, mapTasks: [task], preferredBlocks: [], parents: [], name: "map" }],
          pool,
          name: "collect"
        },
        now: 0
      })
    const taskSets = (commands: ReadonlyArray<DagScheduler.Command>) =>
      commands.flatMap((c) => (c._tag === "SubmitTaskSet" ? [[c.stageId, c.jobId, c.pool]] : []))
    assert.deepStrictEqual(taskSets(submitJob(0, "etl")), [[0, 0, "etl"]])
    submitJob(1, "adhoc")
    const done = DagScheduler.step(state, succeeded(0, 0, 0, "exec-0"))
    assert.deepStrictEqual(taskSets(done), [[1, 0, "etl"], [2, 1, "adhoc"]])
    // Job 1's stage loses the map output: the map stage runs again, still for job 0, in its pool.
    DagScheduler.step(state, fetchFailed(2, 0, 0, "exec-0"))
    const resubmitted = DagScheduler.step(state, { _tag: "ResubmitFailedStages", now: 200 })
    assert.deepStrictEqual(taskSets(resubmitted), [[0, 0, "etl"]])
  })

  it("a job's end cancels the stages only it needed, with its reason; late successes of them, or a second of a partition, change nothing", () => {
    const world = new World({ shuffles: [{ maps: 1, reduces: 1, parents: [] }] })
    world.submit([0], 2)
    const mapStage = world.taskSets[0]!.stageId
    world.apply(succeeded(mapStage, 0, 0, "exec-0"))
    const resultStage = world.taskSets.at(-1)!.stageId
    const succeeds = (stageId: number, partition: number) =>
      DagScheduler.step(world.state, succeeded(stageId, 0, partition, "exec-1")).filter((c) => c._tag !== "Log")
    assert.deepStrictEqual(succeeds(resultStage, 0).map((c) => c._tag), ["TaskCounted", "ResultTask"])
    // The same partition again (a speculative copy, say): no second result.
    assert.deepStrictEqual(succeeds(resultStage, 0), [])
    const cancelled = DagScheduler.step(world.state, { _tag: "CancelJob", jobId: 0, reason: "cancelled", now: 0 })
    assert.deepStrictEqual(
      cancelled.flatMap((c) => (c._tag === "CancelStage" ? [[c.stageId, c.reason]] : [])),
      [[mapStage, "cancelled"], [resultStage, "cancelled"]]
    )
    assert.deepStrictEqual([succeeds(resultStage, 1), succeeds(mapStage, 0)], [[], []])
    assert.deepStrictEqual(DagScheduler.validate(world.state), [])
  })
})
