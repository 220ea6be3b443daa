import { assert, describe, it } from "@effect/vitest"
import { AppClientCore } from "@kindling/driver"
import { AppClientMessages, Descriptions, Endpoints, Ids, RpcAddress } from "@kindling/protocol"
import { FastCheck as fc, Option } from "effect"

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
    registrationRetries: 3,
    unreachableAttempts: 3,
    unreachableRetryMillis: 1000
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

  describe("a master that cannot be reached", () => {
    const refused = (state: AppClientCore.State, master: typeof masterA, now: number, connected = false) =>
      AppClientCore.step(state, {
        _tag: "RegistrationUndelivered",
        master: master.address,
        reason: `Cannot connect to ${master.address.hostPort}: connect ECONNREFUSED`,
        connected,
        now
      })
    const sentTo = (commands: ReadonlyArray<AppClientCore.Command>) =>
      commands.flatMap((c) => (c._tag === "Send" ? [c.to.address.host] : []))

    it("is tried again 1 s later, twice; when every master failed so and none was ever reached, the app is dead", () => {
      const state = make()
      AppClientCore.step(state, { _tag: "Start", now: 0 })
      for (const round of [0, 1]) {
        for (const master of [masterA, masterB]) {
          const again = refused(state, master, round * 1000)
          assert.deepStrictEqual(own(again), [])
          const timer = again.find((c) => c._tag === "StartTimer")
          assert.deepStrictEqual(timer, {
            _tag: "StartTimer",
            name: `reach ${RpcAddress.key(master.address)}`,
            delayMillis: 1000,
            periodMillis: undefined,
            input: { _tag: "RetryMaster", master: master.address }
          })
          const retried = AppClientCore.step(state, { _tag: "RetryMaster", master: master.address, now: 1000 })
          assert.deepStrictEqual(sentTo(retried), [master.address.host])
        }
      }
      assert.deepStrictEqual(own(refused(state, masterA, 2000)), [])
      assert.deepStrictEqual(own(refused(state, masterB, 2000)), [{
        _tag: "AppDead",
        reason: "No master reachable at kindling://m1:7077,m2:7077: Cannot connect to m1:7077: connect ECONNREFUSED; " +
          "Cannot connect to m2:7077: connect ECONNREFUSED"
      }])
      // Dead once.
      assert.deepStrictEqual(own(refused(state, masterB, 3000)), [])
    })

    it("one master reachable is enough: the app registers there and the other is let be", () => {
      const state = make()
      AppClientCore.step(state, { _tag: "Start", now: 0 })
      for (const now of [0, 1000, 2000]) refused(state, masterA, now)
      receive(state, new AppClientMessages.RegisteredApplication({ appId, master: masterB }), 2500)
      assert.deepStrictEqual(own(refused(state, masterB, 3000)), [])
      assert.deepStrictEqual(
        sentTo(AppClientCore.step(state, { _tag: "RetryMaster", master: masterA.address, now: 3000 })),
        []
      )
    })

    it("once a master was reached, the app waits for it as Spark's does: 3 attempts 20 s apart", () => {
      for (const reach of ["connected", "lost"] as const) {
        const state = make()
        AppClientCore.step(state, { _tag: "Start", now: 0 })
        if (reach === "connected") {
          AppClientCore.step(state, { _tag: "Connected", peer: masterA.address, connection: 1, now: 0 })
        } else {
          refused(state, masterA, 0, true)
        }
        for (const now of [0, 1000, 2000]) {
          assert.deepStrictEqual(own(refused(state, masterB, now)), [])
          if (reach === "lost") continue
          assert.deepStrictEqual(own(refused(state, masterA, now)), [])
        }
        AppClientCore.step(state, { _tag: "RetryRegistration", now: 20_000 })
        AppClientCore.step(state, { _tag: "RetryRegistration", now: 40_000 })
        const given = AppClientCore.step(state, { _tag: "RetryRegistration", now: 60_000 })
        assert.deepStrictEqual(own(given), [{ _tag: "AppDead", reason: "All masters are unresponsive! Giving up." }])
      }
    })

    it(
      "model: whatever the order of failures, retries, connections and answers, the app is dead at most once, as " +
        "unreachable only if no master was ever reached and each failed three times, and never once registered",
      () => {
        const masterOf = fc.constantFrom(masterA, masterB)
        const event = fc.oneof(
          fc.record({ kind: fc.constant("refused" as const), master: masterOf, connected: fc.boolean() }),
          fc.record({ kind: fc.constant("retry" as const), master: masterOf }),
          fc.record({ kind: fc.constant("connected" as const), master: masterOf }),
          fc.record({ kind: fc.constant("registered" as const), master: masterOf }),
          fc.record({ kind: fc.constant("retryRegistration" as const) }),
          fc.record({ kind: fc.constant("stop" as const) })
        )
        fc.assert(
          fc.property(fc.array(event, { maxLength: 40 }), (events) => {
            const state = make()
            AppClientCore.step(state, { _tag: "Start", now: 0 })
            let reached = false
            let registered = false
            let stopped = false
            let deaths = 0
            const failures = new Map<string, number>()
            events.forEach((event, i) => {
              const now = (i + 1) * 500
              const commands = (() => {
                switch (event.kind) {
                  case "refused":
                    if (event.connected) reached = true
                    else failures.set(event.master.address.host, (failures.get(event.master.address.host) ?? 0) + 1)
                    return AppClientCore.step(state, {
                      _tag: "RegistrationUndelivered",
                      master: event.master.address,
                      reason: "refused",
                      connected: event.connected,
                      now
                    })
                  case "retry":
                    return AppClientCore.step(state, { _tag: "RetryMaster", master: event.master.address, now })
                  case "connected":
                    reached = true
                    return AppClientCore.step(state, {
                      _tag: "Connected",
                      peer: event.master.address,
                      connection: 1,
                      now
                    })
                  case "registered": {
                    const before = state.appId !== undefined || state.stopped
                    const out = receive(
                      state,
                      new AppClientMessages.RegisteredApplication({ appId, master: event.master }),
                      now
                    )
                    if (!before) registered = true
                    reached = true
                    return out
                  }
                  case "retryRegistration":
                    return AppClientCore.step(state, { _tag: "RetryRegistration", now })
                  case "stop":
                    stopped = true
                    return AppClientCore.step(state, { _tag: "Stop", now })
                }
              })()
              assert.deepStrictEqual(AppClientCore.validate(state), [])
              for (const command of commands) {
                if (command._tag === "Send" && command.message._tag === "RegisterApplication") {
                  assert.isFalse(registered || stopped, "a registration sent after the app registered or stopped")
                }
                if (command._tag !== "AppDead") continue
                deaths++
                assert.isFalse(registered, "dead once registered")
                if (command.reason.startsWith("No master reachable")) {
                  assert.isFalse(reached, "given up as unreachable after a master was reached")
                  for (const master of [masterA, masterB]) {
                    assert.isAtLeast(failures.get(master.address.host) ?? 0, 3, command.reason)
                  }
                }
              }
            })
            assert.isAtMost(deaths, 1)
          }),
          { numRuns: 300 }
        )
      }
    )
  })
})
