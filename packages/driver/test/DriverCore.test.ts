import { assert, describe, it } from "@effect/vitest"
import { DriverCore } from "@kindling/driver"
import { ClusterMessages, Endpoints, Ids, Records, RpcAddress } from "@kindling/protocol"
import { Exit, FastCheck as fc } from "effect"

const config: DriverCore.Config = {
  dag: { maxConsecutiveAttempts: 4, resubmitDelayMillis: 200 },
  scheduler: {
    maxFailures: 2,
    cpusPerTask: 1,
    mode: "FIFO",
    speculation: { enabled: true, multiplier: 1.5, quantile: 0.5, minTaskRuntimeMillis: 100 },
    seed: 3
  },
  reviveIntervalMillis: 1000,
  executorTimeoutMillis: 10_000,
  speculationIntervalMillis: 100,
  maxResultSize: 64,
  starvationWarningMillis: 30_000,
  properties: []
}

const executorAddress = (n: number) => RpcAddress.make(`exec-${n}`, 5000)
const result = Records.encode({ _tag: "TaskResult", value: Records.encode(1), recordsRead: 1 })
const failure = Records.encode({ _tag: "TaskFailure", className: "Error", message: "boom", stack: "Error: boom" })
// A map task's result: the bytes it wrote for each of `reduces` partitions.
const mapStatus = (reduces: number) =>
  Records.encode({
    _tag: "TaskResult",
    value: Records.encode({ sizes: Array.from({ length: reduces }, () => 10) }),
    recordsRead: 1
  })
const fetchFailure = (shuffleId: number, executorId: string | undefined) =>
  Records.encode({
    _tag: "FetchFailed",
    shuffleId,
    mapIndex: 0,
    reduceId: 0,
    ...(executorId === undefined ? {} : { executorId }),
    message: `Failed to fetch map output 0 of shuffle ${shuffleId}`
  })

// Drives the core as the driver's shell and its executors would, and checks after every step: the core's
// invariants hold, every job ends once (succeeded or failed), and a job's results come only before its end.
class World {
  readonly state: DriverCore.State
  constructor(options: DriverCore.Config = config) {
    this.state = DriverCore.make(options)
  }
  now = 0
  nextJob = 0
  /** The next job's shuffles are numbered from here. */
  shuffleBase = 0
  nextAsk = 0
  connections = new Map<number, number>()
  /** Running tasks: the executor each runs on, and its stage. */
  readonly running = new Map<number, number>()
  readonly stageOf = new Map<number, number>()
  readonly ended = new Map<number, string>()

  readonly trace: Array<string> = []

  /** The jobs each stage was started for, as the driver's JobStart events say. */
  readonly stageJobs = new Map<number, Set<number>>()
  /** Tasks the driver asked to kill. */
  readonly killed = new Set<number>()
  /** Executors dynamic allocation gave back (a later executor of the same number is another). */
  readonly removing = new Set<number>()
  /** What the core logged. */
  readonly logs: Array<string> = []

  apply(input: Parameters<typeof DriverCore.step>[1]) {
    const endedBefore = new Set(this.ended.keys())
    const commands = DriverCore.step(this.state, input)
    this.trace.push(
      `${input._tag}${input._tag === "Receive" ? ` ${input.message._tag}` : ""} → ${
        commands.map((c) => c._tag === "Send" ? c.message._tag : c._tag).join(",")
      }`
    )
    for (const command of commands) {
      for (const event of command._tag === "Events" ? command.events : []) {
        if (event._tag !== "JobStart") continue
        for (const stageId of event.stageIds) {
          this.stageJobs.set(stageId, new Set([...this.stageJobs.get(stageId) ?? [], event.jobId]))
        }
      }
      if (command._tag === "Send" && command.message instanceof ClusterMessages.LaunchTasks) {
        const n = Number(command.to.address.host.split("-")[1])
        assert.isFalse(this.removing.has(n), `a task launched on executor ${n}, which dynamic allocation gave back`)
        assert.strictEqual(command.message.executorId, String(n), "launches sent to another executor")
        assert.isAbove(command.message.tasks.length, 0, "an empty launch")
        for (const launch of command.message.tasks) {
          const jobs = [...this.stageJobs.get(launch.stageId) ?? []]
          assert.isTrue(
            jobs.some((job) => !endedBefore.has(job)),
            `stage ${launch.stageId} launched after its jobs ended`
          )
          this.running.set(launch.taskId, n)
          this.stageOf.set(launch.taskId, launch.stageId)
        }
      }
      if (command._tag === "TaskResult") assert.isFalse(this.ended.has(command.jobId), "a result after the end")
      if (command._tag === "JobSucceeded" || command._tag === "JobFailed") {
        assert.isFalse(this.ended.has(command.jobId), `job ${command.jobId} ended twice`)
        this.ended.set(command.jobId, command._tag)
      }
    }
    for (const command of commands) {
      if (command._tag === "Log") this.logs.push(command.message)
      if (command._tag === "Send" && command.message instanceof ClusterMessages.KillTask) {
        this.killed.add(command.message.taskId)
      }
      // An executor the driver gave up on (it fell silent) is nothing of the driver's any more, nor its tasks.
      for (const event of command._tag === "Events" ? command.events : []) {
        if (event._tag !== "ExecutorRemoved") continue
        const n = Number(event.executorId)
        for (const [taskId, on] of this.running) if (on === n) this.running.delete(taskId)
      }
    }
    assert.deepStrictEqual(DriverCore.validate(this.state), [])
    // What dynamic allocation gives back is killed by the cluster manager later (`removeKilled`); meanwhile the
    // executor runs nothing and is offered nothing.
    for (const command of commands) {
      if (command._tag !== "KillExecutors") continue
      for (const id of command.executorIds) {
        const n = Number(id)
        this.removing.add(n)
        for (const [taskId, on] of this.running) {
          assert.notStrictEqual(on, n, `executor ${n} killed running TID ${taskId}`)
        }
      }
    }
    // Once its jobs have ended, nothing of a stage runs that the driver has not asked to kill.
    for (const taskId of this.running.keys()) {
      const stageId = this.stageOf.get(taskId)!
      const jobs = [...this.stageJobs.get(stageId) ?? []]
      if (jobs.length > 0 && jobs.every((job) => this.ended.has(job))) {
        assert.isTrue(
          this.killed.has(taskId),
          `TID ${taskId} of stage ${stageId} runs on after its jobs ended:\n${this.trace.join("\n")}`
        )
      }
    }
    return commands
  }

  receive(n: number, message: ClusterMessages.ExecutorToDriver) {
    const ask = "_tag" in message && (message._tag === "RegisterExecutor" || message._tag === "ExecutorHeartbeat")
      ? { id: this.nextAsk++, request: message }
      : undefined
    return this.apply({
      _tag: "Receive",
      message,
      ask: ask as never,
      sender: executorAddress(n),
      peer: executorAddress(n),
      connection: this.connections.get(n) ?? 0,
      now: this.now
    })
  }

  // An executor process registering on a connection of its own; one the driver refuses (a duplicate id) exits,
  // and the connection the driver knows executor n by stays the one it accepted.
  /** The executors dynamic allocation gave back are gone, and the driver hears of it. */
  removeKilled() {
    for (const n of [...this.removing]) {
      if (!this.state.executors.has(Ids.ExecutorId.make(String(n)))) continue
      this.apply({
        _tag: "ExecutorRemoved",
        executorId: Ids.ExecutorId.make(String(n)),
        reason: "killed",
        started: true,
        now: this.now
      })
    }
  }

  register(n: number, cores: number) {
    if (!this.state.executors.has(Ids.ExecutorId.make(String(n)))) this.removing.delete(n)
    const accepted = this.connections.get(n)
    this.connections.set(n, 100 + n + this.nextAsk)
    const executorId = Ids.ExecutorId.make(String(n))
    const answered = this.receive(
      n,
      new ClusterMessages.RegisterExecutor({
        executorId,
        executorRef: Endpoints.ref(executorAddress(n), Endpoints.executor),
        hostname: `exec-${n}`,
        cores,
        logUrls: {},
        attributes: {},
        resources: {},
        resourceProfileId: 0
      })
    )
    if (!answered.some((command) => command._tag === "Reply" && Exit.isSuccess(command.exit))) {
      if (accepted === undefined) this.connections.delete(n)
      else this.connections.set(n, accepted)
      return
    }
    this.receive(n, new ClusterMessages.LaunchedExecutor({ executorId }))
  }

  // A job of `tasks` result tasks reading `parents`, among `shuffles` of `maps` map tasks and 2 reduce partitions
  // each, reading no other shuffle.
  submit(
    tasks: number,
    parents: ReadonlyArray<number>,
    shuffles: ReadonlyArray<{ readonly id: number; readonly maps: number }>
  ) {
    return this.apply({
      _tag: "SubmitJob",
      job: {
        jobId: this.nextJob++,
        tasks: Array.from({ length: tasks }, (_, i) => new Uint8Array([i])),
        preferredBlocks: [],
        parents,
        shuffles: shuffles.map(({ id, maps }) => ({
          shuffleId: id,
          numReduces: 2,
          mapTasks: Array.from({ length: maps }, () => new Uint8Array([maps])),
          preferredBlocks: [],
          parents: [],
          name: "cogroup"
        })),
        pool: "default",
        name: "count"
      },
      now: this.now
    })
  }

  // A task ends as its executor would report it: a map task with its map status, a fetch failure naming one of
  // the shuffles its stage reads (and the executor said to hold it, if any).
  finish(taskId: number, state: "FINISHED" | "FAILED" | "KILLED" | "FETCH_FAILED") {
    const n = this.running.get(taskId)!
    this.report(n, [this.ended_(taskId, state)])
  }

  // Tasks of one executor end in the same turn of its event loop: one report.
  finishAll(n: number, ends: ReadonlyArray<readonly [number, "FINISHED" | "FAILED" | "KILLED" | "FETCH_FAILED"]>) {
    if (ends.length > 0) this.report(n, ends.map(([taskId, state]) => this.ended_(taskId, state)))
  }

  private ended_(taskId: number, state: "FINISHED" | "FAILED" | "KILLED" | "FETCH_FAILED") {
    const stage = this.state.dag.stages.get(this.stageOf.get(taskId)!)
    this.running.delete(taskId)
    this.stageOf.delete(taskId)
    let data = failure
    if (state === "FINISHED") {
      const shuffle = stage?.shuffleId === undefined ? undefined : this.state.dag.shuffles.get(stage.shuffleId)
      data = shuffle === undefined ? result : mapStatus(shuffle.numReduces)
    } else if (state === "FETCH_FAILED") {
      const parent = stage?.parents[taskId % Math.max(1, stage.parents.length)]
      const shuffleId = parent === undefined ? undefined : this.state.dag.stages.get(parent)?.shuffleId
      const holder = shuffleId === undefined
        ? undefined
        : this.state.dag.shuffles.get(shuffleId)?.outputs[0]?.executorId
      data = shuffleId === undefined ? failure : fetchFailure(shuffleId, holder)
    }
    return new ClusterMessages.TaskStatus({
      taskId,
      state: state === "FETCH_FAILED" ? "FAILED" : state,
      data,
      resources: {}
    })
  }

  private report(n: number, updates: ReadonlyArray<ClusterMessages.TaskStatus>) {
    return this.receive(n, new ClusterMessages.StatusUpdates({ executorId: Ids.ExecutorId.make(String(n)), updates }))
  }
}

type Op = (world: World) => void

// The shuffles of a job, as datasets make them: shuffle i reads only shuffles before it, and the job's result
// tasks read one or two of them (a join reads two) — or none. Ids are relative to the job's first shuffle.
const shuffles = fc.integer({ min: 0, max: 4 }).chain((count) =>
  fc.tuple(
    fc.tuple(...Array.from({ length: count }, (_, i) =>
      fc.tuple(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 4 }),
        fc.subarray(Array.from({ length: i }, (_, j) => j), { maxLength: Math.min(2, i) })
      ))),
    fc.subarray(
      Array.from({ length: count }, (_, i) => i),
      { minLength: Math.min(1, count), maxLength: Math.min(2, count) }
    )
  ).map(([specs, parents]) => ({
    parents,
    shuffles: specs.map(([maps, reduces, from], shuffleId) => ({
      shuffleId,
      numReduces: reduces,
      mapTasks: Array.from({ length: maps }, () => new Uint8Array([maps])),
      preferredBlocks: [],
      parents: from,
      name: "cogroup"
    }))
  }))
)
const some = (world: World, n: number) => [...world.running.keys()][n % Math.max(1, world.running.size)]

const operation: fc.Arbitrary<Op> = fc.oneof(
  fc.tuple(fc.integer({ min: 0, max: 12 }), shuffles).map(([tasks, graph]): Op => (world) =>
    world.apply({
      _tag: "SubmitJob",
      job: {
        jobId: world.nextJob++,
        tasks: Array.from({ length: tasks }, () => new Uint8Array([tasks])),
        preferredBlocks: [],
        parents: graph.parents.map((i) => world.shuffleBase + i),
        shuffles: graph.shuffles.map((shuffle) => ({
          ...shuffle,
          shuffleId: world.shuffleBase + shuffle.shuffleId,
          parents: shuffle.parents.map((i) => world.shuffleBase + i)
        })),
        pool: tasks % 2 === 0 ? "default" : "other",
        name: "collect"
      },
      now: (world.shuffleBase += graph.shuffles.length, world.now)
    })
  ),
  fc.tuple(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 1, max: 2 })).map(([n, cores]): Op => (world) =>
    world.register(n, cores)
  ),
  {
    // Tasks end most often: a stage's task failing its last time beside a busy sibling stage is what matters.
    weight: 4,
    arbitrary: fc.tuple(
      fc.nat(),
      fc.constantFrom("FINISHED", "FINISHED", "FINISHED", "FAILED", "FAILED", "KILLED", "FETCH_FAILED") as fc.Arbitrary<
        "FINISHED" | "FAILED" | "KILLED" | "FETCH_FAILED"
      >
    ).map(([n, state]): Op => (world) => {
      const taskId = some(world, n)
      if (taskId !== undefined) world.finish(taskId, state)
    })
  },
  {
    // Several tasks of one executor end in one report: each is taken as if it had come alone.
    weight: 2,
    arbitrary: fc.tuple(
      fc.integer({ min: 0, max: 3 }),
      fc.array(
        fc.constantFrom("FINISHED", "FINISHED", "FAILED", "KILLED", "FETCH_FAILED") as fc.Arbitrary<
          "FINISHED" | "FAILED" | "KILLED" | "FETCH_FAILED"
        >,
        { minLength: 2, maxLength: 4 }
      )
    ).map(([n, states]): Op => (world) => {
      const on = [...world.running].filter(([, executor]) => executor === n).map(([taskId]) => taskId)
      world.finishAll(n, on.slice(0, states.length).map((taskId, i) => [taskId, states[i]!] as const))
    })
  },
  fc.integer({ min: 0, max: 3 }).map((n): Op => (world) => {
    const connection = world.connections.get(n)
    if (connection === undefined) return
    for (const [taskId, on] of world.running) if (on === n) world.running.delete(taskId)
    world.apply({ _tag: "Disconnected", peer: executorAddress(n), connection, now: world.now })
  }),
  fc.nat().map((n): Op => (world) => {
    if (world.nextJob > 0) {
      world.apply({ _tag: "CancelJob", jobId: n % world.nextJob, reason: "cancelled", now: world.now })
    }
  }),
  fc.integer({ min: 100, max: 20_000 }).map((millis): Op => (world) => {
    // What dynamic allocation gave back at the last tick is gone by now; other events came in between.
    world.removeKilled()
    world.now += millis
    world.apply({ _tag: "CheckSpeculation", now: world.now })
    world.apply({ _tag: "CheckExecutorTimeouts", now: world.now })
    world.apply({ _tag: "CheckAllocation", now: world.now })
    // A fetch failure's delay is over, whatever still runs.
    world.apply({ _tag: "ResubmitFailedStages", now: world.now })
  })
)

const withAllocation: DriverCore.Config = {
  ...config,
  allocation: {
    minExecutors: 0,
    maxExecutors: 3,
    initialExecutors: 1,
    tasksPerExecutor: 1,
    allocationRatio: 1,
    backlogTimeoutMillis: 1000,
    sustainedBacklogTimeoutMillis: 1000,
    idleTimeoutMillis: 3000,
    cachedIdleTimeoutMillis: Infinity,
    shuffleTracking: true,
    shuffleTrackingTimeoutMillis: 10_000
  }
}

describe("DriverCore", () => {
  it.each([["", config], [" with dynamic allocation giving back idle executors", withAllocation]] as const)(
    "model%s: random executors, jobs of shuffles, task ends and fetch failures, losses and cancels keep every invariant; every job ends once, and none launches a task after its end",
    (_, modelConfig) => {
      fc.assert(
        fc.property(fc.array(operation, { maxLength: 60, size: "max" }), (ops) => {
          const world = new World(modelConfig)
          world.apply({ _tag: "Start", now: 0 })
          for (const op of ops) op(world)
          // Then an executor that stays, and every task finishes (a fetch failure's stages run again after their
          // delay) until every job has ended.
          world.register(9, 2)
          const unended = () =>
            Array.from({ length: world.nextJob }, (_, job) => job).filter((job) => !world.ended.has(job))
          for (let rounds = 0; unended().length > 0; rounds++) {
            assert.isBelow(rounds, 10_000, `jobs ${unended().join(", ")} never ended:\n${world.trace.join("\n")}`)
            if (world.running.size > 0) world.finish([...world.running.keys()][0]!, "FINISHED")
            else world.apply({ _tag: "ResubmitFailedStages", now: (world.now += 1000) })
          }
        }),
        { numRuns: 1000 }
      )
    }
  )
})

describe("DriverCore, worked examples", () => {
  // The hang of issue #22: `left.cogroup(right).count()` with a record of `left` that always throws. The failing
  // map task's last failure freed its core, and the same batch of decisions launched a task of the sibling stage
  // on it; the stage's abort then cancelled that sibling, and carrying out the launch met a task set it no longer
  // had: the core threw, and the job never ended.
  it("a task failing its last time beside a sibling stage with tasks to launch fails the job; the next job runs", () => {
    const world = new World()
    world.apply({ _tag: "Start", now: 0 })
    world.register(0, 1)
    world.submit(2, [0, 1], [{ id: 0, maps: 2 }, { id: 1, maps: 3 }])
    // One core: the left side's first map task runs; it fails, runs again and fails its second (last) time.
    const first = [...world.running.keys()]
    assert.deepStrictEqual(first.map((taskId) => world.stageOf.get(taskId)), [0])
    world.finish(first[0]!, "FAILED")
    const again = [...world.running.keys()]
    assert.deepStrictEqual(again.map((taskId) => world.stageOf.get(taskId)), [0])
    const tid = again[0]!
    world.running.delete(tid)
    const commands = world.receive(
      0,
      new ClusterMessages.StatusUpdates({
        executorId: Ids.ExecutorId.make("0"),
        updates: [new ClusterMessages.TaskStatus({ taskId: tid, state: "FAILED", data: failure, resources: {} })]
      })
    )
    const sent = commands.flatMap((command) => (command._tag === "Send" ? [command.message] : []))
    // The freed core went to the sibling stage, whose task is killed at once: the launch before the kill.
    const launch = sent.findIndex((message) => message instanceof ClusterMessages.LaunchTasks)
    const kill = sent.findIndex((message) => message instanceof ClusterMessages.KillTask)
    assert.isAtLeast(launch, 0)
    assert.isAbove(kill, launch)
    assert.strictEqual(world.ended.get(0), "JobFailed")
    const failed = commands.find((command) => command._tag === "JobFailed")
    assert.include(failed?._tag === "JobFailed" ? failed.reason : "", "Task 0 in stage 0.0 failed 2 times")
    // The killed task's end frees its core; nothing of the job is left, and the next job runs to its end.
    for (const taskId of [...world.running.keys()]) world.finish(taskId, "KILLED")
    assert.strictEqual(world.state.scheduler.executors.get("0")?.freeCores, 1)
    assert.strictEqual(world.state.dag.stages.size, 0)
    world.submit(1, [], [])
    world.finish([...world.running.keys()][0]!, "FINISHED")
    assert.strictEqual(world.ended.get(1), "JobSucceeded")
  })
})

describe("DriverCore, worked examples found by the simulated cluster", () => {
  // Seed 22: an attempt of the result stage given up on after a fetch failure kept a task running; the job then
  // ended through the next attempt, and that task ran on — a task of an ended job, in a task set of a stage the
  // DAG scheduler had forgotten.
  it("a job that ends kills what its given-up stage attempts still run", () => {
    const world = new World({ ...config, maxResultSize: 0 })
    world.apply({ _tag: "Start", now: 0 })
    world.register(0, 3)
    world.submit(2, [0], [{ id: 0, maps: 1 }])
    const byStage = (stageId: number) =>
      [...world.running.keys()].filter((taskId) => world.stageOf.get(taskId) === stageId)
    world.finish(byStage(0)[0]!, "FINISHED")
    const [first, second] = byStage(1)
    assert.isDefined(second)
    // The first result task cannot fetch the map output: attempt 0 of the result stage is given up on, while its
    // second task runs on.
    world.finish(first!, "FETCH_FAILED")
    world.apply({ _tag: "ResubmitFailedStages", now: (world.now += 1000) })
    world.finish(byStage(0)[0]!, "FINISHED")
    for (const taskId of byStage(1).filter((taskId) => taskId !== second)) world.finish(taskId, "FINISHED")
    assert.strictEqual(world.ended.get(0), "JobSucceeded", world.trace.join("\n"))
    // The task of the given-up attempt was told to stop when the job ended.
    assert.isTrue(world.killed.has(second!))
    assert.strictEqual(world.state.scheduler.taskSets.size, 0)
  })
})

describe("DriverCore with dynamic allocation", () => {
  const allocating: DriverCore.Config = {
    ...config,
    maxResultSize: 0,
    allocation: {
      minExecutors: 0,
      maxExecutors: 5,
      initialExecutors: 1,
      tasksPerExecutor: 1,
      allocationRatio: 1,
      backlogTimeoutMillis: 1000,
      sustainedBacklogTimeoutMillis: 1000,
      idleTimeoutMillis: 5000,
      cachedIdleTimeoutMillis: Infinity,
      shuffleTracking: true,
      shuffleTrackingTimeoutMillis: Infinity
    }
  }
  const decisions = (commands: ReadonlyArray<DriverCore.Command>) =>
    commands.flatMap((command) =>
      command._tag === "RequestExecutors"
        ? [`total ${command.total}`]
        : command._tag === "KillExecutors"
        ? [`kill ${command.executorIds.join(",")}`]
        : []
    )

  it("asks for more executors while tasks wait, then gives back an idle one and offers it nothing more", () => {
    const world = new World(allocating)
    const started = world.apply({ _tag: "Start", now: 0 })
    assert.isTrue(started.some((command) => command._tag === "StartTimer" && command.name === "allocation"))
    world.register(1, 1)
    world.submit(6, [], [])
    const asked: Array<string> = []
    for (let t = 0; t <= 3000; t += 500) {
      world.now = t
      asked.push(...decisions(world.apply({ _tag: "CheckAllocation", now: t })))
    }
    // After the backlog timeout: +1, then +2, then up to the most the six tasks need, capped at 5.
    assert.deepStrictEqual(asked, ["total 2", "total 4", "total 5"])
    // The job runs to its end on the one executor there is.
    while (world.running.size > 0) world.finish([...world.running.keys()][0]!, "FINISHED")
    assert.strictEqual(world.ended.get(0), "JobSucceeded")
    world.now = 3500
    assert.deepStrictEqual(decisions(world.apply({ _tag: "CheckAllocation", now: 3500 })), ["total 0"])
    world.now = 9000
    assert.deepStrictEqual(decisions(world.apply({ _tag: "CheckAllocation", now: 9000 })), ["kill 1"])
    // Until it is gone, a job is not offered to it.
    world.submit(1, [], [])
    assert.strictEqual(world.running.size, 0)
    // It goes as the cluster manager kills it, which is no loss.
    world.removeKilled()
    assert.isFalse(world.state.executors.has(Ids.ExecutorId.make("1")))
    assert.include(world.logs, "Executor 1 on exec-1 removed by dynamic allocation")
    assert.isFalse(world.logs.some((line) => line.startsWith("Lost executor 1")))
  })
})
