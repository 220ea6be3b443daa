import { assert, describe, it } from "@effect/vitest"
import { AppClientCore } from "@kindling/driver"
import { AppClientMessages, Descriptions, Endpoints, Ids, RpcAddress } from "@kindling/protocol"
import { Option } from "effect"

const masterA = Endpoints.ref(RpcAddress.make("m1", 7077), Endpoints.master)
const masterB = Endpoints.ref(RpcAddress.make("m2", 7077), Endpoints.master)
const self = Endpoints.ref(RpcAddress.make("driver", 40000), Endpoints.appClient)
const appId = Ids.AppId.make("app-20260101000000-0000")
const workerId = Ids.WorkerId.make("worker-1")

const make = () =>
  AppClientCore.make({
    self,
    masters: [masterA, masterB],
    appDescription: new Descriptions.ApplicationDescription({
      name: "app",
      maxCores: Option.none(),
      memoryPerExecutorMB: 512,
      command: new Descriptions.Command({ mainModule: "m", arguments: [], environment: {}, nodeOptions: [] }),
      appUiUrl: "",
      eventLogDir: Option.none(),
      eventLogCodec: Option.none(),
      coresPerExecutor: Option.none(),
      initialExecutorLimit: Option.none(),
      user: "u",
      resourceReqsPerExecutor: []
    }),
    registrationTimeoutMillis: 20_000,
    registrationRetries: 3
  })

const receive = (state: AppClientCore.State, message: AppClientCore.Inbound, now = 0) =>
  AppClientCore.step(state, {
    _tag: "Receive",
    message,
    ask: undefined,
    sender: masterA.address,
    peer: masterA.address,
    connection: 1,
    now
  })

const own = (commands: ReadonlyArray<AppClientCore.Command>) =>
  commands.filter((c) => c._tag !== "Log" && c._tag !== "StartTimer" && c._tag !== "CancelTimer")

describe("AppClientCore", () => {
  it("after its master's connection closes it has the master asked for the app; one that no longer has it ends it", () => {
    const state = make()
    AppClientCore.step(state, { _tag: "Start", now: 0 })
    receive(state, new AppClientMessages.RegisteredApplication({ appId, master: masterA }))
    const closed = AppClientCore.step(state, { _tag: "Disconnected", peer: masterA.address, connection: 1, now: 5 })
    assert.deepStrictEqual(own(closed), [{ _tag: "CheckRegistered", appId, master: masterA.address }])
    // Another node's connection closing asks nothing.
    const other = AppClientCore.step(state, { _tag: "Disconnected", peer: masterB.address, connection: 2, now: 6 })
    assert.deepStrictEqual(own(other), [])
    const unknown = AppClientCore.step(state, { _tag: "AppUnknown", reason: "the master no longer knows it", now: 7 })
    assert.deepStrictEqual(own(unknown), [
      { _tag: "AppDead", reason: "Master removed our application: the master no longer knows it" }
    ])
    // Dead once: a second answer changes nothing.
    assert.deepStrictEqual(own(AppClientCore.step(state, { _tag: "AppUnknown", reason: "again", now: 8 })), [])
  })

  it("registers with every master, retries every 20 s, and gives up after 3 attempts", () => {
    const state = make()
    const started = AppClientCore.step(state, { _tag: "Start", now: 0 })
    assert.deepStrictEqual(own(started).map((c) => c._tag === "Send" && c.to.address.host), ["m1", "m2"])
    const retried = AppClientCore.step(state, { _tag: "RetryRegistration", now: 20_000 })
    assert.strictEqual(own(retried).length, 2)
    AppClientCore.step(state, { _tag: "RetryRegistration", now: 40_000 })
    const given = AppClientCore.step(state, { _tag: "RetryRegistration", now: 60_000 })
    assert.deepStrictEqual(own(given), [{ _tag: "AppDead", reason: "All masters are unresponsive! Giving up." }])
  })

  it("an executor that never ran is gone with started = false: its launch failed", () => {
    const state = make()
    AppClientCore.step(state, { _tag: "Start", now: 0 })
    receive(state, new AppClientMessages.RegisteredApplication({ appId, master: masterA }))
    for (const id of [0, 1]) {
      receive(state, new AppClientMessages.ExecutorAdded({ id, workerId, hostPort: "h:1", cores: 1, memory: 512 }))
    }
    const update = (id: number, state: "RUNNING" | "FAILED") =>
      new AppClientMessages.ExecutorUpdated({
        id,
        state,
        message: Option.none(),
        exitStatus: Option.none(),
        workerHost: Option.none()
      })
    receive(state, update(0, "RUNNING"))
    assert.deepStrictEqual(own(receive(state, update(0, "FAILED"))), [
      { _tag: "ExecutorGone", executorId: 0, reason: "Executor FAILED", started: true, workerLost: false }
    ])
    assert.deepStrictEqual(own(receive(state, update(1, "FAILED"))), [
      { _tag: "ExecutorGone", executorId: 1, reason: "Executor FAILED", started: false, workerLost: false }
    ])
    // Reported again, it is gone already.
    assert.deepStrictEqual(own(receive(state, update(1, "FAILED"))), [])
    // One of a worker decommissioned is drained by the driver, not gone; one of a lost worker is gone with it.
    for (const id of [2, 3]) {
      receive(state, new AppClientMessages.ExecutorAdded({ id, workerId, hostPort: "h:1", cores: 1, memory: 512 }))
    }
    const ofWorker = (id: number, state: "DECOMMISSIONED" | "LOST", message: string) =>
      new AppClientMessages.ExecutorUpdated({
        id,
        state,
        message: Option.some(message),
        exitStatus: Option.none(),
        workerHost: Option.some("h")
      })
    assert.deepStrictEqual(own(receive(state, ofWorker(2, "DECOMMISSIONED", "worker decommissioned"))), [
      { _tag: "ExecutorDecommissioned", executorId: 2, reason: "Executor decommission (worker decommissioned)" }
    ])
    assert.deepStrictEqual(own(receive(state, ofWorker(3, "LOST", "worker lost"))), [
      { _tag: "ExecutorGone", executorId: 3, reason: "Executor LOST (worker lost)", started: false, workerLost: true }
    ])
  })
})
