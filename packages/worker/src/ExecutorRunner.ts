/**
 * Runs one executor on a worker, as Spark's ExecutorRunner does: a work dir `<workDir>/<appId>/<execId>`, the
 * application's executor command with its placeholders filled in, stdout and stderr in files there, and no
 * relaunch — the master decides whether the app gets another executor.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { type Installation, WorkDirs } from "@kindling/installation"
import { DiskError, DiskOperations } from "@kindling/kernel"
import { type Descriptions, Errors, type Ids } from "@kindling/protocol"
import * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Path from "node:path"
import { linkInstallation, makeWorkDir, nodeSpawnSpec, runProcess, unlessKilled } from "./internal/nodeProcess.js"
import type { NodeSecurity, ProcessLauncher } from "./ProcessLauncher.js"
import { executorFinalState, ExecutorOutcome, type ExecutorResult, exitCode, substitute } from "./Supervision.js"

/**
 * What `LaunchExecutor` carries, plus where and how the worker runs it. `memory` is in MB.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly appId: Ids.AppId
  readonly execId: number
  readonly appDesc: Descriptions.ApplicationDescription
  readonly cores: number
  readonly memory: number
  /** The worker's host, for `{{HOSTNAME}}`. */
  readonly hostname: string
  /** The worker's work dir; the executor gets `<appId>/<execId>` under it. */
  readonly workDir: string
  readonly workerUrl: string
  readonly terminateTimeout: Duration.DurationInput
  /** The installation whose entry module the command names, and whose packages the executor's app imports. */
  readonly installation: Installation.Installation
  /** The cluster's secret and whether to encrypt, handed to the process in its environment (never on its command line). */
  readonly security?: NodeSecurity | undefined
  /** Runs once the process has ended, however it ended (the shuffle service's tidying of the executor's files). */
  readonly afterExit?: Effect.Effect<void>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface ExecutorHandle {
  /**
   * Completes once the process has started, when the worker reports RUNNING, and always before `result`. It
   * never completes when the executor is never started (a launch failure, or a kill first), so wait on it
   * together with `result`.
   */
  readonly running: Effect.Effect<void>
  /** SIGTERM to the process group, SIGKILL after the terminate timeout. Completes once the executor has ended. */
  readonly kill: Effect.Effect<void>
  /** Waits for the final state, with the message and exit status for `ExecutorStateChanged`. */
  readonly result: Effect.Effect<ExecutorResult>
}

/**
 * Starts the executor in the background of the current scope. Closing the scope terminates the process
 * (SIGTERM, then SIGKILL after the terminate timeout) and ends the executor as FAILED with "Worker shutting down",
 * as Spark's shutdown hook does.
 *
 * @since 0.1.0
 * @category constructors
 */
export const start = (
  options: Options
): Effect.Effect<ExecutorHandle, never, ProcessLauncher | FileSystem.FileSystem | Scope.Scope> =>
  Effect.gen(function*() {
    const { command } = options.appDesc
    const killRequest = yield* Deferred.make<void>()
    const running = yield* Deferred.make<void>()
    const result = yield* Deferred.make<ExecutorResult>()
    const dir = Path.join(options.workDir, options.appId, String(options.execId))

    const prepare = Effect.zipRight(
      // The executor fetches its app into its work dir; the app imports this installation's packages from there.
      Effect.zipRight(makeWorkDir(dir), linkInstallation(options.installation, dir)),
      nodeSpawnSpec({
        command,
        args: substitute(command.arguments, {
          WORKER_URL: options.workerUrl,
          EXECUTOR_ID: String(options.execId),
          HOSTNAME: options.hostname,
          CORES: String(options.cores),
          APP_ID: options.appId
        }),
        memoryMB: options.memory,
        resolveModule: options.installation.resolveModule,
        security: options.security,
        dir
      })
    )

    const run = Effect.gen(function*() {
      const spec = yield* unlessKilled(killRequest, prepare)
      if (Option.isNone(spec)) return ExecutorOutcome.Killed({ exitCode: Option.none() })
      const code = exitCode(
        yield* runProcess({
          spec: spec.value,
          killRequest,
          terminateTimeout: options.terminateTimeout,
          onStarted: Deferred.succeed(running, undefined)
        })
      )
      // Its shuffle files and spills go with it, however it ended (a SIGKILL leaves them behind otherwise); its
      // logs stay. One it never made is no failure; one that cannot be removed is logged, and the executor's end
      // is what it is all the same.
      const fs = yield* FileSystem.FileSystem
      const blockManagerDir = Path.join(dir, WorkDirs.blockManagerDirName)
      yield* DiskOperations.logged(
        fs.remove(blockManagerDir, { recursive: true, force: true }).pipe(
          Effect.mapError((error) => DiskError.fromCause("remove", blockManagerDir, error))
        )
      )
      if (options.afterExit !== undefined) yield* options.afterExit
      return (yield* Deferred.isDone(killRequest))
        ? ExecutorOutcome.Killed({ exitCode: Option.some(code) })
        : ExecutorOutcome.Exited({ exitCode: code })
    }).pipe(
      Effect.catchAll((error) =>
        Effect.succeed(
          ExecutorOutcome.LaunchFailed({
            reason: new Errors.ExecutorLaunchFailed({
              appId: options.appId,
              execId: options.execId,
              reason: error.message
            }).message
          })
        )
      )
    )

    yield* run.pipe(
      Effect.flatMap((outcome) => Deferred.succeed(result, executorFinalState(outcome))),
      Effect.onInterrupt(() =>
        Deferred.succeed(result, {
          state: "FAILED",
          message: Option.some("Worker shutting down"),
          exitStatus: Option.none()
        })
      ),
      Effect.forkScoped
    )

    return {
      running: Deferred.await(running),
      kill: Effect.zipRight(Deferred.succeed(killRequest, undefined), Deferred.await(result)).pipe(Effect.asVoid),
      result: Deferred.await(result)
    }
  })
