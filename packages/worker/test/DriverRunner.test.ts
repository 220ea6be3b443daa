import { NodeFileSystem } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { WorkDirs } from "@kindling/installation"
import { Ids } from "@kindling/protocol"
import { Polling } from "@kindling/protocol/testing"
import { RpcEnv } from "@kindling/rpc"
import { NodeTransport } from "@kindling/rpc/node"
import { DriverRunner, ProcessLauncher } from "@kindling/worker"
import { Chunk, Deferred, Duration, Effect, Exit, Fiber, Layer, Option, Ref, Scope, TestClock } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import {
  command,
  driverDescription,
  installation,
  isAlive,
  live,
  readText,
  readyPid,
  resolveFixture,
  tempDir
} from "./fixtures/support.js"

// A client-only node: these drivers' artifacts are files, never fetched on the network.
const clientNetwork = RpcEnv.layer({}).pipe(Layer.provide(NodeTransport.layer))

const driverId = Ids.DriverId.make("driver-20240101000000-0001")
const workerUrl = "kindling://Worker@127.0.0.1:7078"

// A work dir and an artifact in a directory of its own, as a submitted app would be.
const setup = Effect.gen(function*() {
  const workDir = yield* tempDir
  const artifact = Path.join(yield* tempDir, "app.js")
  yield* Effect.promise(() => Fs.promises.writeFile(artifact, "export default () => {}\n"))
  return { workDir, appUrl: pathToFileURL(artifact).href, driverDir: Path.join(workDir, driverId) }
})

const options = (
  workDir: string,
  description: DriverRunner.Options["description"],
  overrides: Partial<DriverRunner.Options> = {}
): DriverRunner.Options => ({
  driverId,
  description,
  workDir,
  workerUrl,
  terminateTimeout: "5 seconds",
  initialBackoff: "50 millis",
  installation: installation(),
  ...overrides
})

describe("DriverRunner with real processes", () => {
  live("runs the command in the driver dir and ends FINISHED on exit 0", () =>
    Effect.gen(function*() {
      const { appUrl, driverDir, workDir } = yield* setup
      const description = driverDescription({
        appUrl,
        mem: 64,
        command: command("exit", ["0", "{{WORKER_URL}}", "{{USER_JAR}}"], { KINDLING_FIXTURE: "from the command" })
      })
      const driver = yield* DriverRunner.start(options(workDir, description))
      const result = yield* driver.result
      assert.deepStrictEqual(result, { state: "FINISHED", exception: Option.none() })
      assert.strictEqual(yield* driver.launches, 1)
      const report = JSON.parse(yield* readText(Path.join(driverDir, "stdout")))
      assert.deepStrictEqual(report.args, [workerUrl, Path.join(driverDir, "app.js")])
      // The parent watch first, then the module-loading flags of the test's own process, then the memory cap
      // with the young generation sized to it (1 MiB semi-spaces below 128 MiB), and two malloc arenas.
      const execArgv: Array<string> = report.execArgv
      assert.deepStrictEqual(execArgv.slice(0, 2), ["--import", ProcessLauncher.parentWatchUrl])
      assert.deepStrictEqual(execArgv.slice(-2), ["--max-old-space-size=64", "--max-semi-space-size=1"])
      for (const flag of execArgv.slice(2, -2)) assert.include(process.execArgv, flag)
      assert.strictEqual(report.mallocArenas, process.env.MALLOC_ARENA_MAX ?? "2")
      assert.strictEqual(report.cwd, driverDir)
      assert.strictEqual(report.env, "from the command")
      assert.strictEqual(yield* readText(Path.join(driverDir, "stderr")), "to stderr\n")
      assert.isTrue(Fs.existsSync(Path.join(driverDir, "app.js")))
    }))

  live("ends FAILED on a non-zero exit without supervision", () =>
    Effect.gen(function*() {
      const { appUrl, workDir } = yield* setup
      const driver = yield* DriverRunner.start(
        options(workDir, driverDescription({ appUrl, command: command("exit", ["1"]) }))
      )
      const result = yield* driver.result
      assert.strictEqual(result.state, "FAILED")
      assert.deepStrictEqual(
        Option.map(result.exception, (e) => [e.name, e.message]),
        Option.some(["DriverFailed", "The driver exited with code 1: to stderr"])
      )
      assert.strictEqual(yield* driver.launches, 1)
    }))

  live("a failed driver's exception carries the end of its stderr, from a line's start", () =>
    Effect.gen(function*() {
      const { appUrl, workDir } = yield* setup
      const driver = yield* DriverRunner.start(
        options(workDir, driverDescription({ appUrl, command: command("noisy", ["5000"]) }))
      )
      const message = Option.getOrThrow((yield* driver.result).exception).message
      const prefix = "The driver exited with code 3: "
      assert.isTrue(message.startsWith(`${prefix}log line `), message)
      assert.isTrue(message.endsWith("Error: the driver failed after 4999 lines"), message)
      assert.isAtMost(message.length, prefix.length + 2048)
      assert.notInclude(message, "log line 1 ")
    }))

  live(
    "a failed driver's exception carries the summary it wrote of its failure, not what it logged after",
    () =>
      Effect.gen(function*() {
        const { appUrl, workDir } = yield* setup
        const driver = yield* DriverRunner.start(
          options(
            workDir,
            driverDescription({ appUrl, command: command("summarised", [WorkDirs.driverFailureFileName]) })
          )
        )
        assert.strictEqual(
          Option.getOrThrow((yield* driver.result).exception).message,
          "The driver exited with code 1: JobFailed: the app's error\n    at main (/apps/app.ts:3:9)"
        )
      })
  )

  live("relaunches a supervised driver until it exits with 0", () =>
    Effect.gen(function*() {
      const { appUrl, driverDir, workDir } = yield* setup
      const description = driverDescription({ appUrl, supervise: true, command: command("flaky", ["3"]) })
      const driver = yield* DriverRunner.start(options(workDir, description))
      assert.strictEqual((yield* driver.result).state, "FINISHED")
      assert.strictEqual(yield* driver.launches, 3)
      assert.strictEqual(yield* readText(Path.join(driverDir, "runs")), "3")
    }))

  live("kill ends a running driver as KILLED with SIGTERM", () =>
    Effect.gen(function*() {
      const { appUrl, driverDir, workDir } = yield* setup
      const description = driverDescription({ appUrl, supervise: true, command: command("hang") })
      const driver = yield* DriverRunner.start(options(workDir, description))
      const pid = yield* readyPid(Path.join(driverDir, "stdout"))
      const [elapsed] = yield* Effect.timed(driver.kill)
      assert.isBelow(Duration.toMillis(elapsed), 2000)
      assert.deepStrictEqual(yield* driver.result, { state: "KILLED", exception: Option.none() })
      assert.isFalse(isAlive(pid))
      assert.strictEqual(yield* driver.launches, 1)
    }))

  live(
    "kill SIGKILLs a driver that ignores SIGTERM once the terminate timeout has passed",
    () =>
      Effect.gen(function*() {
        const { appUrl, driverDir, workDir } = yield* setup
        const description = driverDescription({ appUrl, command: command("hang", ["ignore-term"]) })
        const driver = yield* DriverRunner.start(options(workDir, description, { terminateTimeout: "300 millis" }))
        const pid = yield* readyPid(Path.join(driverDir, "stdout"))
        const [elapsed] = yield* Effect.timed(driver.kill)
        assert.isAtLeast(Duration.toMillis(elapsed), 300)
        assert.isBelow(Duration.toMillis(elapsed), 3000)
        assert.strictEqual((yield* driver.result).state, "KILLED")
        assert.isFalse(isAlive(pid))
      })
  )

  live("ends ERROR with the exception when the artifact cannot be fetched", () =>
    Effect.gen(function*() {
      const { workDir } = yield* setup
      const description = driverDescription({ appUrl: "ftp://example.com/app.js", command: command("exit", ["0"]) })
      const driver = yield* DriverRunner.start(options(workDir, description))
      const result = yield* driver.result
      assert.strictEqual(result.state, "ERROR")
      const exception = Option.getOrThrow(result.exception)
      assert.strictEqual(exception.name, "DriverLaunchFailed")
      assert.include(
        exception.message,
        `Driver ${driverId} could not be launched: Cannot fetch ftp://example.com/app.js`
      )
      assert.strictEqual(yield* driver.launches, 0)
    }))

  live("ends ERROR when the main module cannot be resolved", () =>
    Effect.gen(function*() {
      const { appUrl, workDir } = yield* setup
      const description = driverDescription({ appUrl, command: command("nowhere") })
      const driver = yield* DriverRunner.start(options(workDir, description, {
        installation: installation((specifier) => {
          throw new Error(`no module ${specifier}`)
        })
      }))
      const exception = Option.getOrThrow((yield* driver.result).exception)
      assert.strictEqual(exception.name, "DriverLaunchFailed")
      assert.include(exception.message, "Cannot resolve the main module nowhere: no module nowhere")
    }))

  live("closing the scope terminates the driver", () =>
    Effect.gen(function*() {
      const { appUrl, driverDir, workDir } = yield* setup
      const scope = yield* Scope.make()
      const description = driverDescription({ appUrl, command: command("hang") })
      const driver = yield* DriverRunner.start(options(workDir, description)).pipe(Scope.extend(scope))
      const pid = yield* readyPid(Path.join(driverDir, "stdout"))
      yield* Scope.close(scope, Exit.void)
      assert.isFalse(isAlive(pid))
      assert.strictEqual((yield* driver.result).state, "KILLED")
    }))

  // As when a stopping worker's main fiber is interrupted: the release runs in an interrupted fiber, and must
  // neither hang on the SIGTERM nor be cut short before its SIGKILL.
  live(
    "interrupting the fiber that owns the scope SIGKILLs a driver that ignores SIGTERM after the timeout",
    () =>
      Effect.gen(function*() {
        const { appUrl, driverDir, workDir } = yield* setup
        const description = driverDescription({ appUrl, command: command("hang", ["ignore-term"]) })
        const started = yield* Deferred.make<DriverRunner.DriverHandle>()
        const owner = yield* DriverRunner.start(options(workDir, description, { terminateTimeout: "300 millis" })).pipe(
          Effect.flatMap((driver) => Deferred.succeed(started, driver)),
          Effect.zipRight(Effect.never),
          Effect.scoped,
          Effect.fork
        )
        const driver = yield* Deferred.await(started)
        const pid = yield* readyPid(Path.join(driverDir, "stdout"))
        const [elapsed] = yield* Effect.timed(Fiber.interrupt(owner))
        assert.isAtLeast(Duration.toMillis(elapsed), 300)
        assert.isFalse(isAlive(pid))
        assert.strictEqual((yield* driver.result).state, "KILLED")
      })
  )

  live("a child whose worker is SIGKILLed takes its process group down", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const launcher = yield* ProcessLauncher.ProcessLauncher
      const stdoutFile = Path.join(dir, "stdout")
      const worker = yield* launcher.spawn({
        command: process.execPath,
        args: [resolveFixture("orphan-parent"), ProcessLauncher.parentWatchUrl],
        env: {},
        cwd: dir,
        stdoutFile,
        stderrFile: Path.join(dir, "stderr")
      })
      const line = yield* Polling.eventually(readText(stdoutFile), (text) => text.endsWith("\n"))
      const { helper, pid } = JSON.parse(line) as { pid: number; helper: number }
      // Whatever happens below, nothing of this test outlives it.
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          for (const group of [worker.pid, pid]) {
            try {
              process.kill(-group, "SIGKILL")
            } catch {
              // already gone
            }
          }
        })
      )
      assert.isTrue(isAlive(pid) && isAlive(helper))
      yield* Effect.sync(() => process.kill(worker.pid, "SIGKILL"))
      assert.deepStrictEqual(yield* worker.exited, { code: null, signal: "SIGKILL" })
      yield* Polling.eventually(Effect.sync(() => isAlive(pid) || isAlive(helper)), (alive) => !alive)
    }))
})

// Processes that end when the test says so: each run exits with its code after its duration of (test) time.
const fakeLauncher = (runs: ReadonlyArray<{ readonly millis: number; readonly code: number }>) =>
  Effect.gen(function*() {
    const started = yield* Ref.make(0)
    const launcher = ProcessLauncher.ProcessLauncher.of({
      spawn: () =>
        Effect.gen(function*() {
          const n = yield* Ref.getAndUpdate(started, (k) => k + 1)
          const run = runs[Math.min(n, runs.length - 1)]!
          const exited = yield* Deferred.make<ProcessLauncher.ProcessExit>()
          const exit = Deferred.succeed(exited, { code: run.code, signal: null })
          if (run.millis === 0) yield* exit
          else yield* Effect.forkDaemon(Effect.zipRight(Effect.sleep(run.millis), exit))
          return {
            pid: 1000 + n,
            exited: Deferred.await(exited),
            signal: (sig) => Effect.asVoid(Deferred.succeed(exited, { code: null, signal: sig }))
          }
        })
    })
    return launcher
  })

// The wake-up times of pending sleeps, once there are `count` of them: the runner's fiber gets there after
// real I/O (work dir, artifact), so the test waits in real time before it moves the clock.
const sleepsAt = (count: number) =>
  Polling.eventually(TestClock.sleeps(), (sleeps) => Chunk.size(sleeps) === count).pipe(Effect.map(Chunk.toArray))

describe("DriverRunner supervision under TestClock", () => {
  it.scoped("waits 1, 2, 4, 8 seconds between relaunches, and a kill ends the wait at once", () =>
    Effect.gen(function*() {
      const { appUrl, workDir } = yield* setup
      const launcher = yield* fakeLauncher([{ millis: 0, code: 1 }])
      const description = driverDescription({ appUrl, supervise: true, command: command("exit") })
      const driver = yield* DriverRunner.start(options(workDir, description, { initialBackoff: "1 second" })).pipe(
        Effect.provideService(ProcessLauncher.ProcessLauncher, launcher),
        Effect.provide(NodeFileSystem.layer),
        Effect.provide(clientNetwork)
      )
      const launches = (n: number) => Polling.eventually(driver.launches, (k) => k === n)
      yield* launches(1)
      assert.deepStrictEqual(yield* sleepsAt(1), [1000])
      yield* TestClock.adjust("999 millis")
      assert.strictEqual(yield* driver.launches, 1)
      yield* TestClock.adjust("1 millis")
      yield* launches(2)
      assert.deepStrictEqual(yield* sleepsAt(1), [3000])
      yield* TestClock.adjust("2 seconds")
      yield* launches(3)
      assert.deepStrictEqual(yield* sleepsAt(1), [7000])
      yield* TestClock.adjust("4 seconds")
      yield* launches(4)
      assert.deepStrictEqual(yield* sleepsAt(1), [15000])
      yield* TestClock.adjust("8 seconds")
      yield* launches(5)
      assert.deepStrictEqual(yield* sleepsAt(1), [31000])
      yield* driver.kill
      assert.deepStrictEqual(yield* driver.result, { state: "KILLED", exception: Option.none() })
      assert.strictEqual(yield* driver.launches, 5)
    }))

  it.scoped("starts the back-off over after a run longer than 5 seconds", () =>
    Effect.gen(function*() {
      const { appUrl, workDir } = yield* setup
      const launcher = yield* fakeLauncher([
        { millis: 0, code: 1 },
        { millis: 0, code: 1 },
        { millis: 6000, code: 1 },
        { millis: 0, code: 0 }
      ])
      const description = driverDescription({ appUrl, supervise: true, command: command("exit") })
      const driver = yield* DriverRunner.start(options(workDir, description, { initialBackoff: "1 second" })).pipe(
        Effect.provideService(ProcessLauncher.ProcessLauncher, launcher),
        Effect.provide(NodeFileSystem.layer),
        Effect.provide(clientNetwork)
      )
      yield* Polling.eventually(driver.launches, (n) => n === 1)
      assert.deepStrictEqual(yield* sleepsAt(1), [1000])
      yield* TestClock.adjust("1 second")
      yield* Polling.eventually(driver.launches, (n) => n === 2)
      assert.deepStrictEqual(yield* sleepsAt(1), [3000])
      yield* TestClock.adjust("2 seconds")
      yield* Polling.eventually(driver.launches, (n) => n === 3)
      // The third run ends at 9 s; without the reset the next launch would be at 13 s.
      assert.deepStrictEqual(yield* sleepsAt(1), [9000])
      yield* TestClock.adjust("6 seconds")
      assert.deepStrictEqual(yield* sleepsAt(1), [10000])
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(yield* driver.result, { state: "FINISHED", exception: Option.none() })
      assert.strictEqual(yield* driver.launches, 4)
    }))

  it.scoped("a driver killed before it was launched is KILLED", () =>
    Effect.gen(function*() {
      const { appUrl, workDir } = yield* setup
      const launcher = yield* fakeLauncher([{ millis: 0, code: 0 }])
      const description = driverDescription({ appUrl, command: command("exit") })
      const driver = yield* DriverRunner.start(options(workDir, description)).pipe(
        Effect.provideService(ProcessLauncher.ProcessLauncher, launcher),
        Effect.provide(NodeFileSystem.layer),
        Effect.provide(clientNetwork)
      )
      yield* driver.kill
      assert.deepStrictEqual(yield* driver.result, { state: "KILLED", exception: Option.none() })
      assert.strictEqual(yield* driver.launches, 0)
    }))
})
