// The master's shell in-process, on the simulated network and clock: what the core decides is carried out in
// order, with persistence before replies, and a master that cannot persist stops.
import { assert, describe, it } from "@effect/vitest"
import { Simulation } from "@kindling/kernel/testing"
import { ArtifactStore, LeaderElection, Master, Persistence } from "@kindling/master"
import {
  Descriptions,
  Endpoints,
  Errors,
  Ids,
  RpcAddress,
  SubmissionMessages,
  WorkerMessages
} from "@kindling/protocol"
import { RpcEnv } from "@kindling/rpc"
import { Cause, Effect, Exit, Layer } from "effect"
import { masterOptions } from "./fixtures/options.js"

const masterAddress = RpcAddress.make("master", 7077)

const description = new Descriptions.DriverDescription({
  appUrl: "file:///app.js",
  mem: 512,
  cores: 1,
  supervise: false,
  command: new Descriptions.Command({
    mainModule: "@kindling/driver/main",
    arguments: [],
    environment: {},
    nodeOptions: []
  }),
  resourceReqs: []
})

// A persistence engine that takes `millis` per write, and refuses drivers when told to.
const slowStore = (store: Persistence.MemoryStore, millis: number, refuseDrivers: boolean) => {
  const memory = Persistence.makeMemory(store)
  return Layer.succeed(Persistence.Persistence, {
    ...memory,
    persist: (record) =>
      refuseDrivers && record.kind === "driver"
        ? Effect.fail(new Persistence.PersistenceError({ operation: "write", path: "/disk", reason: "disk full" }))
        : Effect.zipRight(Effect.sleep(millis), memory.persist(record))
  })
}

// An election that elects at once and whose lease lapses when the test says, never reporting it: as a leader
// paused past its session timeout finds its lease when it wakes, before its election has heard anything.
const leaseElection = (lease: { valid: boolean }) =>
  Layer.succeed(LeaderElection.LeaderElection, { join: (candidate) => candidate.elected, mayLead: () => lease.valid })

const world = (options: { readonly refuseDrivers: boolean }) => {
  const sim = Simulation.make({ seed: 1 })
  const lease = { valid: true }
  const store: Persistence.MemoryStore = new Map()
  const exits: Array<number> = []
  const launched: Array<string> = []
  sim.start(
    "master",
    Effect.gen(function*() {
      yield* Master.make(masterOptions((code) => Effect.sync(() => exits.push(code))))
      return yield* Simulation.forever
    }).pipe(
      Effect.provide(
        Layer.mergeAll(
          RpcEnv.layer({ host: masterAddress.host, port: masterAddress.port }),
          slowStore(store, 200, options.refuseDrivers),
          leaseElection(lease),
          ArtifactStore.layerNone
        )
      )
    )
  )
  // A worker that registers, once the master listens, and notes the drivers it is asked to launch.
  sim.runFor(100)
  sim.start(
    "worker",
    Effect.gen(function*() {
      const rpc = yield* RpcEnv.RpcEnv
      const self = Endpoints.ref(rpc.address!, Endpoints.worker)
      yield* rpc.register(Endpoints.worker.name, {
        inbound: WorkerMessages.MasterToWorker,
        handlers: {
          RegisteredWorker: () => Effect.void,
          RegisterWorkerFailed: () => Effect.void,
          MasterInStandby: () => Effect.void,
          HeartbeatAcknowledged: () => Effect.void,
          ReconnectWorker: () => Effect.void,
          MasterChanged: () => Effect.void,
          LaunchExecutor: () => Effect.void,
          KillExecutor: () => Effect.void,
          LaunchDriver: (message) => Effect.sync(() => launched.push(message.driverId)),
          KillDriver: () => Effect.void,
          ApplicationFinished: () => Effect.void,
          DecommissionWorker: () => Effect.void
        }
      })
      yield* rpc.send(
        Endpoints.ref(masterAddress, Endpoints.master),
        new WorkerMessages.RegisterWorker({
          id: Ids.WorkerId.make("worker-1"),
          host: "worker",
          port: 7078,
          worker: self,
          cores: 4,
          memory: 4096,
          workerWebUiUrl: "",
          masterAddress,
          resources: {}
        })
      )
      return yield* Simulation.forever
    }).pipe(Effect.provide(RpcEnv.layer({ host: "worker", port: 7078 })))
  )
  sim.runFor(2_000)
  const submit = () => {
    let outcome: Exit.Exit<SubmissionMessages.SubmitDriverResponse, unknown> | undefined
    let storedAtReply = 0
    sim.start(
      "client",
      Effect.gen(function*() {
        const rpc = yield* RpcEnv.RpcEnv
        outcome = yield* Effect.exit(
          rpc.ask(
            Endpoints.ref(masterAddress, Endpoints.master),
            new SubmissionMessages.RequestSubmitDriver({ driverDescription: description })
          )
        )
        storedAtReply = [...store.keys()].filter((key) => key.startsWith("driver_")).length
      }).pipe(Effect.provide(RpcEnv.layer({})))
    )
    sim.runUntil(() => outcome !== undefined, 10_000)
    sim.runFor(1_000)
    return { outcome: outcome!, storedAtReply }
  }
  return { exits, launched, lease, store, submit }
}

describe("Master shell", () => {
  it("a submission is on disk, and launched, before its client hears of it", () => {
    const { exits, launched, submit } = world({ refuseDrivers: false })
    const { outcome, storedAtReply } = submit()
    assert.isTrue(Exit.isSuccess(outcome))
    assert.strictEqual(storedAtReply, 1)
    assert.strictEqual(launched.length, 1)
    assert.deepStrictEqual(exits, [])
  })

  it("a leader whose lease lapsed steps down before it handles anything: the submission is refused, unstored", () => {
    const { exits, launched, lease, store, submit } = world({ refuseDrivers: false })
    lease.valid = false
    const { outcome } = submit()
    assert.isTrue(Exit.isFailure(outcome))
    const error = Cause.failureOption((outcome as Exit.Failure<unknown, unknown>).cause)
    assert.deepStrictEqual(
      error._tag === "Some" && error.value,
      new Errors.MasterNotAlive({
        state: "STANDBY",
        action: "accept driver submissions"
      })
    )
    assert.deepStrictEqual([...store.keys()].filter((key) => !key.startsWith("worker_")), [])
    assert.deepStrictEqual(launched, [])
    assert.deepStrictEqual(exits, [])
  })

  it("a master that cannot persist a submission stops: exit 1, the client is refused in one line, nothing runs", () => {
    const { exits, launched, submit } = world({ refuseDrivers: true })
    const { outcome } = submit()
    assert.isTrue(Exit.isFailure(outcome))
    const error = Cause.failureOption((outcome as Exit.Failure<unknown, unknown>).cause)
    const reason = error._tag === "Some" ? (error.value as { readonly reason?: string }).reason ?? "" : ""
    assert.include(reason, "Cannot write /disk: disk full")
    assert.notInclude(reason, "\n")
    assert.deepStrictEqual(exits, [1])
    assert.deepStrictEqual(launched, [])
  })
})
