import { assert, describe, it } from "@effect/vitest"
import {
  Descriptions,
  Endpoints,
  Ids,
  QueryMessages,
  RpcAddress,
  type States,
  WorkerMessages
} from "@kindling/protocol"
import { WorkerCore } from "@kindling/worker"
import { Exit, FastCheck as fc, Option } from "effect"

const masterA = Endpoints.ref(RpcAddress.make("10.0.0.1", 7077), Endpoints.master)
const masterB = Endpoints.ref(RpcAddress.make("10.0.0.2", 7077), Endpoints.master)
const self = Endpoints.ref(RpcAddress.make("10.0.1.1", 40000), Endpoints.worker)

type Given =
  | WorkerCore.Local
  | { readonly _tag: "Start" }
  | { readonly _tag: "Disconnected"; readonly peer: RpcAddress.RpcAddress; readonly connection: number }
  | { readonly _tag: "Receive"; readonly message: WorkerCore.Inbound }

// One step; a message arrives from master A as a one-way send (none of these is an ask).
const stepWith = (state: WorkerCore.State, input: Given, now = 0) =>
  WorkerCore.step(
    state,
    input._tag === "Receive"
      ? { ...input, ask: undefined, sender: masterA.address, peer: masterA.address, connection: 1, now }
      : { ...input, now }
  )

// The master's answer to every `SyncState` among `commands`: taken (or, for a driver's end, as `taken` says).
const answerSyncs = (state: WorkerCore.State, commands: ReadonlyArray<WorkerCore.Command>, taken = true) =>
  commands.flatMap((c) =>
    c._tag === "SyncState"
      ? stepWith(state, { _tag: "StateSyncAnswered", key: c.key, askId: c.askId, taken })
      : []
  )

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
  workDir: "/work",
  executorStateSyncMaxAttempts: 3,
  askTimeoutMillis: 120_000,
  driverFencing: { leaseMillis: 120_000, terminateMillis: 10_000 },
  superviseInitialBackoffMillis: 1_000
})

const commandOf = (mainModule: string) =>
  new Descriptions.Command({ mainModule, arguments: [], environment: {}, nodeOptions: [] })
const command = commandOf("@kindling/driver/main")
const appDescOf = (executorCommand: Descriptions.Command) =>
  new Descriptions.ApplicationDescription({
    name: "app",
    maxCores: Option.none(),
    memoryPerExecutorMB: 1024,
    command: executorCommand,
    appUiUrl: "",
    eventLogDir: Option.none(),
    eventLogCodec: Option.none(),
    coresPerExecutor: Option.none(),
    initialExecutorLimit: Option.none(),
    user: "u",
    resourceReqsPerExecutor: []
  })
const appDesc = appDescOf(commandOf("@kindling/executor/main"))
const appId = Ids.AppId.make("app-20260101000000-0000")

const tags = (commands: ReadonlyArray<WorkerCore.Command>) =>
  commands.filter((c) => c._tag !== "Log").map((c) =>
    c._tag === "Send" || c._tag === "SyncState" ? `${c._tag} ${c.message._tag} ${c.to.address.host}` : c._tag
  )

// A master's answer that the worker is registered with it.
const registeredWith = (master: typeof masterA, masterWebUiUrl = "", duplicate = false) =>
  new WorkerMessages.RegisteredWorker({ master, masterWebUiUrl, masterAddress: master.address, duplicate })

const registered = (fuzz = 1) => {
  const state = WorkerCore.make(config(fuzz))
  stepWith(state, { _tag: "Start" })
  stepWith(state, {
    _tag: "Receive",
    message: registeredWith(masterA, "http://m:8080")
  })
  return state
}

const launchExecutor = (state: WorkerCore.State, execId: number, cores = 2) =>
  stepWith(state, {
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

const launchDriver = (state: WorkerCore.State, driverId: Ids.DriverId, cores: number, supervise = false, now = 0) =>
  stepWith(state, {
    _tag: "Receive",
    message: new WorkerMessages.LaunchDriver({
      driverId,
      driverDesc: new Descriptions.DriverDescription({
        appUrl: "file:///a.js",
        mem: 512,
        cores,
        supervise,
        command,
        resourceReqs: []
      }),
      resources: {}
    })
  }, now)

describe("WorkerCore registration", () => {
  it("registers with every master, then retries on Spark's schedule and gives up after 16 attempts", () => {
    const state = WorkerCore.make(config(1.2))
    const start = stepWith(state, { _tag: "Start" })
    assert.deepStrictEqual(tags(start), ["Send RegisterWorker 10.0.0.1", "Send RegisterWorker 10.0.0.2", "StartTimer"])
    // 10 s scaled by the fuzz factor.
    assert.deepStrictEqual(start.find((c) => c._tag === "StartTimer"), {
      _tag: "StartTimer",
      name: "registration",
      input: { _tag: "ReregisterWithMaster" },
      delayMillis: 12_000,
      periodMillis: 12_000
    })
    const timers: Array<number> = []
    for (let attempt = 1; attempt <= 16; attempt++) {
      const tick = stepWith(state, { _tag: "ReregisterWithMaster" })
      assert.deepStrictEqual(tags(tick).filter((t) => t.startsWith("Send")), [
        "Send RegisterWorker 10.0.0.1",
        "Send RegisterWorker 10.0.0.2"
      ])
      for (const c of tick) if (c._tag === "StartTimer") timers.push(attempt, c.periodMillis!)
      assert.isFalse(tick.some((c) => c._tag === "Exit"))
    }
    // After the 6th retry the interval becomes 60 s (× fuzz).
    assert.deepStrictEqual(timers, [6, 72_000])
    const last = stepWith(state, { _tag: "ReregisterWithMaster" })
    assert.deepStrictEqual(last.find((c) => c._tag === "Exit"), {
      _tag: "Exit",
      code: 1,
      reason: "All masters are unresponsive"
    })
  })

  it("once registered it stops retrying, heartbeats every timeout/4 and reports what it runs", () => {
    const state = WorkerCore.make(config())
    stepWith(state, { _tag: "Start" })
    const reply = stepWith(state, {
      _tag: "Receive",
      message: registeredWith(masterA)
    })
    assert.deepStrictEqual(tags(reply), [
      "CancelTimer",
      "StartTimer",
      "StartTimer",
      "Send WorkerLatestState 10.0.0.1"
    ])
    assert.deepStrictEqual(
      reply.filter((c) => c._tag === "StartTimer").map((c) =>
        c._tag === "StartTimer" && [c.name, c.delayMillis, c.periodMillis]
      ),
      [["heartbeat", 0, 15_000], ["cleanup", 1_800_000, 1_800_000]]
    )
    assert.deepStrictEqual(tags(stepWith(state, { _tag: "SendHeartbeat" })), ["Send Heartbeat 10.0.0.1"])
  })

  it("a refused registration exits 1, but only while not registered", () => {
    const fresh = WorkerCore.make(config())
    stepWith(fresh, { _tag: "Start" })
    const failed = stepWith(fresh, {
      _tag: "Receive",
      message: new WorkerMessages.RegisterWorkerFailed({ message: "Attempted to re-register worker at same address" })
    })
    assert.strictEqual(failed.find((c) => c._tag === "Exit")?._tag, "Exit")
    const state = registered()
    const ignored = stepWith(state, {
      _tag: "Receive",
      message: new WorkerMessages.RegisterWorkerFailed({ message: "late" })
    })
    assert.isFalse(ignored.some((c) => c._tag === "Exit"))
  })

  it("a lost master connection starts a new registration cycle, but not a second one", () => {
    const state = registered()
    const lost = stepWith(state, { _tag: "Disconnected", peer: masterA.address, connection: 1 })
    assert.deepStrictEqual(tags(lost), ["Send RegisterWorker 10.0.0.1", "Send RegisterWorker 10.0.0.2", "StartTimer"])
    assert.deepStrictEqual(tags(stepWith(state, { _tag: "SendHeartbeat" })), [])
    const again = stepWith(state, {
      _tag: "Receive",
      message: new WorkerMessages.ReconnectWorker({ masterUrl: masterA.address.url })
    })
    assert.deepStrictEqual(tags(again), [])
    // Retries go to every master, the one seen before included: another may lead by now (not Spark's way).
    assert.deepStrictEqual(tags(stepWith(state, { _tag: "ReregisterWithMaster" })), [
      "Send RegisterWorker 10.0.0.1",
      "Send RegisterWorker 10.0.0.2"
    ])
  })

  it("its master answering as a standby starts a new registration cycle; another standby's answer does not", () => {
    const state = registered()
    const standby = (sender: RpcAddress.RpcAddress) =>
      WorkerCore.step(state, {
        _tag: "Receive",
        message: new WorkerMessages.MasterInStandby(),
        ask: undefined,
        sender,
        peer: sender,
        connection: 1,
        now: 0
      })
    assert.deepStrictEqual(tags(standby(masterB.address)), [])
    assert.deepStrictEqual(tags(standby(masterA.address)), [
      "Send RegisterWorker 10.0.0.1",
      "Send RegisterWorker 10.0.0.2",
      "StartTimer"
    ])
    assert.deepStrictEqual(tags(stepWith(state, { _tag: "SendHeartbeat" })), [])
    // While it registers, standbys' answers to its registrations change nothing.
    assert.deepStrictEqual(tags(standby(masterA.address)), [])
  })

  it("MasterChanged switches master and answers with everything the worker runs", () => {
    const state = registered()
    launchExecutor(state, 0)
    launchDriver(state, Ids.DriverId.make("driver-1"), 1)
    const changed = stepWith(state, {
      _tag: "Receive",
      message: new WorkerMessages.MasterChanged({ master: masterB, masterWebUiUrl: "" })
    })
    const response = changed.find((c) => c._tag === "Send")
    assert.deepStrictEqual(response?._tag === "Send" ? response.to.address : undefined, masterB.address)
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
    const running = stepWith(state, {
      _tag: "ExecutorChanged",
      appId,
      execId: 0,
      state: "RUNNING",
      message: undefined,
      exitStatus: undefined
    })
    assert.deepStrictEqual(tags(running), ["SyncState ExecutorStateChanged 10.0.0.1"])
    assert.strictEqual(state.coresUsed, 3)
    const exited = {
      _tag: "ExecutorChanged",
      appId,
      execId: 0,
      state: "EXITED",
      message: "Command exited with code 0",
      exitStatus: 0
    } as const
    stepWith(state, exited)
    assert.strictEqual(state.coresUsed, 0)
    assert.strictEqual(state.memoryUsed, 0)
    stepWith(state, exited)
    assert.strictEqual(state.coresUsed, 0)
    const snapshot = WorkerCore.workerState(state)
    assert.deepStrictEqual(snapshot.finishedExecutors.map((e) => [e.execId, e.state]), [[0, "EXITED"]])
  })

  // Seed 7941 of the simulation: the app's executors 0 and 1 ended while the master was a standby; elected again,
  // it recovered the app from its store, numbered executors from 0 again and launched 0 and 1 on the workers they
  // had ended on. The workers ignored the launches, and the master waited for ever on two launching executors
  // (their cores held, the app's jobs never run). The end is told again instead, and the master moves on.
  it("a launch of an executor that already ended here is answered with its end, not run again", () => {
    const state = registered()
    launchExecutor(state, 0, 3)
    const ended = stepWith(state, {
      _tag: "ExecutorChanged",
      appId,
      execId: 0,
      state: "EXITED",
      message: "Command exited with code 137",
      exitStatus: 137
    })
    answerSyncs(state, ended)
    const again = launchExecutor(state, 0, 3)
    assert.deepStrictEqual(tags(again), ["SyncState ExecutorStateChanged 10.0.0.1"])
    const told = again.find((c) => c._tag === "SyncState")
    const message = told?._tag === "SyncState" ? told.message as WorkerMessages.ExecutorStateChanged : undefined
    assert.deepStrictEqual([message?.execId, message?.state], [0, "EXITED"])
    assert.strictEqual(state.coresUsed, 0)
  })

  it("signalled, it tells its master, refuses launches, and exits once its executor has ended; disabled, it runs on", () => {
    const state = registered()
    launchExecutor(state, 0)
    const signalled = stepWith(state, { _tag: "DecommissionSignal" })
    assert.deepStrictEqual(tags(signalled), ["Send WorkerDecommissioning 10.0.0.1"])
    // A launch the master sent before it heard is refused, and the master told so.
    const refused = launchExecutor(state, 1)
    assert.deepStrictEqual(tags(refused), ["SyncState ExecutorStateChanged 10.0.0.1"])
    const ended = stepWith(state, {
      _tag: "ExecutorChanged",
      appId,
      execId: 0,
      state: "EXITED",
      message: undefined,
      exitStatus: 0
    })
    assert.notInclude(tags(ended), "Exit")
    // Once the master has heard every end, it exits.
    const answered = [...state.syncs.values()].flatMap((sync) =>
      tags(stepWith(state, { _tag: "StateSyncAnswered", key: sync.key, askId: sync.askId, taken: true }))
    )
    assert.strictEqual(state.syncs.size, 0)
    assert.deepStrictEqual(answered.filter((tag) => tag === "Exit"), ["Exit"])
    const disabled = WorkerCore.make({ ...config(), decommissionEnabled: false })
    stepWith(disabled, { _tag: "DecommissionSignal" })
    assert.isFalse(disabled.decommissioned)
  })

  it("cleans an app's directories once it is finished and none of its executors is left; kills those left", () => {
    const state = registered()
    launchExecutor(state, 0)
    const early = stepWith(state, {
      _tag: "Receive",
      message: new WorkerMessages.ApplicationFinished({ id: appId })
    })
    // One of its executors still running is killed: the app has finished (and a master that no longer counted the
    // executor, its worker decommissioned, never would).
    assert.deepStrictEqual(tags(early), ["KillExecutor"])
    const last = stepWith(state, {
      _tag: "ExecutorChanged",
      appId,
      execId: 0,
      state: "KILLED",
      message: undefined,
      exitStatus: undefined
    })
    assert.deepStrictEqual(tags(last), ["CleanupApplication", "SyncState ExecutorStateChanged 10.0.0.1"])
  })

  it("tells each master it registers with which apps' data it holds, until the data is cleaned up", () => {
    const state = registered()
    launchExecutor(state, 0)
    stepWith(state, { _tag: "ExecutorChanged", appId, execId: 0, state: "EXITED", message: undefined, exitStatus: 0 })
    // Cut off from the master while the app ends: the master that takes it back may never have known the app.
    const heldApps = () => {
      stepWith(state, { _tag: "Disconnected", peer: masterA.address, connection: 1 })
      const again = stepWith(state, {
        _tag: "Receive",
        message: registeredWith(masterB)
      })
      return again.flatMap((c) =>
        c._tag === "Send" && c.message instanceof WorkerMessages.WorkerLatestState ? [c.message.appIds] : []
      )
    }
    assert.deepStrictEqual(heldApps(), [[appId]])
    const finished = stepWith(state, {
      _tag: "Receive",
      message: new WorkerMessages.ApplicationFinished({ id: appId })
    })
    assert.deepStrictEqual(tags(finished), ["CleanupApplication"])
    assert.deepStrictEqual(heldApps(), [[]])
    assert.deepStrictEqual(WorkerCore.validate(state), [])
  })

  it("forwards a driver's final state to the master and frees its resources", () => {
    const state = registered()
    const driverId = Ids.DriverId.make("driver-2")
    launchDriver(state, driverId, 2)
    assert.strictEqual(state.coresUsed, 2)
    const ended = stepWith(state, { _tag: "DriverProcessEnded", driverId, exitCode: 1, exception: undefined })
    assert.deepStrictEqual(tags(ended), ["ReleaseDriver", "SyncState DriverStateChanged 10.0.0.1"])
    assert.strictEqual(state.coresUsed, 0)
    assert.strictEqual(state.memoryUsed, 0)
  })

  it("a launch that finds the worker silent past the worker timeout (paused) is refused and reported, not run", () => {
    const state = registered()
    stepWith(state, { _tag: "SendHeartbeat" }, 10_000)
    const desc = new Descriptions.DriverDescription({
      appUrl: "file:///a.js",
      mem: 512,
      cores: 1,
      supervise: true,
      command,
      resourceReqs: []
    })
    // Within the timeout of the last heartbeat a launch runs; past it, the master has given the worker up.
    const driver = (id: string) =>
      new WorkerMessages.LaunchDriver({ driverId: Ids.DriverId.make(id), driverDesc: desc, resources: {} })
    assert.deepStrictEqual(tags(stepWith(state, { _tag: "Receive", message: driver("driver-1") }, 70_000)), [
      "LaunchDriver"
    ])
    const late = stepWith(state, { _tag: "Receive", message: driver("driver-2") }, 70_001)
    assert.deepStrictEqual(tags(late), ["SyncState DriverStateChanged 10.0.0.1"])
    const report = late.find((c) => c._tag === "SyncState")!.message as WorkerMessages.DriverStateChanged
    assert.strictEqual(report.state, "ERROR")
    const executor = new WorkerMessages.LaunchExecutor({
      masterUrl: masterA.address.url,
      appId,
      execId: 7,
      appDesc,
      cores: 1,
      memory: 512,
      resources: {}
    })
    const lateExecutor = stepWith(state, { _tag: "Receive", message: executor }, 70_002)
    assert.deepStrictEqual(tags(lateExecutor), ["SyncState ExecutorStateChanged 10.0.0.1"])
    assert.deepStrictEqual([state.coresUsed, state.memoryUsed, state.drivers.size], [1, 512, 1])
    assert.deepStrictEqual(WorkerCore.validate(state), [])
    // Once heartbeats go out again, launches run again.
    stepWith(state, { _tag: "SendHeartbeat" }, 80_000)
    assert.deepStrictEqual(tags(stepWith(state, { _tag: "Receive", message: executor }, 80_001)), ["LaunchExecutor"])
  })

  it("runs only the installation's entries: any other module is refused and reported, never launched", () => {
    const state = registered()
    for (const mainModule of ["file:///tmp/app.mjs", "/tmp/app.mjs", "@kindling/executor/main", "node:fs"]) {
      const refused = stepWith(state, {
        _tag: "Receive",
        message: new WorkerMessages.LaunchDriver({
          driverId: Ids.DriverId.make(`driver-${mainModule}`),
          driverDesc: new Descriptions.DriverDescription({
            appUrl: "file:///a.js",
            mem: 512,
            cores: 1,
            supervise: false,
            command: commandOf(mainModule),
            resourceReqs: []
          }),
          resources: {}
        })
      })
      assert.deepStrictEqual(tags(refused), ["SyncState DriverStateChanged 10.0.0.1"])
      const report = refused.find((c) => c._tag === "SyncState")!.message as WorkerMessages.DriverStateChanged
      assert.strictEqual(report.state, "ERROR")
      assert.deepStrictEqual(
        Option.map(report.exception, (e) => e.name),
        Option.some("DriverLaunchFailed")
      )
      assert.include(
        Option.getOrThrow(report.exception).message,
        `mainModule ${JSON.stringify(mainModule)} is not a driver entry of the Kindling installation; a worker ` +
          "starts a driver only with @kindling/driver/main or @kindling/worker/DriverWrapper"
      )
    }
    const executor = stepWith(state, {
      _tag: "Receive",
      message: new WorkerMessages.LaunchExecutor({
        masterUrl: masterA.address.url,
        appId,
        execId: 3,
        appDesc: appDescOf(commandOf("@kindling/worker/DriverWrapper")),
        cores: 1,
        memory: 512,
        resources: {}
      })
    })
    assert.deepStrictEqual(tags(executor), ["SyncState ExecutorStateChanged 10.0.0.1"])
    const report = executor.find((c) => c._tag === "SyncState")!.message as WorkerMessages.ExecutorStateChanged
    assert.strictEqual(report.state, "FAILED")
    assert.deepStrictEqual(
      report.message,
      Option.some(
        `Executor ${appId}/3 could not be launched: mainModule "@kindling/worker/DriverWrapper" is not an executor ` +
          "entry of the Kindling installation; a worker starts an executor only with @kindling/executor/main"
      )
    )
    assert.deepStrictEqual([state.coresUsed, state.memoryUsed, state.drivers.size, state.executors.size], [0, 0, 0, 0])
    assert.deepStrictEqual(WorkerCore.validate(state), [])
  })

  it("tells a driver's end again to every new master until one acknowledges it", () => {
    const state = registered()
    const driverId = Ids.DriverId.make("driver-3")
    launchDriver(state, driverId, 1)
    const driverEnded = stepWith(state, { _tag: "DriverProcessEnded", driverId, exitCode: 0, exception: undefined })
    // The master was a standby by then and did not take it; the next one hears of the end in the state response
    // and again as a DriverStateChanged of its own.
    answerSyncs(state, driverEnded, false)
    const changed = stepWith(state, {
      _tag: "Receive",
      message: new WorkerMessages.MasterChanged({ master: masterB, masterWebUiUrl: "" })
    })
    const response = changed.find((c) => c._tag === "Send" && c.message._tag === "WorkerSchedulerStateResponse")
    const ended = response?._tag === "Send"
      ? (response.message as WorkerMessages.WorkerSchedulerStateResponse).endedDrivers
      : []
    assert.deepStrictEqual(ended.map((d) => [d.driverId, d.state]), [[driverId, "FINISHED"]])
    assert.deepStrictEqual(tags(changed).filter((t) => t.startsWith("SyncState")), [
      "SyncState DriverStateChanged 10.0.0.2"
    ])
    // Once a master acknowledged it, no later master is told.
    answerSyncs(state, changed)
    const again = stepWith(state, {
      _tag: "Receive",
      message: new WorkerMessages.MasterChanged({ master: masterA, masterWebUiUrl: "" })
    })
    assert.deepStrictEqual(tags(again).filter((t) => t.startsWith("SyncState")), [])
    assert.deepStrictEqual(
      again.flatMap((c) =>
        c._tag === "Send" && c.message instanceof WorkerMessages.WorkerSchedulerStateResponse
          ? c.message.endedDrivers
          : []
      ),
      []
    )
  })

  it("keeps a bounded list of finished executors, dropping the oldest tenth", () => {
    const state = registered()
    for (let i = 0; i < 5; i++) {
      launchExecutor(state, i, 1)
      stepWith(state, {
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
    const cleanup = stepWith(state, { _tag: "WorkDirCleanup" })
    assert.deepStrictEqual(cleanup, [{ _tag: "CleanupWorkDir", keep: [appId], ttlMillis: 604_800_000 }])
  })
})

describe("WorkerCore fencing of supervised drivers", () => {
  const { leaseMillis } = config().driverFencing!
  const heartbeatAt = (state: WorkerCore.State, now: number) => {
    const sent = stepWith(state, { _tag: "SendHeartbeat" }, now)
    const heartbeat = sent.flatMap((c) =>
      c._tag === "Send" && c.message instanceof WorkerMessages.Heartbeat ? [c.message] : []
    )[0]!
    return heartbeat.seq!
  }
  const acknowledge = (state: WorkerCore.State, seq: number, now: number) =>
    stepWith(state, { _tag: "Receive", message: new WorkerMessages.HeartbeatAcknowledged({ seq }) }, now)
  const kills = (commands: ReadonlyArray<WorkerCore.Command>) =>
    commands.flatMap((c) => (c._tag === "KillDriver" ? [c.driverId] : []))
  const leaseTimer = (commands: ReadonlyArray<WorkerCore.Command>) =>
    commands.flatMap((c) => (c._tag === "StartTimer" && c.input._tag === "LeaseLapsed" ? [c.delayMillis] : []))

  it("registers with its fence; the lease runs from the sending of the last acknowledged heartbeat", () => {
    const register = stepWith(WorkerCore.make(config()), { _tag: "Start" }).flatMap((c) =>
      c._tag === "Send" && c.message instanceof WorkerMessages.RegisterWorker ? [c.message] : []
    )
    assert.strictEqual(register[0]!.driverFenceMillis, 130_000)
    const state = registered()
    const first = heartbeatAt(state, 1_000)
    const second = heartbeatAt(state, 16_000)
    // The later heartbeat's acknowledgement also settles the earlier one, whose own then extends nothing.
    assert.deepStrictEqual(leaseTimer(acknowledge(state, second, 16_050)), [16_000 + leaseMillis - 16_050])
    assert.deepStrictEqual(leaseTimer(acknowledge(state, first, 16_060)), [])
    assert.strictEqual(state.leaseFrom, 16_000)
    // An acknowledgement of a heartbeat never sent is ignored.
    assert.deepStrictEqual(leaseTimer(acknowledge(state, 99, 16_070)), [])
  })

  it("a lapsed lease stops the supervised drivers, which end RELAUNCHING; the others run on", () => {
    const state = registered()
    const supervised = Ids.DriverId.make("driver-s")
    const plain = Ids.DriverId.make("driver-p")
    launchDriver(state, supervised, 1, true)
    launchDriver(state, plain, 1, false)
    acknowledge(state, heartbeatAt(state, 1_000), 1_010)
    // Renewed meanwhile: a tick of an older timer changes nothing.
    acknowledge(state, heartbeatAt(state, 2_000), 2_010)
    assert.deepStrictEqual(kills(stepWith(state, { _tag: "LeaseLapsed" }, 1_000 + leaseMillis)), [])
    const lapsed = stepWith(state, { _tag: "LeaseLapsed" }, 2_000 + leaseMillis)
    assert.deepStrictEqual(kills(lapsed), [supervised])
    assert.deepStrictEqual(kills(stepWith(state, { _tag: "LeaseLapsed" }, 3_000 + leaseMillis)), [], "stopped once")
    const ended = stepWith(state, {
      _tag: "DriverProcessEnded",
      driverId: supervised,
      exitCode: 143,
      exception: undefined
    })
    const told = ended.flatMap((
      c
    ) => (c._tag === "SyncState" ? [c.message] : []))[0] as WorkerMessages.DriverStateChanged
    assert.strictEqual(told.state, "RELAUNCHING")
    assert.strictEqual(Option.getOrThrow(told.exception).name, "DriverFenced")
    assert.deepStrictEqual([...state.drivers.keys()], [plain])
  })

  it("a kill asked for while the fencing stops a driver makes it end KILLED, without a second kill", () => {
    const state = registered()
    const driverId = Ids.DriverId.make("driver-s")
    launchDriver(state, driverId, 1, true)
    acknowledge(state, heartbeatAt(state, 0), 10)
    stepWith(state, { _tag: "LeaseLapsed" }, leaseMillis)
    assert.deepStrictEqual(
      kills(stepWith(state, { _tag: "Receive", message: new WorkerMessages.KillDriver({ driverId }) })),
      []
    )
    const ended = stepWith(state, { _tag: "DriverProcessEnded", driverId, exitCode: 143, exception: undefined })
    const told = ended.flatMap((
      c
    ) => (c._tag === "SyncState" ? [c.message] : []))[0] as WorkerMessages.DriverStateChanged
    assert.strictEqual(told.state, "KILLED")
  })

  it("a supervised driver launched while the lease has lapsed is fenced as the launch is handled", () => {
    const state = registered()
    acknowledge(state, heartbeatAt(state, 0), 10)
    // Heartbeats go out (the master hears them, and launches), but no acknowledgement comes back.
    heartbeatAt(state, leaseMillis)
    const launched = launchDriver(state, Ids.DriverId.make("driver-late"), 1, true, leaseMillis + 5)
    assert.deepStrictEqual(leaseTimer(launched), [0])
    assert.deepStrictEqual(kills(stepWith(state, { _tag: "LeaseLapsed" }, leaseMillis + 5)), ["driver-late"])
  })

  it("with a master that never acknowledges (one that does not fence, as Spark's) nothing is ever stopped", () => {
    const state = registered()
    launchDriver(state, Ids.DriverId.make("driver-s"), 1, true)
    for (let now = 0; now < 10 * leaseMillis; now += 15_000) heartbeatAt(state, now)
    assert.deepStrictEqual(kills(stepWith(state, { _tag: "LeaseLapsed" }, 10 * leaseMillis)), [])
    // Heartbeats that no acknowledgement can extend the lease with any more are not kept.
    assert.isAtMost(state.heartbeatsOut.size, leaseMillis / 15_000 + 1)
  })
})

describe("WorkerCore supervised drivers", () => {
  const driverId = Ids.DriverId.make("driver-s")
  const exits = (state: WorkerCore.State, exitCode: number | undefined, now: number) =>
    stepWith(state, {
      _tag: "DriverProcessEnded",
      driverId,
      exitCode,
      exception: exitCode === 1 ? new Descriptions.RemoteException({ name: "DriverFailed", message: "m" }) : undefined
    }, now)
  const relaunchTimers = (commands: ReadonlyArray<WorkerCore.Command>) =>
    commands.flatMap((c) =>
      c._tag === "StartTimer" && c.input._tag === "RelaunchDriver" ? [[c.name, c.delayMillis]] : []
    )
  const told = (commands: ReadonlyArray<WorkerCore.Command>) =>
    commands.flatMap((c) =>
      c._tag === "SyncState" && c.message instanceof WorkerMessages.DriverStateChanged ? [c.message.state] : []
    )
  const tick = (state: WorkerCore.State, now: number) => stepWith(state, { _tag: "RelaunchDriver", driverId }, now)

  it("relaunches a failed driver after 1, 2, 4 s, starting over after a run of over 5 s, until it exits 0", () => {
    const state = registered()
    launchDriver(state, driverId, 1, true)
    // Each failure in a row doubles the wait; the driver keeps its resources, and no master hears of it.
    let now = 100
    for (const wait of [1_000, 2_000, 4_000]) {
      const failed = exits(state, 1, now)
      assert.deepStrictEqual(relaunchTimers(failed), [[`relaunch:${driverId}`, wait]])
      assert.deepStrictEqual(tags(failed), ["StartTimer"])
      assert.deepStrictEqual([state.drivers.has(driverId), state.coresUsed], [true, 1])
      now += wait
      assert.deepStrictEqual(tags(tick(state, now)), ["RestartDriver"])
      now += 100
    }
    // A run of 6 s counts as a success: the next wait is the first one again.
    now += 5_900
    assert.deepStrictEqual(relaunchTimers(exits(state, 1, now)), [[`relaunch:${driverId}`, 1_000]])
    now += 1_000
    tick(state, now)
    // Exactly 5 s does not.
    now += 5_000
    assert.deepStrictEqual(relaunchTimers(exits(state, 1, now)), [[`relaunch:${driverId}`, 2_000]])
    now += 2_000
    tick(state, now)
    const finished = exits(state, 0, now + 10)
    assert.deepStrictEqual(tags(finished), ["ReleaseDriver", "SyncState DriverStateChanged 10.0.0.1"])
    assert.deepStrictEqual(told(finished), ["FINISHED"])
    assert.deepStrictEqual([state.drivers.size, state.coresUsed, state.memoryUsed], [0, 0, 0])
  })

  it("a kill during the back-off cancels the relaunch and ends the driver KILLED at once; a late tick runs nothing", () => {
    const state = registered()
    launchDriver(state, driverId, 1, true)
    exits(state, 1, 100)
    const killed = stepWith(state, { _tag: "Receive", message: new WorkerMessages.KillDriver({ driverId }) }, 500)
    // No process to kill: the driver ends here, and its runner is let go.
    assert.deepStrictEqual(tags(killed), ["CancelTimer", "ReleaseDriver", "SyncState DriverStateChanged 10.0.0.1"])
    assert.deepStrictEqual(killed.find((c) => c._tag === "CancelTimer"), {
      _tag: "CancelTimer",
      name: `relaunch:${driverId}`
    })
    assert.deepStrictEqual(told(killed), ["KILLED"])
    assert.deepStrictEqual(tags(tick(state, 1_100)), [])
    assert.deepStrictEqual(WorkerCore.validate(state), [])
  })

  it("a driver killed while it runs ends KILLED, whatever its exit code, and is not relaunched", () => {
    const state = registered()
    launchDriver(state, driverId, 1, true)
    const kill = stepWith(state, { _tag: "Receive", message: new WorkerMessages.KillDriver({ driverId }) })
    assert.deepStrictEqual(tags(kill), ["KillDriver"])
    const ended = exits(state, 143, 100)
    assert.deepStrictEqual(relaunchTimers(ended), [])
    assert.deepStrictEqual(told(ended), ["KILLED"])
    // Killed before its process started (still fetching its artifact, say): KILLED as well.
    launchDriver(state, Ids.DriverId.make("driver-t"), 1, true)
    stepWith(state, {
      _tag: "Receive",
      message: new WorkerMessages.KillDriver({ driverId: Ids.DriverId.make("driver-t") })
    })
    const notStarted = stepWith(state, {
      _tag: "DriverProcessEnded",
      driverId: Ids.DriverId.make("driver-t"),
      exitCode: undefined,
      exception: undefined
    })
    assert.deepStrictEqual(told(notStarted), ["KILLED"])
  })

  it("an unsupervised driver's failure ends it FAILED with what it said; a relaunch that cannot start is ERROR", () => {
    const state = registered()
    const plain = Ids.DriverId.make("driver-p")
    launchDriver(state, plain, 1, false)
    const failed = stepWith(state, {
      _tag: "DriverProcessEnded",
      driverId: plain,
      exitCode: 3,
      exception: new Descriptions.RemoteException({ name: "DriverFailed", message: "The driver exited with code 3" })
    })
    const message = failed.flatMap((c) =>
      c._tag === "SyncState" ? [c.message] : []
    )[0] as WorkerMessages.DriverStateChanged
    assert.deepStrictEqual(
      [message.state, Option.map(message.exception, (e) => e.message)],
      ["FAILED", Option.some("The driver exited with code 3")]
    )
    launchDriver(state, driverId, 1, true)
    exits(state, 1, 0)
    tick(state, 1_000)
    const error = stepWith(state, {
      _tag: "DriverLaunchFailed",
      driverId,
      exception: new Descriptions.RemoteException({ name: "DriverLaunchFailed", message: "spawn ENOMEM" })
    })
    assert.deepStrictEqual(told(error), ["ERROR"])
    assert.deepStrictEqual(tags(error), ["ReleaseDriver", "SyncState DriverStateChanged 10.0.0.1"])
  })

  // A fencing worker whose lease was granted at 10 (a beat at 0, acknowledged), running a supervised driver since 20
  // that failed half a second before the lease runs out: its relaunch is due after the lease has lapsed.
  const failingWithinLease = (leaseMillis: number) => {
    const state = registered()
    const seq = stepWith(state, { _tag: "SendHeartbeat" }, 0).flatMap((c) =>
      c._tag === "Send" && c.message instanceof WorkerMessages.Heartbeat ? [c.message.seq!] : []
    )[0]!
    stepWith(state, { _tag: "Receive", message: new WorkerMessages.HeartbeatAcknowledged({ seq }) }, 10)
    launchDriver(state, driverId, 1, true, 20)
    exits(state, 1, leaseMillis - 500)
    return state
  }

  it("a lapsed lease during the back-off ends the driver RELAUNCHING, for a master to run it elsewhere", () => {
    const { leaseMillis } = config().driverFencing!
    const state = failingWithinLease(leaseMillis)
    const lapsed = stepWith(state, { _tag: "LeaseLapsed" }, leaseMillis)
    assert.deepStrictEqual(tags(lapsed), ["CancelTimer", "ReleaseDriver", "SyncState DriverStateChanged 10.0.0.1"])
    assert.deepStrictEqual(told(lapsed), ["RELAUNCHING"])
    assert.deepStrictEqual(tags(tick(state, leaseMillis + 500)), [])
  })

  it("a relaunch due once the lease has lapsed is fenced as it is handled, as a launch would be", () => {
    const { leaseMillis } = config().driverFencing!
    const state = failingWithinLease(leaseMillis)
    // The relaunch's tick is handled before the lease's.
    const relaunched = tick(state, leaseMillis + 500)
    assert.deepStrictEqual(tags(relaunched), ["RestartDriver", "StartTimer"])
    assert.deepStrictEqual(
      relaunched.flatMap((c) => c._tag === "StartTimer" ? [[c.input._tag, c.delayMillis]] : []),
      [["LeaseLapsed", 0]]
    )
    assert.deepStrictEqual(tags(stepWith(state, { _tag: "LeaseLapsed" }, leaseMillis + 500)), ["KillDriver"])
  })
})

describe("WorkerCore model", () => {
  const maxAttempts = config().executorStateSyncMaxAttempts
  // What the worker's processes would be, as far as its commands made them: launched once, ended at most once.
  interface World {
    readonly state: WorkerCore.State
    /** Drivers with a runner (launched, not released yet). */
    readonly drivers: Set<string>
    /** Drivers whose process runs (launched or restarted, its run not ended yet): one at most each. */
    readonly driverProcesses: Set<string>
    /** When each driver's process last started, and the back-off it last waited. */
    readonly driverRuns: Map<string, { startedAt: number; backoff: number | undefined }>
    /** The relaunch timers armed, by driver, with when they are due. */
    readonly relaunches: Map<string, number>
    /** Drivers a kill or the fencing stopped: never run again. */
    readonly stopped: Set<string>
    readonly executors: Set<string>
    /** The state syncs asked and not answered yet, by executor or driver. */
    readonly asks: Map<string, Extract<WorkerCore.Command, { _tag: "SyncState" }>>
    /** Failed attempts of each message told. */
    readonly failures: Map<object, number>
    /** State syncs waiting to retry. */
    readonly retries: Set<string>
    /** The time of the next step: ops advance it. */
    readonly clock: { now: number }
    /** Whether the worker has exited, decommissioned and drained. */
    drainedExit: boolean
  }

  type Op = (world: World) => Given | undefined

  const pickOf = <A>(items: Iterable<A>, n: number): A | undefined => {
    const all = [...items]
    return all.length === 0 ? undefined : all[n % all.length]
  }
  const masterOf = (n: number) => (n % 2 === 0 ? masterA : masterB)
  const driverDescription = (supervise: boolean) =>
    new Descriptions.DriverDescription({
      appUrl: "file:///a.js",
      mem: 256,
      cores: 1,
      supervise,
      command,
      resourceReqs: []
    })
  const { leaseMillis } = config().driverFencing!

  const ops: fc.Arbitrary<Op> = fc.oneof(
    fc.tuple(fc.nat(), fc.boolean()).map(([n, duplicate]): Op => () => ({
      _tag: "Receive",
      message: registeredWith(masterOf(n), "", duplicate)
    })),
    fc.nat().map((n): Op => () => ({
      _tag: "Receive",
      message: new WorkerMessages.MasterChanged({ master: masterOf(n), masterWebUiUrl: "" })
    })),
    fc.constant<Op>(() => ({ _tag: "Receive", message: new WorkerMessages.MasterInStandby() })),
    fc.constant<Op>(() => ({ _tag: "Receive", message: new WorkerMessages.ReconnectWorker({ masterUrl: "x" }) })),
    fc.constant<Op>(() => ({ _tag: "Receive", message: new WorkerMessages.RegisterWorkerFailed({ message: "no" }) })),
    fc.tuple(fc.nat({ max: 20 }), fc.integer({ min: 1, max: 4 }), fc.boolean()).map(
      ([execId, cores, right]): Op => (world) => ({
        _tag: "Receive",
        message: new WorkerMessages.LaunchExecutor({
          masterUrl: right ? world.state.master?.address.url ?? "none" : "kindling://elsewhere:1",
          appId,
          execId,
          appDesc,
          cores,
          memory: 512,
          resources: {}
        })
      })
    ),
    fc.nat().map((n): Op => (world) => {
      const fullId = pickOf(world.state.executors.keys(), n)
      if (fullId === undefined) return undefined
      return {
        _tag: "Receive",
        message: new WorkerMessages.KillExecutor({
          masterUrl: world.state.master?.address.url ?? "none",
          appId,
          execId: Number(fullId.split("/")[1])
        })
      }
    }),
    fc.tuple(fc.nat({ max: 20 }), fc.boolean()).map(([n, supervise]): Op => () => ({
      _tag: "Receive",
      message: new WorkerMessages.LaunchDriver({
        driverId: Ids.DriverId.make(`driver-${n}`),
        driverDesc: driverDescription(supervise),
        resources: {}
      })
    })),
    // Time passes; heartbeats go out, a master acknowledges one (one sent, mostly); the lease timer ticks.
    {
      weight: 3,
      arbitrary: fc.integer({ min: 1, max: 90_000 }).map((millis): Op => (world) => {
        world.clock.now += millis
        return undefined
      })
    },
    { weight: 3, arbitrary: fc.constant<Op>(() => ({ _tag: "SendHeartbeat" })) },
    {
      weight: 3,
      arbitrary: fc.nat().map((n): Op => (world) => ({
        _tag: "Receive",
        message: new WorkerMessages.HeartbeatAcknowledged({ seq: pickOf(world.state.heartbeatsOut.keys(), n) ?? n })
      }))
    },
    { weight: 3, arbitrary: fc.constant<Op>(() => ({ _tag: "LeaseLapsed" })) },
    fc.nat().map((n): Op => (world) => {
      const driverId = pickOf(world.state.drivers.keys(), n)
      return driverId === undefined
        ? undefined
        : { _tag: "Receive", message: new WorkerMessages.KillDriver({ driverId }) }
    }),
    fc.constant<Op>(() => ({ _tag: "Receive", message: new WorkerMessages.ApplicationFinished({ id: appId }) })),
    fc.constant<Op>(() => ({ _tag: "Receive", message: new WorkerMessages.DecommissionWorker() })),
    fc.constant<Op>(() => ({ _tag: "DecommissionSignal" })),
    fc.constantFrom<Op>(
      () => ({ _tag: "ReregisterWithMaster" }),
      () => ({ _tag: "SendHeartbeat" }),
      () => ({ _tag: "WorkDirCleanup" })
    ),
    // A driver's run ends: its process exits (0, failed, SIGTERMed, or never started once killed), or cannot start.
    {
      weight: 4,
      arbitrary: fc.tuple(fc.nat(), fc.constantFrom(0, 1, 1, 143, undefined, "launch failed" as const)).map((
        [n, end]
      ): Op =>
      (world) => {
        const driverId = pickOf(world.driverProcesses, n) as Ids.DriverId | undefined
        if (driverId === undefined) return undefined
        if (end === "launch failed") {
          return {
            _tag: "DriverLaunchFailed",
            driverId,
            exception: new Descriptions.RemoteException({ name: "DriverLaunchFailed", message: "no" })
          }
        }
        // A run ends before its process started only when a kill came first.
        const exitCode = end === undefined && !world.stopped.has(driverId) ? 1 : end
        return { _tag: "DriverProcessEnded", driverId, exitCode, exception: undefined }
      })
    },
    // A relaunch timer ticks when due (or a tick of one cancelled arrives late).
    {
      weight: 3,
      arbitrary: fc.tuple(fc.nat(), fc.boolean()).map(([n, late]): Op => (world) => {
        const driverId = pickOf(late ? world.driverRuns.keys() : world.relaunches.keys(), n) as Ids.DriverId | undefined
        if (driverId === undefined) return undefined
        world.clock.now = Math.max(world.clock.now, world.relaunches.get(driverId) ?? 0)
        return { _tag: "RelaunchDriver", driverId }
      })
    },
    fc.integer({ min: 1, max: 6_000 }).map((millis): Op => (world) => {
      world.clock.now += millis
      return undefined
    }),
    {
      weight: 4,
      arbitrary: fc.tuple(fc.nat(), fc.constantFrom<States.ExecutorState>("RUNNING", "EXITED", "KILLED", "FAILED")).map(
        (
          [n, state]
        ): Op =>
        (world) => {
          const fullId = pickOf(world.executors, n)
          if (fullId === undefined) return undefined
          return {
            _tag: "ExecutorChanged",
            appId,
            execId: Number(fullId.split("/")[1]),
            state,
            message: undefined,
            exitStatus: state === "EXITED" ? 0 : undefined
          }
        }
      )
    },
    fc.nat().map((n): Op => () => ({ _tag: "Disconnected", peer: masterOf(n).address, connection: 1 })),
    // The master's answers to the state syncs (failures more often than not), and the retries' timers.
    {
      weight: 3,
      arbitrary: fc.tuple(fc.nat(), fc.boolean()).map(([n, taken]): Op => (world) => {
        const ask = pickOf(world.asks.values(), n)
        return ask === undefined ? undefined : { _tag: "StateSyncAnswered", key: ask.key, askId: ask.askId, taken }
      })
    },
    {
      weight: 6,
      arbitrary: fc.tuple(fc.nat(), fc.boolean()).map(([n, timedOut]): Op => (world) => {
        const ask = pickOf(world.asks.values(), n)
        return ask === undefined
          ? undefined
          : { _tag: "StateSyncFailed", key: ask.key, askId: ask.askId, reason: "no answer", timedOut }
      })
    },
    {
      weight: 3,
      arbitrary: fc.nat().map((n): Op => (world) => {
        const key = pickOf(world.retries, n)
        return key === undefined ? undefined : { _tag: "RetryStateSync", key }
      })
    }
  )

  it("random histories keep the worker's invariants, launch each driver and executor once, and answer every query", () => {
    fc.assert(
      fc.property(fc.array(ops, { minLength: 1, maxLength: 80, size: "max" }), (history) => {
        const world: World = {
          state: WorkerCore.make(config()),
          drivers: new Set(),
          driverProcesses: new Set(),
          driverRuns: new Map(),
          relaunches: new Map(),
          stopped: new Set(),
          executors: new Set(),
          asks: new Map(),
          failures: new Map(),
          retries: new Set(),
          clock: { now: 0 },
          drainedExit: false
        }
        stepWith(world.state, { _tag: "Start" })
        for (const op of history) {
          const input = op(world)
          if (input === undefined) continue
          const decommissioned = world.state.decommissioned
          const { now } = world.clock
          const fencedBefore = new Set([...world.state.drivers.values()].filter((d) => d.stopping === "fence"))
          const before = input._tag === "DriverProcessEnded" ? world.state.drivers.get(input.driverId) : undefined
          const stoppingBefore = before?.stopping
          const commands = stepWith(world.state, input, now)
          assert.deepStrictEqual(WorkerCore.validate(world.state), [])
          // Fencing: only a lapsed lease stops a driver unasked, and then every supervised one; a driver ends
          // RELAUNCHING only if the fencing stopped it.
          const lapsed = world.state.leaseFrom !== undefined && now >= world.state.leaseFrom + leaseMillis
          const killedUnasked = commands.some((c) => c._tag === "KillDriver") &&
            !(input._tag === "Receive" && input.message._tag === "KillDriver")
          if (killedUnasked) assert.isTrue(lapsed, "a driver is stopped unasked only once the lease has lapsed")
          if (input._tag === "LeaseLapsed" && lapsed) {
            for (const driver of world.state.drivers.values()) {
              if (driver.desc.supervise) assert.isDefined(driver.stopping, `${driver.id} runs on past the lease`)
            }
          }
          // A driver stopped during its back-off has no process to end: the lapse of the lease ends it at once.
          for (const ended of world.state.finishedDrivers) {
            if (ended.state !== "RELAUNCHING" || !world.drivers.has(ended.id)) continue
            assert.isTrue(fencedBefore.has(ended) || input._tag === "LeaseLapsed", "RELAUNCHING only if fenced")
          }
          // Supervision: a run's end ends the driver, or — supervised, failed and not stopped — arms its relaunch,
          // after the first back-off again once a run lasted over 5 s, else after twice the last one.
          const relaunchArmed = commands.flatMap((c) =>
            c._tag === "StartTimer" && c.input._tag === "RelaunchDriver" ? [c] : []
          )
          if (before !== undefined && input._tag === "DriverProcessEnded") {
            const run = world.driverRuns.get(input.driverId)!
            const relaunches = before.desc.supervise && input.exitCode !== 0 && stoppingBefore === undefined
            assert.strictEqual(world.state.drivers.has(input.driverId), relaunches, "relaunched exactly when due")
            if (relaunches) {
              const { superviseInitialBackoffMillis: initial } = world.state.config
              const expected = run.backoff === undefined || now - run.startedAt > 5_000 ? initial : run.backoff * 2
              assert.deepStrictEqual(relaunchArmed.map((c) => [c.input, c.delayMillis]), [[
                { _tag: "RelaunchDriver", driverId: input.driverId },
                expected
              ]])
              run.backoff = expected
              world.relaunches.set(input.driverId, now + expected)
            } else {
              const ended = world.state.finishedDrivers.find((d) => d.id === input.driverId)!
              const expected = input.exitCode === 0
                ? "FINISHED"
                : stoppingBefore === "fence"
                ? "RELAUNCHING"
                : stoppingBefore === "kill"
                ? "KILLED"
                : "FAILED"
              assert.strictEqual(ended.state, expected)
            }
          } else {
            assert.deepStrictEqual(relaunchArmed, [], "only a run's end arms a relaunch")
          }
          for (const c of commands) {
            if (c._tag === "CancelTimer" && c.name.startsWith("relaunch:")) {
              const driverId = c.name.slice("relaunch:".length)
              assert.isTrue(world.relaunches.delete(driverId), "only an armed relaunch is cancelled")
              assert.isFalse(world.state.drivers.has(driverId as Ids.DriverId), "a cancelled relaunch ends the driver")
            }
          }
          if (input._tag === "RelaunchDriver") world.relaunches.delete(input.driverId)
          // A kill or the fencing stops a driver for good; one waiting for its relaunch never gets it.
          for (const driver of world.state.drivers.values()) {
            if (driver.stopping !== undefined) world.stopped.add(driver.id)
          }
          if (input._tag === "Receive" && input.message._tag === "KillDriver") world.stopped.add(input.message.driverId)
          for (const driverId of world.relaunches.keys()) {
            assert.isFalse(world.stopped.has(driverId), `${driverId} stopped, yet its relaunch is still armed`)
          }
          // What the input settles, before what its commands start.
          const failedMessage = input._tag === "StateSyncFailed" ? world.asks.get(input.key)!.message : undefined
          if (input._tag === "StateSyncAnswered" || input._tag === "StateSyncFailed") world.asks.delete(input.key)
          if (input._tag === "DriverProcessEnded" || input._tag === "DriverLaunchFailed") {
            world.driverProcesses.delete(input.driverId)
          }
          if (input._tag === "RetryStateSync") world.retries.delete(input.key)
          if (failedMessage !== undefined) {
            world.failures.set(failedMessage, (world.failures.get(failedMessage) ?? 0) + 1)
            // Giving up on an executor's state while connected to a master stops the worker, as Spark's.
            assert.strictEqual(
              commands.some((c) => c._tag === "Exit" && c.code === 1),
              world.failures.get(failedMessage) === maxAttempts && failedMessage._tag === "ExecutorStateChanged" &&
                world.state.connected
            )
          }
          // Decommissioned, it exits (0) exactly once nothing runs here and the master has heard of every end.
          const { state } = world
          const drained = state.decommissioned && state.executors.size === 0 && state.drivers.size === 0 &&
            state.syncs.size === 0
          const exitedDrained = commands.some((c) => c._tag === "Exit" && c.code === 0)
          if (exitedDrained) assert.isTrue(drained, "a decommissioned worker exits only once drained")
          world.drainedExit ||= exitedDrained
          if (drained) assert.isTrue(world.drainedExit, "a drained decommissioned worker exits")
          for (const c of commands) {
            if (c._tag === "LaunchExecutor") {
              const fullId = `${c.appId}/${c.execId}`
              assert.isFalse(decommissioned, "no executor is launched while decommissioned")
              world.executors.add(fullId)
            }
            if (c._tag === "LaunchDriver" || c._tag === "RestartDriver") {
              assert.isFalse(world.driverProcesses.has(c.driverId), `${c.driverId} runs twice`)
              // A launch is the master's (of a driver that ended here long enough ago to be forgotten, say).
              if (c._tag === "LaunchDriver") world.stopped.delete(c.driverId)
              assert.isFalse(world.stopped.has(c.driverId), `${c.driverId} runs again after it was stopped`)
              world.driverProcesses.add(c.driverId)
              world.driverRuns.set(c.driverId, {
                startedAt: now,
                backoff: c._tag === "LaunchDriver" ? undefined : world.driverRuns.get(c.driverId)!.backoff
              })
            }
            if (c._tag === "LaunchDriver") world.drivers.add(c.driverId)
            if (c._tag === "RestartDriver") {
              assert.strictEqual(input._tag === "RelaunchDriver" && input.driverId, c.driverId, "restarted when due")
            }
            if (c._tag === "ReleaseDriver") {
              assert.isFalse(world.driverProcesses.has(c.driverId), "a driver is let go only once its run ended")
              world.drivers.delete(c.driverId)
            }
            if (c._tag === "SyncState") {
              assert.isFalse(world.asks.has(c.key) || world.retries.has(c.key), "one ask at a time per executor")
              const failed = world.failures.get(c.message) ?? 0
              assert.isBelow(failed, maxAttempts, "a message is asked at most executorStateSyncMaxAttempts times")
              world.asks.set(c.key, c)
            }
            if (c._tag === "StartTimer" && c.input._tag === "RetryStateSync") world.retries.add(c.input.key)
          }
          if (input._tag === "ExecutorChanged" && input.state !== "RUNNING") {
            world.executors.delete(`${input.appId}/${input.execId}`)
          }
          // What the core thinks runs is what the world runs.
          assert.deepStrictEqual([...world.state.drivers.keys()].sort(), [...world.drivers].sort())
          assert.deepStrictEqual([...world.state.executors.keys()].sort(), [...world.executors].sort())
        }
        // A query is answered, once, with what the worker runs.
        const request = new QueryMessages.RequestWorkerState()
        const commands = WorkerCore.step(world.state, {
          _tag: "Receive",
          message: request,
          ask: { id: 1, request },
          sender: undefined,
          peer: masterA.address,
          connection: 2,
          now: 0
        })
        const replies = commands.flatMap((c) => (c._tag === "Reply" ? [c.exit] : []))
        assert.strictEqual(replies.length, 1)
        const snapshot = Exit.isSuccess(replies[0]!)
          ? replies[0].value as QueryMessages.WorkerStateResponse
          : undefined
        assert.deepStrictEqual(
          snapshot?.executors.map((e) => `${e.appId}/${e.execId}`).sort(),
          [...world.executors].sort()
        )
      }),
      { numRuns: 300 }
    )
  })
})
