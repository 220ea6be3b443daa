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

// Drives the core as the driver's shell and its executors would, and checks after every step: the core's
// invariants hold, every job ends once (succeeded or failed), and a job's results come only before its end.
class World {
  readonly state = DriverCore.make(config)
  now = 0
  nextJob = 0
  nextAsk = 0
  connections = new Map<number, number>()
  readonly running = new Map<number, number>()
  readonly ended = new Map<number, string>()

  readonly trace: Array<string> = []

  apply(input: Parameters<typeof DriverCore.step>[1]) {
    const commands = DriverCore.step(this.state, input)
    this.trace.push(
      `${input._tag}${input._tag === "Receive" ? ` ${input.message._tag}` : ""} → ${
        commands.map((c) => c._tag === "Send" ? c.message._tag : c._tag).join(",")
      }`
    )
    for (const command of commands) {
      if (command._tag === "Send" && command.message instanceof ClusterMessages.LaunchTask) {
        this.running.set(command.message.taskId, Number(command.to.address.host.split("-")[1]))
      }
      if (command._tag === "TaskResult") assert.isFalse(this.ended.has(command.jobId), "a result after the end")
      if (command._tag === "JobSucceeded" || command._tag === "JobFailed") {
        assert.isFalse(this.ended.has(command.jobId), `job ${command.jobId} ended twice`)
        this.ended.set(command.jobId, command._tag)
      }
    }
    assert.deepStrictEqual(DriverCore.validate(this.state), [])
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
  register(n: number, cores: number) {
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

  finish(taskId: number, state: "FINISHED" | "FAILED" | "KILLED") {
    const n = this.running.get(taskId)!
    this.running.delete(taskId)
    this.receive(
      n,
      new ClusterMessages.StatusUpdate({
        executorId: Ids.ExecutorId.make(String(n)),
        taskId,
        state,
        data: state === "FINISHED" ? result : failure,
        resources: {}
      })
    )
  }
}

type Op = (world: World) => void
const some = (world: World, n: number) => [...world.running.keys()][n % Math.max(1, world.running.size)]

const operation: fc.Arbitrary<Op> = fc.oneof(
  fc.integer({ min: 0, max: 12 }).map((tasks): Op => (world) =>
    world.apply({
      _tag: "SubmitJob",
      job: {
        jobId: world.nextJob++,
        tasks: Array.from({ length: tasks }, () => new Uint8Array([tasks])),
        preferredBlocks: [],
        parents: [],
        shuffles: [],
        pool: tasks % 2 === 0 ? "default" : "other",
        name: "collect"
      },
      now: world.now
    })
  ),
  fc.tuple(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 1, max: 3 })).map(([n, cores]): Op => (world) =>
    world.register(n, cores)
  ),
  fc.tuple(
    fc.nat(),
    fc.constantFrom("FINISHED", "FINISHED", "FAILED", "KILLED") as fc.Arbitrary<
      "FINISHED" | "FAILED" | "KILLED"
    >
  ).map(([n, state]): Op => (world) => {
    const taskId = some(world, n)
    if (taskId !== undefined) world.finish(taskId, state)
  }),
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
    world.now += millis
    world.apply({ _tag: "CheckSpeculation", now: world.now })
    world.apply({ _tag: "CheckExecutorTimeouts", now: world.now })
  })
)

describe("DriverCore", () => {
  it("model: random executors, jobs, task ends, losses and cancels keep every invariant; every job ends once", () => {
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 60 }), (ops) => {
        const world = new World()
        world.apply({ _tag: "Start", now: 0 })
        for (const op of ops) op(world)
        // Then an executor that stays, and every task finishes, until nothing runs.
        world.register(9, 2)
        for (let rounds = 0; world.running.size > 0; rounds++) {
          assert.isBelow(rounds, 10_000)
          world.finish([...world.running.keys()][0]!, "FINISHED")
        }
        for (let job = 0; job < world.nextJob; job++) {
          assert.isTrue(world.ended.has(job), `job ${job} never ended:\n${world.trace.join("\n")}`)
        }
      }),
      { numRuns: 200 }
    )
  })
})
