import { assert, describe } from "@effect/vitest"
import { WorkDirs } from "@kindling/installation"
import { Descriptions, Ids } from "@kindling/protocol"
import { ExecutorRunner, ProcessLauncher } from "@kindling/worker"
import { Effect, Exit, Option, Scope } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { command, installation, isAlive, live, readText, readyPid, tempDir } from "./fixtures/support.js"

const appId = Ids.AppId.make("app-20240101000000-0007")
const workerUrl = "kindling://Worker@127.0.0.1:7078"

const appDesc = (executorCommand: Descriptions.Command) =>
  new Descriptions.ApplicationDescription({
    name: "test app",
    maxCores: Option.none(),
    memoryPerExecutorMB: 64,
    command: executorCommand,
    appUiUrl: "http://127.0.0.1:4040",
    eventLogDir: Option.none(),
    eventLogCodec: Option.none(),
    coresPerExecutor: Option.none(),
    initialExecutorLimit: Option.none(),
    user: "tester",
    resourceReqsPerExecutor: []
  })

const options = (
  workDir: string,
  executorCommand: Descriptions.Command,
  overrides: Partial<ExecutorRunner.Options> = {}
): ExecutorRunner.Options => ({
  appId,
  execId: 2,
  appDesc: appDesc(executorCommand),
  cores: 4,
  memory: 96,
  hostname: "host-a",
  workDir,
  workerUrl,
  terminateTimeout: "5 seconds",
  installation: installation(),
  ...overrides
})

describe("ExecutorRunner", () => {
  live("reports running, then EXITED with the exit code", () =>
    Effect.gen(function*() {
      const workDir = yield* tempDir
      const executorDir = Path.join(workDir, appId, "2")
      const args = ["3", "{{WORKER_URL}}", "{{EXECUTOR_ID}}", "{{HOSTNAME}}", "{{CORES}}", "{{APP_ID}}", "{{USER_JAR}}"]
      const executor = yield* ExecutorRunner.start(options(workDir, command("exit", args)))
      yield* executor.running
      assert.deepStrictEqual(yield* executor.result, {
        state: "EXITED",
        message: Option.some("Command exited with code 3"),
        exitStatus: Option.some(3)
      })
      const report = JSON.parse(yield* readText(Path.join(executorDir, "stdout")))
      assert.deepStrictEqual(report.args, [workerUrl, "2", "host-a", "4", appId, "{{USER_JAR}}"])
      // The parent watch first, then the module-loading flags of the test's own process, then the memory cap
      // with the young generation sized to it (1 MiB semi-spaces below 128 MiB), and two malloc arenas.
      const execArgv: Array<string> = report.execArgv
      assert.deepStrictEqual(execArgv.slice(0, 2), ["--import", ProcessLauncher.parentWatchUrl])
      assert.deepStrictEqual(execArgv.slice(-2), ["--max-old-space-size=96", "--max-semi-space-size=1"])
      for (const flag of execArgv.slice(2, -2)) assert.include(process.execArgv, flag)
      assert.strictEqual(report.mallocArenas, process.env.MALLOC_ARENA_MAX ?? "2")
      assert.strictEqual(report.cwd, executorDir)
      assert.strictEqual(yield* readText(Path.join(executorDir, "stderr")), "to stderr\n")
    }))

  live("an exit with 0 is EXITED too", () =>
    Effect.gen(function*() {
      const executor = yield* ExecutorRunner.start(options(yield* tempDir, command("exit", ["0"])))
      const result = yield* executor.result
      assert.strictEqual(result.state, "EXITED")
      assert.deepStrictEqual(result.exitStatus, Option.some(0))
    }))

  live("kill ends it as KILLED with the exit status of the terminated process", () =>
    Effect.gen(function*() {
      const workDir = yield* tempDir
      const executor = yield* ExecutorRunner.start(options(workDir, command("hang")))
      yield* executor.running
      const pid = yield* readyPid(Path.join(workDir, appId, "2", "stdout"))
      yield* executor.kill
      assert.deepStrictEqual(yield* executor.result, {
        state: "KILLED",
        message: Option.none(),
        exitStatus: Option.some(143)
      })
      assert.isFalse(isAlive(pid))
    }))

  live("kill SIGKILLs an executor that ignores SIGTERM after the terminate timeout", () =>
    Effect.gen(function*() {
      const workDir = yield* tempDir
      const executor = yield* ExecutorRunner.start(
        options(workDir, command("hang", ["ignore-term"]), { terminateTimeout: "200 millis" })
      )
      yield* readyPid(Path.join(workDir, appId, "2", "stdout"))
      // Shuffle output it wrote, which it can no longer remove itself.
      const blocks = Path.join(workDir, appId, "2", WorkDirs.blockManagerDirName)
      Fs.mkdirSync(blocks, { recursive: true })
      Fs.writeFileSync(Path.join(blocks, "shuffle_0_0.data"), "map output")
      yield* executor.kill
      assert.deepStrictEqual((yield* executor.result).exitStatus, Option.some(137))
      assert.isFalse(Fs.existsSync(blocks), "its shuffle files went with it")
      assert.isTrue(Fs.existsSync(Path.join(workDir, appId, "2", "stdout")), "its logs stay")
    }))

  live("a launch failure is FAILED with the failure's text", () =>
    Effect.gen(function*() {
      const executor = yield* ExecutorRunner.start(options(yield* tempDir, command("nowhere"), {
        installation: installation(() => {
          throw new Error("not installed")
        })
      }))
      assert.deepStrictEqual(yield* executor.result, {
        state: "FAILED",
        message: Option.some(
          `Executor ${appId}/2 could not be launched: Cannot resolve the main module nowhere: not installed`
        ),
        exitStatus: Option.none()
      })
    }))

  live("closing the scope terminates it and ends it as FAILED: Worker shutting down", () =>
    Effect.gen(function*() {
      const workDir = yield* tempDir
      const scope = yield* Scope.make()
      const executor = yield* ExecutorRunner.start(options(workDir, command("hang"))).pipe(Scope.extend(scope))
      const pid = yield* readyPid(Path.join(workDir, appId, "2", "stdout"))
      yield* Scope.close(scope, Exit.void)
      assert.isFalse(isAlive(pid))
      assert.deepStrictEqual(yield* executor.result, {
        state: "FAILED",
        message: Option.some("Worker shutting down"),
        exitStatus: Option.none()
      })
    }))
})
