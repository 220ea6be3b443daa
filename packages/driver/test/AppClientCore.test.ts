import { assert, describe, it } from "@effect/vitest"
import { AppClientCore } from "@kindling/driver"
import type { States } from "@kindling/protocol"
import { AppClientMessages, Descriptions, Endpoints, Ids, RpcAddress, WorkerMessages } from "@kindling/protocol"
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
    unreachableRetryMillis: 1000,
    checkAttempts: 5,
    checkRetryMillis: 2000,
    allocationRetryMillis: 1000,
    leaveTimeoutMillis: 5000
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

// An executor's state as the master reports it, without a message or a worker host unless given.
const executorUpdated = (id: number, state: States.ExecutorState, message?: string, workerHost?: string) =>
  new AppClientMessages.ExecutorUpdated({
    id,
    state,
    message: Option.fromNullable(message),
    exitStatus: Option.none(),
    workerHost: Option.fromNullable(workerHost)
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
    const update = (id: number, state: "RUNNING" | "FAILED") => executorUpdated(id, state)
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
      executorUpdated(id, state, message, "h")
    assert.deepStrictEqual(own(receive(state, ofWorker(2, "DECOMMISSIONED", "worker decommissioned"))), [
      { _tag: "ExecutorDecommissioned", executorId: 2, reason: "Executor decommission (worker decommissioned)" }
    ])
    assert.deepStrictEqual(own(receive(state, ofWorker(3, "LOST", "worker lost"))), [
      { _tag: "ExecutorGone", executorId: 3, reason: "Executor LOST (worker lost)", started: false, workerLost: true }
    ])
  })

  it("seed 751: the master asked whether it has the app is asked again 2 s apart, five times in all", () => {
    const state = make()
    AppClientCore.step(state, { _tag: "Start", now: 0 })
    receive(state, new AppClientMessages.RegisteredApplication({ appId, master: masterA }))
    const checks = (commands: ReadonlyArray<AppClientCore.Command>) =>
      commands.filter((c) => c._tag === "CheckRegistered").length
    let now = 5
    assert.strictEqual(
      checks(AppClientCore.step(state, { _tag: "Disconnected", peer: masterA.address, connection: 1, now })),
      1
    )
    let asked = 1
    for (;;) {
      const unanswered = AppClientCore.step(state, { _tag: "CheckUnanswered", reason: "timed out", now: now += 5000 })
      const timer = unanswered.find((c) => c._tag === "StartTimer")
      if (timer === undefined) break
      assert.deepStrictEqual(timer, {
        _tag: "StartTimer",
        name: "check registration",
        delayMillis: 2000,
        periodMillis: undefined,
        input: { _tag: "RetryCheck" }
      })
      asked += checks(AppClientCore.step(state, { _tag: "RetryCheck", now: now += 2000 }))
      assert.deepStrictEqual(AppClientCore.validate(state), [])
    }
    assert.strictEqual(asked, 5)
    // Given up asking, the app waits for its master, as Spark's does; a later loss of the connection asks again,
    // and a master that no longer has the app ends it.
    assert.deepStrictEqual(own(AppClientCore.step(state, { _tag: "RetryCheck", now: now += 2000 })), [])
    AppClientCore.step(state, { _tag: "Disconnected", peer: masterA.address, connection: 2, now: now += 1 })
    AppClientCore.step(state, { _tag: "CheckUnanswered", reason: "timed out", now: now += 5000 })
    assert.strictEqual(checks(AppClientCore.step(state, { _tag: "RetryCheck", now: now += 2000 })), 1)
    assert.deepStrictEqual(own(AppClientCore.step(state, { _tag: "AppUnknown", reason: "gone", now: now += 1 })), [
      { _tag: "AppDead", reason: "Master removed our application: gone" }
    ])
    assert.deepStrictEqual(own(AppClientCore.step(state, { _tag: "RetryCheck", now: now += 2000 })), [])
  })

  describe("dynamic allocation's requests", () => {
    const registered = () => {
      const state = make()
      AppClientCore.step(state, { _tag: "Start", now: 0 })
      receive(state, new AppClientMessages.RegisteredApplication({ appId, master: masterA }))
      return state
    }
    const asks = (commands: ReadonlyArray<AppClientCore.Command>) =>
      commands.flatMap((c) =>
        c._tag === "AskTotal"
          ? [`total ${c.total} of ${c.master.address.host} (${c.ask})`]
          : c._tag === "AskKill"
          ? [`kill ${c.executorIds.join(",")} of ${c.master.address.host}`]
          : []
      )
    const timers = (commands: ReadonlyArray<AppClientCore.Command>) =>
      commands.flatMap((c) =>
        c._tag === "StartTimer" && c.name === "allocation"
          ? [`every ${c.periodMillis}`]
          : c._tag === "CancelTimer" && c.name === "allocation"
          ? ["cancelled"]
          : []
      )

    it("seed 650: a total is asked until taken, and again of a new leader, which knows the app as it was stored", () => {
      const state = make()
      AppClientCore.step(state, { _tag: "Start", now: 0 })
      // Asked before the app registered: asked once it has.
      const early = AppClientCore.step(state, { _tag: "RequestTotal", total: 2, now: 1 })
      assert.deepStrictEqual([asks(early), timers(early)], [[], ["every 1000"]])
      assert.deepStrictEqual(asks(AppClientCore.step(state, { _tag: "SyncAllocation", now: 1000 })), [])
      const on = receive(state, new AppClientMessages.RegisteredApplication({ appId, master: masterA }), 1500)
      assert.deepStrictEqual(asks(on), ["total 2 of m1 (0)"])
      // One at a time: a new total waits for the answer to the last.
      assert.deepStrictEqual(asks(AppClientCore.step(state, { _tag: "RequestTotal", total: 3, now: 1600 })), [])
      assert.deepStrictEqual(asks(AppClientCore.step(state, { _tag: "SyncAllocation", now: 2000 })), [])
      const first = AppClientCore.step(state, { _tag: "TotalAnswered", ask: 0, taken: true, now: 2100 })
      assert.deepStrictEqual(asks(first), ["total 3 of m1 (1)"])
      // Refused (or unanswered): asked again at the next tick.
      assert.deepStrictEqual(
        asks(AppClientCore.step(state, { _tag: "TotalAnswered", ask: 1, taken: false, now: 2200 })),
        []
      )
      assert.deepStrictEqual(asks(AppClientCore.step(state, { _tag: "SyncAllocation", now: 3000 })), [
        "total 3 of m1 (2)"
      ])
      const taken = AppClientCore.step(state, { _tag: "TotalAnswered", ask: 2, taken: true, now: 3100 })
      assert.deepStrictEqual([asks(taken), timers(taken)], [[], ["cancelled"]])
      // Another master leads: it is asked at once; the answer to an ask of the one before is stale.
      const changed = receive(state, new WorkerMessages.MasterChanged({ master: masterB, masterWebUiUrl: "" }), 4000)
      assert.deepStrictEqual([asks(changed), timers(changed)], [["total 3 of m2 (3)"], ["every 1000"]])
      AppClientCore.step(state, { _tag: "TotalAnswered", ask: 2, taken: true, now: 4100 })
      assert.deepStrictEqual(asks(AppClientCore.step(state, { _tag: "SyncAllocation", now: 5000 })), [])
      const retaken = AppClientCore.step(state, { _tag: "TotalAnswered", ask: 3, taken: true, now: 5100 })
      assert.deepStrictEqual(timers(retaken), ["cancelled"])
    })

    it("seed 336: an executor given back is asked killed every second until the master reports it gone", () => {
      const state = registered()
      receive(state, new AppClientMessages.ExecutorAdded({ id: 4, workerId, hostPort: "h:1", cores: 1, memory: 512 }))
      const killed = AppClientCore.step(state, { _tag: "KillExecutors", executorIds: ["4"], now: 10 })
      assert.deepStrictEqual([asks(killed), timers(killed)], [["kill 4 of m1"], ["every 1000"]])
      // The master (restarted from its store) took the kill before it knew the executor again, and let it be.
      for (const now of [1010, 2010]) {
        assert.deepStrictEqual(asks(AppClientCore.step(state, { _tag: "SyncAllocation", now })), ["kill 4 of m1"])
      }
      const gone = receive(
        state,
        executorUpdated(4, "KILLED"),
        2500
      )
      assert.deepStrictEqual(timers(gone), ["cancelled"])
      assert.deepStrictEqual(asks(AppClientCore.step(state, { _tag: "SyncAllocation", now: 3010 })), [])
    })

    it("a kill decided after the master reported the executor gone (or decommissioned, then gone) is owed nothing", () => {
      const ended = (id: number, state: "EXITED" | "DECOMMISSIONED") => executorUpdated(id, state)
      const state = registered()
      for (const id of [5, 6]) {
        receive(state, new AppClientMessages.ExecutorAdded({ id, workerId, hostPort: "h:1", cores: 1, memory: 512 }))
      }
      receive(state, ended(5, "EXITED"), 5)
      receive(state, ended(6, "DECOMMISSIONED"), 6)
      receive(state, ended(6, "EXITED"), 7)
      // The driver's decision crossed the master's report: the master would never report either gone again.
      const killed = AppClientCore.step(state, { _tag: "KillExecutors", executorIds: ["5", "6"], now: 10 })
      assert.deepStrictEqual([asks(killed), timers(killed)], [[], []])
      assert.deepStrictEqual(asks(AppClientCore.step(state, { _tag: "SyncAllocation", now: 1010 })), [])
      assert.deepStrictEqual(AppClientCore.validate(state), [])
    })

    it("leaving asks a total of 0 and says Released once a master took it (at once when not registered)", () => {
      const unregistered = make()
      AppClientCore.step(unregistered, { _tag: "Start", now: 0 })
      assert.deepStrictEqual(own(AppClientCore.step(unregistered, { _tag: "Release", now: 1 })), [{ _tag: "Released" }])
      const state = registered()
      const release = AppClientCore.step(state, { _tag: "Release", now: 1 })
      assert.deepStrictEqual(asks(release), ["total 0 of m1 (0)"])
      assert.deepStrictEqual(own(release).filter((c) => c._tag === "Released"), [])
      const answer = AppClientCore.step(state, { _tag: "TotalAnswered", ask: 0, taken: true, now: 2 })
      assert.deepStrictEqual(own(answer), [{ _tag: "Released" }])
    })

    it("leaving: the app unregisters once the master counts none of its executors, or 5 s after it began", () => {
      const left = (commands: ReadonlyArray<AppClientCore.Command>) =>
        own(commands).map((c) => c._tag === "Send" ? c.message._tag : c._tag)
      for (const ending of ["executor gone", "timeout"] as const) {
        const state = registered()
        receive(state, new AppClientMessages.ExecutorAdded({ id: 7, workerId, hostPort: "h:1", cores: 1, memory: 512 }))
        AppClientCore.step(state, { _tag: "Release", now: 1 })
        AppClientCore.step(state, { _tag: "TotalAnswered", ask: 0, taken: true, now: 2 })
        const leave = AppClientCore.step(state, { _tag: "Leave", now: 3 })
        assert.deepStrictEqual(left(leave), [])
        assert.deepStrictEqual(leave.find((c) => c._tag === "StartTimer"), {
          _tag: "StartTimer",
          name: "leaving",
          delayMillis: 5000,
          periodMillis: undefined,
          input: { _tag: "LeaveTimeout", phase: "draining" }
        })
        // Asked to leave again, it waits no longer; the timeout of the release, long done, changes nothing.
        assert.deepStrictEqual(left(AppClientCore.step(state, { _tag: "Leave", now: 4 })), [])
        assert.deepStrictEqual(
          left(AppClientCore.step(state, { _tag: "LeaveTimeout", phase: "releasing", now: 5001 })),
          []
        )
        const end = ending === "timeout"
          ? AppClientCore.step(state, { _tag: "LeaveTimeout", phase: "draining", now: 5003 })
          : receive(state, new AppClientMessages.WorkerRemoved({ id: workerId, host: "h", message: "gone" }), 100)
        assert.deepStrictEqual(
          left(end),
          [...(ending === "timeout" ? [] : ["ExecutorGone"]), "UnregisterApplication", "Left"]
        )
        assert.deepStrictEqual(AppClientCore.validate(state), [])
        assert.deepStrictEqual(left(AppClientCore.step(state, { _tag: "Leave", now: 6000 })), [])
      }
      // A master that never takes the total of 0 keeps the app no longer than 5 s.
      const state = registered()
      AppClientCore.step(state, { _tag: "Release", now: 1 })
      assert.deepStrictEqual(
        left(AppClientCore.step(state, { _tag: "LeaveTimeout", phase: "releasing", now: 5001 })),
        ["Released"]
      )
    })

    it(
      "model: whatever the order of requests, answers, ticks, master changes and executor ends, every ask is of " +
        "the latest total or of the kills still owed, one total at a time, and a tick asks whatever is owed",
      () => {
        const event = fc.oneof(
          fc.record({ kind: fc.constant("total" as const), total: fc.nat(6) }),
          fc.record({ kind: fc.constant("kill" as const), ids: fc.uniqueArray(fc.nat(4), { maxLength: 3 }) }),
          fc.record({ kind: fc.constant("answer" as const), stale: fc.boolean(), taken: fc.boolean() }),
          fc.record({ kind: fc.constant("tick" as const) }),
          fc.record({ kind: fc.constant("registered" as const) }),
          fc.record({ kind: fc.constant("masterChanged" as const) }),
          fc.record({ kind: fc.constant("gone" as const), id: fc.nat(4) }),
          fc.record({ kind: fc.constant("release" as const) }),
          fc.record({ kind: fc.constant("leave" as const) }),
          fc.record({
            kind: fc.constant("leaveTimeout" as const),
            phase: fc.constantFrom("releasing" as const, "draining" as const)
          }),
          fc.record({ kind: fc.constant("stop" as const) })
        )
        fc.assert(
          fc.property(fc.array(event, { maxLength: 60 }), (events) => {
            const state = make()
            AppClientCore.step(state, { _tag: "Start", now: 0 })
            // The reference: what is wanted, what the master of the moment took, the ask awaited, the kills owed.
            let wanted: number | undefined
            let taken: number | undefined
            let awaited: { ask: number; total: number } | undefined
            let stale: Array<number> = []
            const kills = new Set<string>()
            let registered = false
            let stopped = false
            let armed = false
            let leaving = false // released or told to leave: no total from dynamic allocation counts any more
            let draining = false
            let lefts = 0
            const alive = new Set([0, 1, 2, 3, 4])
            for (const executor of [0, 1, 2, 3, 4]) {
              receive(
                state,
                new AppClientMessages.ExecutorAdded({ id: executor, workerId, hostPort: "h:1", cores: 1, memory: 512 })
              )
            }
            events.forEach((event, i) => {
              const now = (i + 1) * 250
              const input = ((): Parameters<typeof AppClientCore.step>[1] | "registered" | "masterChanged" => {
                switch (event.kind) {
                  case "total":
                    return { _tag: "RequestTotal", total: event.total, now }
                  case "kill":
                    return { _tag: "KillExecutors", executorIds: event.ids.map(String), now }
                  case "answer": {
                    const ask = event.stale ? stale[0] : awaited?.ask
                    return ask === undefined ? { _tag: "SyncAllocation", now } : {
                      _tag: "TotalAnswered",
                      ask,
                      taken: event.taken,
                      now
                    }
                  }
                  case "tick":
                    return { _tag: "SyncAllocation", now }
                  case "registered":
                  case "masterChanged":
                    return event.kind
                  case "gone":
                    return {
                      _tag: "Receive",
                      message: executorUpdated(event.id, "EXITED"),
                      ask: undefined,
                      sender: masterA.address,
                      peer: masterA.address,
                      connection: 1,
                      now
                    }
                  case "release":
                    return { _tag: "Release", now }
                  case "leave":
                    return { _tag: "Leave", now }
                  case "leaveTimeout":
                    return { _tag: "LeaveTimeout", phase: event.phase, now }
                  case "stop":
                    return { _tag: "Stop", now }
                }
              })()
              const commands = input === "registered"
                ? receive(state, new AppClientMessages.RegisteredApplication({ appId, master: masterA }), now)
                : input === "masterChanged"
                ? receive(state, new WorkerMessages.MasterChanged({ master: masterB, masterWebUiUrl: "" }), now)
                : AppClientCore.step(state, input)
              // The reference's view of the input.
              const wasRegistered = registered
              const wasStopped = stopped
              const newMaster = (input === "registered" && !registered && !stopped) || input === "masterChanged"
              if (input === "registered" && !stopped) registered = true
              if (newMaster) {
                taken = undefined
                if (awaited !== undefined) stale = [awaited.ask, ...stale]
                awaited = undefined
              }
              if (typeof input !== "string") {
                switch (input._tag) {
                  case "RequestTotal":
                    if (!leaving) wanted = input.total
                    break
                  case "Release":
                    wanted = 0
                    leaving = true
                    break
                  case "KillExecutors":
                    // A kill of an executor the master already reported gone is owed nothing.
                    for (const id of input.executorIds) if (alive.has(Number(id))) kills.add(id)
                    break
                  case "TotalAnswered":
                    if (input.ask === awaited?.ask) {
                      if (input.taken) taken = awaited.total
                      awaited = undefined
                    }
                    break
                  case "Receive":
                    if (input.message._tag === "ExecutorUpdated") {
                      kills.delete(String(input.message.id))
                      alive.delete(input.message.id)
                    }
                    break
                  case "Leave":
                    leaving = true
                    draining = lefts === 0
                    break
                  case "Stop":
                    stopped = true
                }
              }
              // Left once, when the master counts no executor of the app, or there is no master to leave, or the
              // wait is over; then the app has unregistered and asks nothing more.
              const leftNow = commands.some((c) => c._tag === "Left")
              if (leftNow) {
                lefts++
                const timedOut = typeof input !== "string" && input._tag === "LeaveTimeout" &&
                  input.phase === "draining"
                assert.isTrue(draining, "left before told to leave")
                assert.isTrue(alive.size === 0 || !registered || stopped || timedOut, "left with executors counted")
                const unregistered = commands.some((c) =>
                  c._tag === "Send" && c.message._tag === "UnregisterApplication"
                )
                assert.strictEqual(unregistered, registered && !wasStopped)
                stopped = true
                draining = false
              } else if (draining && (alive.size === 0 || !registered || stopped)) {
                assert.fail("told to leave, with nothing to wait for, and not left")
              }
              assert.isAtMost(lefts, 1)
              assert.deepStrictEqual(AppClientCore.validate(state), [])
              const totals = commands.flatMap((c) => (c._tag === "AskTotal" ? [c] : []))
              const killAsks = commands.flatMap((c) => (c._tag === "AskKill" ? [c] : []))
              const canAsk = registered && !stopped
              // Nothing is asked of no master, or after the app stopped; a total asked is the latest, alone.
              if (!canAsk) assert.deepStrictEqual([totals, killAsks], [[], []])
              assert.isAtMost(totals.length, 1)
              for (const ask of totals) {
                assert.strictEqual(ask.total, wanted)
                assert.isUndefined(awaited, "a total asked while another is awaited")
                awaited = { ask: ask.ask, total: ask.total }
              }
              for (const ask of killAsks) assert.deepStrictEqual(new Set(ask.executorIds), kills)
              // What is owed is asked: at every tick, and at once when the master is new.
              const owesTotal = wanted !== undefined && wanted !== taken
              const tickOrNew = (typeof input !== "string" && input._tag === "SyncAllocation") || newMaster ||
                (wasRegistered !== registered)
              if (canAsk && tickOrNew) {
                if (owesTotal && awaited === undefined) assert.fail("a total owed and not asked")
                assert.strictEqual(killAsks.length, kills.size > 0 ? 1 : 0)
              }
              // Released only when leaving and the master took a total of 0 (or there is none to ask).
              if (commands.some((c) => c._tag === "Released")) {
                const timedOut = typeof input !== "string" && input._tag === "LeaveTimeout"
                assert.strictEqual(wanted, 0)
                assert.isTrue(taken === 0 || !canAsk || timedOut, "released before the master took 0")
              }
              // Once the master has everything, nothing is asked again: the timer runs exactly while owed.
              for (const command of commands) {
                if (command._tag === "StartTimer" && command.name === "allocation") armed = true
                if (command._tag === "CancelTimer" && command.name === "allocation") armed = false
              }
              assert.strictEqual(armed, !stopped && (owesTotal || kills.size > 0))
            })
          }),
          { numRuns: 500 }
        )
      }
    )
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
