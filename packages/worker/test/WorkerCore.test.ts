import { assert, describe, it } from "@effect/vitest"
import { Descriptions, Ids, RpcAddress, WorkerMessages } from "@kindling/protocol"
import { WorkerCore } from "@kindling/worker"
import { Option } from "effect"

const masterA = RpcAddress.endpoint(RpcAddress.make("10.0.0.1", 7077), "Master")
const masterB = RpcAddress.endpoint(RpcAddress.make("10.0.0.2", 7077), "Master")
const self = RpcAddress.endpoint(RpcAddress.make("10.0.1.1", 40000), "Worker")

const config = (fuzz = 1): WorkerCore.Config => ({
  workerId: Ids.WorkerId.make("worker-1"),
  self,
  webUiUrl: "",
  cores: 8,
  memory: 8192,
  masters: [masterA, masterB],
  workerTimeoutMillis: 60_000,
  registration: {
    initialIntervalMillis: 10_000,
    initialAttempts: 6,
    prolongedIntervalMillis: 60_000,
    maxAttempts: 16,
    fuzz
  },
  cleanup: { enabled: true, intervalMillis: 1_800_000, appDataTtlMillis: 604_800_000 },
  retainedExecutors: 3,
  retainedDrivers: 3,
  workDir: "/work"
})

const command = new Descriptions.Command({ mainModule: "m", arguments: [], environment: {}, nodeOptions: [] })
const appDesc = new Descriptions.ApplicationDescription({
  name: "app",
  maxCores: Option.none(),
  memoryPerExecutorMB: 1024,
  command,
  appUiUrl: "",
  eventLogDir: Option.none(),
  eventLogCodec: Option.none(),
  coresPerExecutor: Option.none(),
  initialExecutorLimit: Option.none(),
  user: "u",
  resourceReqsPerExecutor: []
})
const appId = Ids.AppId.make("app-20260101000000-0000")

const tags = (commands: ReadonlyArray<WorkerCore.Command>) =>
  commands.filter((c) => c._tag !== "Log").map((c) =>
    c._tag === "Send" ? `Send ${c.message._tag} ${c.to.address.host}` : c._tag
  )

const registered = (fuzz = 1) => {
  const state = WorkerCore.make(config(fuzz))
  WorkerCore.step(state, { _tag: "Start" })
  WorkerCore.step(state, {
    _tag: "Receive",
    message: new WorkerMessages.RegisteredWorker({
      master: masterA,
      masterWebUiUrl: "http://m:8080",
      masterAddress: masterA.address,
      duplicate: false
    })
  })
  return state
}

const launchExecutor = (state: WorkerCore.State, execId: number, cores = 2) =>
  WorkerCore.step(state, {
    _tag: "Receive",
    message: new WorkerMessages.LaunchExecutor({
      masterUrl: masterA.address.url,
      appId,
      execId,
      appDesc,
      cores,
      memory: 1024,
      resources: {}
    })
  })

describe("WorkerCore registration", () => {
  it("registers with every master, then retries on Spark's schedule and gives up after 16 attempts", () => {
    const state = WorkerCore.make(config(1.2))
    const start = WorkerCore.step(state, { _tag: "Start" })
    assert.deepStrictEqual(tags(start), ["Send RegisterWorker 10.0.0.1", "Send RegisterWorker 10.0.0.2", "StartTimer"])
    // 10 s scaled by the fuzz factor.
    assert.deepStrictEqual(start.find((c) => c._tag === "StartTimer"), {
      _tag: "StartTimer",
      timer: "registration",
      delayMillis: 12_000,
      periodMillis: 12_000
    })
    const timers: Array<number> = []
    for (let attempt = 1; attempt <= 16; attempt++) {
      const tick = WorkerCore.step(state, { _tag: "ReregisterWithMaster" })
      assert.deepStrictEqual(tags(tick).filter((t) => t.startsWith("Send")), [
        "Send RegisterWorker 10.0.0.1",
        "Send RegisterWorker 10.0.0.2"
      ])
      for (const c of tick) if (c._tag === "StartTimer") timers.push(attempt, c.periodMillis)
      assert.isFalse(tick.some((c) => c._tag === "Exit"))
    }
    // After the 6th retry the interval becomes 60 s (× fuzz).
    assert.deepStrictEqual(timers, [6, 72_000])
    const last = WorkerCore.step(state, { _tag: "ReregisterWithMaster" })
    assert.deepStrictEqual(last.find((c) => c._tag === "Exit"), {
      _tag: "Exit",
      code: 1,
      reason: "All masters are unresponsive"
    })
  })

  it("once registered it stops retrying, heartbeats every timeout/4 and reports what it runs", () => {
    const state = WorkerCore.make(config())
    WorkerCore.step(state, { _tag: "Start" })
    const reply = WorkerCore.step(state, {
      _tag: "Receive",
      message: new WorkerMessages.RegisteredWorker({
        master: masterA,
        masterWebUiUrl: "",
        masterAddress: masterA.address,
        duplicate: false
      })
    })
    assert.deepStrictEqual(tags(reply), [
      "CancelTimer",
      "StartTimer",
      "StartTimer",
      "Send WorkerLatestState 10.0.0.1"
    ])
    assert.deepStrictEqual(
      reply.filter((c) => c._tag === "StartTimer").map((c) =>
        c._tag === "StartTimer" && [c.timer, c.delayMillis, c.periodMillis]
      ),
      [["heartbeat", 0, 15_000], ["cleanup", 1_800_000, 1_800_000]]
    )
    assert.deepStrictEqual(tags(WorkerCore.step(state, { _tag: "SendHeartbeat" })), ["Send Heartbeat 10.0.0.1"])
  })

  it("a refused registration exits 1, but only while not registered", () => {
    const fresh = WorkerCore.make(config())
    WorkerCore.step(fresh, { _tag: "Start" })
    const failed = WorkerCore.step(fresh, {
      _tag: "Receive",
      message: new WorkerMessages.RegisterWorkerFailed({ message: "Attempted to re-register worker at same address" })
    })
    assert.strictEqual(failed.find((c) => c._tag === "Exit")?._tag, "Exit")
    const state = registered()
    const ignored = WorkerCore.step(state, {
      _tag: "Receive",
      message: new WorkerMessages.RegisterWorkerFailed({ message: "late" })
    })
    assert.isFalse(ignored.some((c) => c._tag === "Exit"))
  })

  it("a lost master connection starts a new registration cycle, but not a second one", () => {
    const state = registered()
    const lost = WorkerCore.step(state, { _tag: "Disconnected", peer: masterA.address })
    assert.deepStrictEqual(tags(lost), ["Send RegisterWorker 10.0.0.1", "Send RegisterWorker 10.0.0.2", "StartTimer"])
    assert.deepStrictEqual(tags(WorkerCore.step(state, { _tag: "SendHeartbeat" })), [])
    const again = WorkerCore.step(state, {
      _tag: "Receive",
      message: new WorkerMessages.ReconnectWorker({ masterUrl: masterA.address.url })
    })
    assert.deepStrictEqual(tags(again), [])
    // Once a master was seen, retries go to it only.
    assert.deepStrictEqual(tags(WorkerCore.step(state, { _tag: "ReregisterWithMaster" })), [
      "Send RegisterWorker 10.0.0.1"
    ])
  })

  it("MasterChanged switches master and answers with everything the worker runs", () => {
    const state = registered()
    launchExecutor(state, 0)
    WorkerCore.step(state, {
      _tag: "Receive",
      message: new WorkerMessages.LaunchDriver({
        driverId: Ids.DriverId.make("driver-1"),
        driverDesc: new Descriptions.DriverDescription({
          appUrl: "file:///a.js",
          mem: 512,
          cores: 1,
          supervise: false,
          command,
          resourceReqs: []
        }),
        resources: {}
      })
    })
    const changed = WorkerCore.step(state, {
      _tag: "Receive",
      message: new WorkerMessages.MasterChanged({ master: masterB, masterWebUiUrl: "" })
    })
    const response = changed.find((c) => c._tag === "Send")
    assert.strictEqual(response?._tag === "Send" && response.to, masterB)
    const message = response?._tag === "Send"
      ? response.message as WorkerMessages.WorkerSchedulerStateResponse
      : undefined
    assert.deepStrictEqual(message?.execResponses.map((r) => [r.desc.appId, r.desc.execId, r.desc.state]), [[
      appId,
      0,
      "LAUNCHING"
    ]])
    assert.deepStrictEqual(message?.driverResponses.map((r) => r.driverId), ["driver-1"])
    // Launches from the old master are now refused.
    assert.deepStrictEqual(tags(launchExecutor(state, 1)), [])
  })
})

describe("WorkerCore runners and accounting", () => {
  it("charges executors while they run and releases them once when they finish", () => {
    const state = registered()
    assert.deepStrictEqual(tags(launchExecutor(state, 0, 3)), ["LaunchExecutor"])
    assert.strictEqual(state.coresUsed, 3)
    const running = WorkerCore.step(state, {
      _tag: "ExecutorChanged",
      appId,
      execId: 0,
      state: "RUNNING",
      message: undefined,
      exitStatus: undefined
    })
    assert.deepStrictEqual(tags(running), ["SyncExecutorState"])
    assert.strictEqual(state.coresUsed, 3)
    const exited = {
      _tag: "ExecutorChanged",
      appId,
      execId: 0,
      state: "EXITED",
      message: "Command exited with code 0",
      exitStatus: 0
    } as const
    WorkerCore.step(state, exited)
    assert.strictEqual(state.coresUsed, 0)
    assert.strictEqual(state.memoryUsed, 0)
    WorkerCore.step(state, exited)
    assert.strictEqual(state.coresUsed, 0)
    const snapshot = WorkerCore.workerState(state)
    assert.deepStrictEqual(snapshot.finishedExecutors.map((e) => [e.execId, e.state]), [[0, "EXITED"]])
  })

  it("cleans an app's directories once it is finished and none of its executors is left", () => {
    const state = registered()
    launchExecutor(state, 0)
    const early = WorkerCore.step(state, {
      _tag: "Receive",
      message: new WorkerMessages.ApplicationFinished({ id: appId })
    })
    assert.deepStrictEqual(tags(early), [])
    const last = WorkerCore.step(state, {
      _tag: "ExecutorChanged",
      appId,
      execId: 0,
      state: "KILLED",
      message: undefined,
      exitStatus: undefined
    })
    assert.deepStrictEqual(tags(last), ["CleanupApplication", "SyncExecutorState"])
  })

  it("forwards a driver's final state to the master and frees its resources", () => {
    const state = registered()
    const driverId = Ids.DriverId.make("driver-2")
    WorkerCore.step(state, {
      _tag: "Receive",
      message: new WorkerMessages.LaunchDriver({
        driverId,
        driverDesc: new Descriptions.DriverDescription({
          appUrl: "x",
          mem: 512,
          cores: 2,
          supervise: false,
          command,
          resourceReqs: []
        }),
        resources: {}
      })
    })
    assert.strictEqual(state.coresUsed, 2)
    const ended = WorkerCore.step(state, { _tag: "DriverEnded", driverId, state: "FAILED", exception: undefined })
    assert.deepStrictEqual(tags(ended), ["Send DriverStateChanged 10.0.0.1"])
    assert.strictEqual(state.coresUsed, 0)
    assert.strictEqual(state.memoryUsed, 0)
  })

  it("keeps a bounded list of finished executors, dropping the oldest tenth", () => {
    const state = registered()
    for (let i = 0; i < 5; i++) {
      launchExecutor(state, i, 1)
      WorkerCore.step(state, {
        _tag: "ExecutorChanged",
        appId,
        execId: i,
        state: "EXITED",
        message: undefined,
        exitStatus: 0
      })
    }
    assert.deepStrictEqual(WorkerCore.workerState(state).finishedExecutors.map((e) => e.execId), [2, 3, 4])
  })

  it("the work-dir cleanup keeps the dirs of what still runs", () => {
    const state = registered()
    launchExecutor(state, 0)
    const cleanup = WorkerCore.step(state, { _tag: "WorkDirCleanup" })
    assert.deepStrictEqual(cleanup, [{ _tag: "CleanupWorkDir", keep: [appId], ttlMillis: 604_800_000 }])
  })
})
