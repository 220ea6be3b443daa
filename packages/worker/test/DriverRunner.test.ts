import { assert, describe } from "@effect/vitest"
import { WorkDirs } from "@kindling/installation"
import { Ids } from "@kindling/protocol"
import { Polling } from "@kindling/protocol/testing"
import { DriverRunner, ProcessLauncher } from "@kindling/worker"
import { Deferred, Duration, Effect, Exit, Fiber, Option, Scope } from "effect"
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
  installation: installation(),
  ...overrides
})

// One run, which the test expects to have started its process.
const exited = (driver: DriverRunner.DriverHandle) =>
  Effect.flatMap(
    driver.run,
    (end) => end._tag === "Exited" ? Effect.succeed(end) : Effect.dieMessage(`the run ended ${end._tag}`)
  )

const launchFailure = (driver: DriverRunner.DriverHandle) =>
  Effect.flatMap(
    driver.run,
    (end) =>
      end._tag === "LaunchFailed" ? Effect.succeed(end.exception) : Effect.dieMessage(`the run ended ${end._tag}`)
  )

describe("DriverRunner with real processes", () => {
  live("runs the command in the driver dir when asked; exit 0 carries no failure", () =>
    Effect.gen(function*() {
      const { appUrl, driverDir, workDir } = yield* setup
      const description = driverDescription({
        appUrl,
        mem: 64,
        command: command("exit", ["0", "{{WORKER_URL}}", "{{USER_JAR}}"], { KINDLING_FIXTURE: "from the command" })
      })
      const driver = yield* DriverRunner.start(options(workDir, description))
      assert.strictEqual(yield* driver.launches, 0, "nothing runs until asked")
      assert.deepStrictEqual(yield* driver.run, DriverRunner.RunEnd.Exited({ exitCode: 0, failure: Option.none() }))
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

  live("a non-zero exit carries the failure the driver said", () =>
    Effect.gen(function*() {
      const { appUrl, workDir } = yield* setup
      const driver = yield* DriverRunner.start(
        options(workDir, driverDescription({ appUrl, command: command("exit", ["1"]) }))
      )
      const end = yield* exited(driver)
      assert.strictEqual(end.exitCode, 1)
      assert.deepStrictEqual(
        Option.map(end.failure, (e) => [e.name, e.message]),
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
      const message = Option.getOrThrow((yield* exited(driver)).failure).message
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
          Option.getOrThrow((yield* exited(driver)).failure).message,
          "The driver exited with code 1: JobFailed: the app's error\n    at main (/apps/app.ts:3:9)"
        )
      })
  )

  live("runs again in the work dir, with the artifact, its first run prepared", () =>
    Effect.gen(function*() {
      const { appUrl, driverDir, workDir } = yield* setup
      const description = driverDescription({ appUrl, supervise: true, command: command("flaky", ["3"]) })
      const driver = yield* DriverRunner.start(options(workDir, description))
      assert.strictEqual((yield* exited(driver)).exitCode, 1)
      // Fetched once: the artifact's source is gone, and later runs still have it.
      Fs.rmSync(new URL(appUrl))
      assert.strictEqual((yield* exited(driver)).exitCode, 1)
      assert.deepStrictEqual(yield* driver.run, DriverRunner.RunEnd.Exited({ exitCode: 0, failure: Option.none() }))
      assert.strictEqual(yield* driver.launches, 3)
      assert.strictEqual(yield* readText(Path.join(driverDir, "runs")), "3")
    }))

  live("kill ends a running driver with SIGTERM, and no run starts after it", () =>
    Effect.gen(function*() {
      const { appUrl, driverDir, workDir } = yield* setup
      const description = driverDescription({ appUrl, supervise: true, command: command("hang") })
      const driver = yield* DriverRunner.start(options(workDir, description))
      const running = yield* Effect.fork(exited(driver))
      const pid = yield* readyPid(Path.join(driverDir, "stdout"))
      yield* driver.kill
      assert.strictEqual((yield* Fiber.join(running)).exitCode, 143)
      assert.isFalse(isAlive(pid))
      assert.deepStrictEqual(yield* driver.run, DriverRunner.RunEnd.NotStarted())
      assert.strictEqual(yield* driver.launches, 1)
    }))

  live(
    "kill SIGKILLs a driver that ignores SIGTERM once the terminate timeout has passed",
    () =>
      Effect.gen(function*() {
        const { appUrl, driverDir, workDir } = yield* setup
        const description = driverDescription({ appUrl, command: command("hang", ["ignore-term"]) })
        const driver = yield* DriverRunner.start(options(workDir, description, { terminateTimeout: "300 millis" }))
        const running = yield* Effect.fork(exited(driver))
        const pid = yield* readyPid(Path.join(driverDir, "stdout"))
        const [elapsed] = yield* Effect.timed(driver.kill)
        assert.isAtLeast(Duration.toMillis(elapsed), 300)
        assert.strictEqual((yield* Fiber.join(running)).exitCode, 137)
        assert.isFalse(isAlive(pid))
      })
  )

  live("a launch failure, with the exception, when the artifact cannot be fetched", () =>
    Effect.gen(function*() {
      const { workDir } = yield* setup
      const description = driverDescription({ appUrl: "ftp://example.com/app.js", command: command("exit", ["0"]) })
      const driver = yield* DriverRunner.start(options(workDir, description))
      const exception = yield* launchFailure(driver)
      assert.strictEqual(exception.name, "DriverLaunchFailed")
      assert.include(
        exception.message,
        `Driver ${driverId} could not be launched: Cannot fetch ftp://example.com/app.js`
      )
      assert.strictEqual(yield* driver.launches, 0)
    }))

  live("a launch failure when the main module cannot be resolved", () =>
    Effect.gen(function*() {
      const { appUrl, workDir } = yield* setup
      const description = driverDescription({ appUrl, command: command("nowhere") })
      const driver = yield* DriverRunner.start(options(workDir, description, {
        installation: installation((specifier) => {
          throw new Error(`no module ${specifier}`)
        })
      }))
      const exception = yield* launchFailure(driver)
      assert.strictEqual(exception.name, "DriverLaunchFailed")
      assert.include(exception.message, "Cannot resolve the main module nowhere: no module nowhere")
    }))

  live("closing the scope terminates the driver and interrupts its run", () =>
    Effect.gen(function*() {
      const { appUrl, driverDir, workDir } = yield* setup
      const scope = yield* Scope.make()
      const description = driverDescription({ appUrl, command: command("hang") })
      const driver = yield* DriverRunner.start(options(workDir, description)).pipe(Scope.extend(scope))
      const running = yield* Effect.fork(driver.run)
      const pid = yield* readyPid(Path.join(driverDir, "stdout"))
      yield* Scope.close(scope, Exit.void)
      assert.isFalse(isAlive(pid))
      assert.isTrue(Exit.isInterrupted(yield* Fiber.await(running)))
    }))

  // As when a stopping worker's main fiber is interrupted: the release runs in an interrupted fiber, and must
  // neither hang on the SIGTERM nor be cut short before its SIGKILL.
  live(
    "interrupting the fiber that owns the scope SIGKILLs a driver that ignores SIGTERM after the timeout",
    () =>
      Effect.gen(function*() {
        const { appUrl, driverDir, workDir } = yield* setup
        const description = driverDescription({ appUrl, command: command("hang", ["ignore-term"]) })
        const started = yield* Deferred.make<Fiber.RuntimeFiber<DriverRunner.RunEnd>>()
        const owner = yield* DriverRunner.start(options(workDir, description, { terminateTimeout: "300 millis" })).pipe(
          Effect.flatMap((driver) => Effect.flatMap(Effect.fork(driver.run), (run) => Deferred.succeed(started, run))),
          Effect.zipRight(Effect.never),
          Effect.scoped,
          Effect.fork
        )
        const running = yield* Deferred.await(started)
        const pid = yield* readyPid(Path.join(driverDir, "stdout"))
        const [elapsed] = yield* Effect.timed(Fiber.interrupt(owner))
        assert.isAtLeast(Duration.toMillis(elapsed), 300)
        assert.isFalse(isAlive(pid))
        assert.isTrue(Exit.isInterrupted(yield* Fiber.await(running)))
      })
  )

  live("a kill before the first run: nothing is prepared or started", () =>
    Effect.gen(function*() {
      const { appUrl, driverDir, workDir } = yield* setup
      const driver = yield* DriverRunner.start(
        options(workDir, driverDescription({ appUrl, command: command("exit", ["0"]) }))
      )
      yield* driver.kill
      assert.deepStrictEqual(yield* driver.run, DriverRunner.RunEnd.NotStarted())
      assert.strictEqual(yield* driver.launches, 0)
      assert.isFalse(Fs.existsSync(driverDir))
    }))

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
