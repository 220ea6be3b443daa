import { NodeFileSystem } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Simulation } from "@kindling/kernel/testing"
import { Descriptions, Endpoints, Ids, QueryMessages, RpcAddress, WorkerMessages } from "@kindling/protocol"
import { Deadlines, Polling } from "@kindling/protocol/testing"
import { RpcEnv, Transport } from "@kindling/rpc"
import { ProcessLauncher, Runners, Worker } from "@kindling/worker"
import { Clock, Deferred, Effect, Layer, Logger, Option, Ref } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { command, driverDescription, installation, resolveFixture } from "./fixtures/support.js"

const exitScript = fileURLToPath(new URL("./fixtures/exit.mjs", import.meta.url))

// A test master: what it does on registration is the test's; everything else is acknowledged and ignored.
const masterHandlers = (
  onRegister: (message: WorkerMessages.RegisterWorker) => Effect.Effect<unknown>,
  onExecutorState: (message: WorkerMessages.ExecutorStateChanged) => void = () => {},
  onDriverState: (message: WorkerMessages.DriverStateChanged) => void = () => {}
) => ({
  RegisterWorker: (message: WorkerMessages.RegisterWorker) => Effect.asVoid(onRegister(message)),
  Heartbeat: () => Effect.void,
  ExecutorStateChanged: (message: WorkerMessages.ExecutorStateChanged) =>
    Effect.sync(() => onExecutorState(message)).pipe(Effect.as(true)),
  DriverStateChanged: (message: WorkerMessages.DriverStateChanged) =>
    Effect.sync(() => onDriverState(message)).pipe(Effect.as(true)),
  WorkerSchedulerStateResponse: () => Effect.void,
  WorkerLatestState: () => Effect.void,
  WorkerDecommissioning: () => Effect.void
})

// A master that never answers: it only notes when each registration attempt arrives.
const silentMaster = Effect.gen(function*() {
  const rpc = yield* RpcEnv.make({ host: "master", port: 7077 })
  const attempts: Array<number> = []
  yield* rpc.register("Master", {
    inbound: WorkerMessages.WorkerToMaster,
    handlers: masterHandlers(() =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.sync(() => attempts.push(now)))
    )
  })
  return { address: rpc.address!, attempts }
})

// A master that accepts the worker and can then tell it things.
const acceptingMaster = Effect.gen(function*() {
  const rpc = yield* RpcEnv.make({ host: "master", port: 7077 })
  const self = Endpoints.ref(rpc.address!, Endpoints.master)
  const worker = yield* Deferred.make<RpcAddress.RefOf<"Worker">>()
  const executorStates: Array<string> = []
  const driverStates: Array<string> = []
  yield* rpc.register("Master", {
    inbound: WorkerMessages.WorkerToMaster,
    handlers: masterHandlers(
      (message) =>
        rpc.send(
          message.worker,
          new WorkerMessages.RegisteredWorker({
            master: self,
            masterWebUiUrl: "",
            masterAddress: message.masterAddress,
            duplicate: false
          })
        ).pipe(Effect.zipRight(Deferred.succeed(worker, message.worker)), Effect.orDie),
      (message) => executorStates.push(`${message.execId} ${message.state}`),
      (message) => driverStates.push(`${message.driverId} ${message.state}`)
    )
  })
  return { rpc, self, address: rpc.address!, worker: Deferred.await(worker), executorStates, driverStates }
})

const workerOptions = (workDir: string, cleanup: Worker.Options["cleanup"] = {
  enabled: false,
  intervalMillis: 1_800_000,
  appDataTtlMillis: 604_800_000
}) => ({
  workerId: Ids.WorkerId.make("worker-test"),
  cores: 4,
  memory: 4096,
  webUiUrl: "",
  workDir,
  workerTimeoutMillis: 60_000,
  registration: { initialIntervalMillis: 10_000, initialAttempts: 6, prolongedIntervalMillis: 60_000, maxAttempts: 16 },
  fuzz: 1,
  cleanup,
  retainedExecutors: 10,
  retainedDrivers: 10,
  executorStateSyncMaxAttempts: 5,
  askTimeoutMillis: 120_000,
  driverFencing: undefined,
  superviseInitialBackoffMillis: 1000,
  validateState: true
})

const startWorker = (
  master: RpcAddress.RpcAddress,
  onExit: (code: number) => Effect.Effect<void>,
  cleanup?: Worker.Options["cleanup"],
  // Every entry of the installation runs this fixture (by default the exit fixture: `exit.mjs <code>`).
  entry = exitScript
) =>
  Effect.gen(function*() {
    const rpc = yield* RpcEnv.make({ host: "worker", port: 40000 })
    const workDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "kindling-worker-test-"))
    yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(workDir, { recursive: true, force: true })))
    const worker = yield* Worker.make({
      ...workerOptions(workDir, cleanup),
      superviseInitialBackoffMillis: 100,
      masters: [master],
      onExit: (code) => onExit(code)
    }).pipe(
      Effect.provide(Runners.layerProcesses({
        workDir,
        localDir: Path.join(workDir, "local"),
        driverTerminateTimeoutMillis: 10_000,
        executorTerminateTimeoutMillis: 10_000,
        installation: installation(() => entry)
      })),
      Effect.provideService(RpcEnv.RpcEnv, rpc)
    )
    return { worker, workDir, localDir: Path.join(workDir, "local") }
  })

// Runners for a worker that is never asked to run anything.
const noRunners = Layer.succeed(Runners.Runners, {
  driver: () => Effect.dieMessage("this worker runs nothing"),
  executor: () => Effect.dieMessage("this worker runs nothing"),
  cleanupApplication: () => Effect.void,
  cleanupWorkDir: () => Effect.void
})

describe("Worker registration on the simulated network", () => {
  it("tries 6 times 10 s apart, 10 more 60 s apart, then exits with code 1", () => {
    const sim = Simulation.make({ seed: 1 })
    const start = sim.now()
    let attempts: Array<number> = []
    let exitCode: number | undefined
    sim.start(
      "master",
      Effect.gen(function*() {
        attempts = (yield* silentMaster).attempts
        return yield* Simulation.forever
      })
    )
    sim.start(
      "worker",
      Worker.make({
        ...workerOptions("/nowhere"),
        masters: [RpcAddress.make("master", 7077)],
        onExit: (code) =>
          Effect.sync(() => {
            exitCode = code
          })
      }).pipe(
        Effect.zipRight(Simulation.forever),
        Effect.provide(RpcEnv.layer({ host: "worker", port: 40000 })),
        Effect.provide(noRunners)
      )
    )
    sim.runUntil(() => exitCode !== undefined, 800_000)
    const seconds = attempts.map((at) => Math.round((at - start) / 1000))
    assert.deepStrictEqual(seconds, [0, 10, 20, 30, 40, 50, 60, 120, 180, 240, 300, 360, 420, 480, 540, 600, 660])
    assert.strictEqual(exitCode, 1)
  })
})

describe("Worker directories", () => {
  it.scopedLive(
    "the periodic cleanup deletes old app dirs and keeps recent ones",
    () =>
      Effect.gen(function*() {
        const master = yield* acceptingMaster
        const { workDir } = yield* startWorker(master.address, () => Effect.void, {
          enabled: true,
          intervalMillis: 100,
          appDataTtlMillis: 60_000
        })
        const old = Path.join(workDir, "app-20200101000000-0000")
        const recent = Path.join(workDir, "app-20200101000000-0001")
        for (const dir of [old, recent]) Fs.mkdirSync(Path.join(dir, "0"), { recursive: true })
        Fs.writeFileSync(Path.join(old, "0", "stdout"), "old")
        Fs.writeFileSync(Path.join(recent, "0", "stdout"), "recent")
        const past = new Date(Date.now() - 3_600_000)
        for (const path of [Path.join(old, "0", "stdout"), Path.join(old, "0"), old]) Fs.utimesSync(path, past, past)
        yield* master.worker
        yield* Polling.eventually(Effect.sync(() => Fs.existsSync(old)), (exists) => !exists)
        assert.isTrue(Fs.existsSync(recent))
      }).pipe(Effect.provide(Layer.mergeAll(Transport.layerMemory, ProcessLauncher.layerNode, NodeFileSystem.layer))),
    Deadlines.scaled(30_000)
  )

  it.scopedLive(
    "a cleanup that fails is logged with the path and the reason, and the worker carries on",
    () =>
      Effect.gen(function*() {
        const logs = yield* Ref.make<Array<string>>([])
        const logger = Logger.make(({ logLevel, message }) => {
          const text = Array.isArray(message) ? message.join(" ") : String(message)
          Effect.runSync(Ref.update(logs, (lines) => [...lines, `${logLevel.label} ${text}`]))
        })
        const master = yield* acceptingMaster
        const { workDir } = yield* startWorker(master.address, () => Effect.void, {
          enabled: true,
          intervalMillis: 100,
          appDataTtlMillis: 60_000
        }).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
        const worker = yield* master.worker
        // The work dir replaced by a regular file: every sweep fails with ENOTDIR, even for root.
        Fs.rmSync(workDir, { recursive: true })
        Fs.writeFileSync(workDir, "")
        const failed = `WARN Cleanup failed: ENOTDIR: not a directory, list '${workDir}'`
        yield* Polling.eventually(Ref.get(logs), (lines) => lines.filter((line) => line === failed).length >= 2)
        const state = yield* master.rpc.ask(worker, new QueryMessages.RequestWorkerState())
        assert.deepStrictEqual(state.executors, [])
      }).pipe(Effect.provide(Layer.mergeAll(Transport.layerMemory, ProcessLauncher.layerNode, NodeFileSystem.layer))),
    Deadlines.scaled(30_000)
  )

  it.scopedLive(
    "answers RequestWorkerState with what it offers and runs",
    () =>
      Effect.gen(function*() {
        const master = yield* acceptingMaster
        yield* startWorker(master.address, () => Effect.void)
        const worker = yield* master.worker
        const state = yield* master.rpc.ask(worker, new QueryMessages.RequestWorkerState())
        assert.strictEqual(state.workerId, "worker-test")
        assert.deepStrictEqual([state.cores, state.memory, state.coresUsed, state.memoryUsed], [4, 4096, 0, 0])
        assert.deepStrictEqual(state.masterUrl, Option.some(master.address.url))
        assert.deepStrictEqual(state.executors, [])
      }).pipe(Effect.provide(Layer.mergeAll(Transport.layerMemory, ProcessLauncher.layerNode, NodeFileSystem.layer))),
    Deadlines.scaled(30_000)
  )

  it.scopedLive(
    "ApplicationFinished deletes the local dirs the worker made for the app, and nothing else",
    () =>
      Effect.gen(function*() {
        const master = yield* acceptingMaster
        const { localDir } = yield* startWorker(master.address, () => Effect.void)
        const worker = yield* master.worker
        const appId = Ids.AppId.make("app-20200101000000-0002")
        yield* master.rpc.send(
          worker,
          new WorkerMessages.LaunchExecutor({
            masterUrl: master.address.url,
            appId,
            execId: 0,
            appDesc: new Descriptions.ApplicationDescription({
              name: "app",
              maxCores: Option.none(),
              memoryPerExecutorMB: 64,
              command: new Descriptions.Command({
                mainModule: "@kindling/executor/main",
                arguments: ["0"],
                environment: {},
                nodeOptions: []
              }),
              appUiUrl: "",
              eventLogDir: Option.none(),
              eventLogCodec: Option.none(),
              coresPerExecutor: Option.none(),
              initialExecutorLimit: Option.none(),
              user: "test",
              resourceReqsPerExecutor: []
            }),
            cores: 1,
            memory: 64,
            resources: {}
          })
        )
        yield* Polling.eventually(Effect.sync(() => master.executorStates), (states) => states.includes("0 EXITED"))
        assert.deepStrictEqual(master.executorStates, ["0 RUNNING", "0 EXITED"])
        assert.isTrue(Fs.existsSync(Path.join(localDir, appId)))
        // An id the worker never made a dir for deletes nothing, whatever it names.
        const outside = Path.join(localDir, "..", "keep-me")
        Fs.mkdirSync(outside, { recursive: true })
        yield* master.rpc.send(worker, new WorkerMessages.ApplicationFinished({ id: Ids.AppId.make("../keep-me") }))
        yield* master.rpc.send(worker, new WorkerMessages.ApplicationFinished({ id: appId }))
        yield* Polling.eventually(Effect.sync(() => Fs.existsSync(Path.join(localDir, appId))), (exists) => !exists)
        assert.isTrue(Fs.existsSync(outside))
      }).pipe(Effect.provide(Layer.mergeAll(Transport.layerMemory, ProcessLauncher.layerNode, NodeFileSystem.layer))),
    Deadlines.scaled(30_000)
  )
})

describe("Worker drivers", () => {
  it.scopedLive(
    "a supervised driver that fails is run again, in the work dir its launch prepared, until it exits 0",
    () =>
      Effect.gen(function*() {
        const master = yield* acceptingMaster
        const { workDir } = yield* startWorker(master.address, () => Effect.void, undefined, resolveFixture("flaky"))
        const worker = yield* master.worker
        const artifact = Path.join(workDir, "..", `${Path.basename(workDir)}-app.js`)
        Fs.writeFileSync(artifact, "export default () => {}\n")
        yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(artifact, { force: true })))
        const driverId = Ids.DriverId.make("driver-20200101000000-0000")
        yield* master.rpc.send(
          worker,
          new WorkerMessages.LaunchDriver({
            driverId,
            driverDesc: driverDescription({
              appUrl: pathToFileURL(artifact).href,
              supervise: true,
              // `flaky.mjs 3`: fails twice, then exits 0.
              command: command("@kindling/driver/main", ["3"])
            }),
            resources: {}
          })
        )
        yield* Polling.eventually(Effect.sync(() => master.driverStates), (states) => states.length > 0)
        // The master hears of the end only: the relaunches are the worker's.
        assert.deepStrictEqual(master.driverStates, [`${driverId} FINISHED`])
        assert.strictEqual(Fs.readFileSync(Path.join(workDir, driverId, "runs"), "utf8"), "3")
        const state = yield* master.rpc.ask(worker, new QueryMessages.RequestWorkerState())
        assert.deepStrictEqual([state.coresUsed, state.drivers.length, state.finishedDrivers.length], [0, 0, 1])
      }).pipe(Effect.provide(Layer.mergeAll(Transport.layerMemory, ProcessLauncher.layerNode, NodeFileSystem.layer))),
    Deadlines.scaled(30_000)
  )
})
