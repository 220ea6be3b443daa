/**
 * Runs one driver on a worker, as Spark's DriverRunner does: a work dir `<workDir>/<driverId>`, the app artifact
 * fetched into it, the driver process started with stdout and stderr in files there. It runs the process as often
 * as it is asked — a supervised driver's relaunches, in the work dir and with the artifact the first run prepared —
 * and reports how each run ended; whether to run it again, and when, is `WorkerCore`'s decision.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { type Installation, WorkDirs } from "@kindling/installation"
import { Descriptions, Errors, type Ids, type RpcAddress } from "@kindling/protocol"
import type { RpcEnv } from "@kindling/rpc"
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import * as Path from "node:path"
import { fetchArtifact } from "./Artifacts.js"
import { firstLines, lastLines, makeWorkDir, nodeSpawnSpec, runProcess, unlessKilled } from "./internal/nodeProcess.js"
import type { NodeSecurity, ProcessLauncher, SpawnSpec } from "./ProcessLauncher.js"
import { exitCode, substitute } from "./Supervision.js"

// How much of what a failed driver said its failure carries: the error it ended with, not its whole log.
const failureBytes = 2048

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly driverId: Ids.DriverId
  readonly description: Descriptions.DriverDescription
  /** Where else the app's artifact may be had by its digest: the master that launched the driver. */
  readonly artifactMirrors?: ReadonlyArray<RpcAddress.RpcAddress>
  /** The worker's work dir; the driver gets a sub-directory named after its id. */
  readonly workDir: string
  readonly workerUrl: string
  readonly terminateTimeout: Duration.DurationInput
  /** The installation whose entry module the command names. */
  readonly installation: Installation.Installation
  /** The cluster's secret and whether to encrypt, handed to the process in its environment (never on its command line). */
  readonly security?: NodeSecurity | undefined
}

/**
 * How one run of the driver ended: its process exited (with what it said of its failure, after a non-zero exit), a
 * kill came before the process started, or the work dir, the artifact or the process could not be had (the driver
 * ends ERROR with the exception).
 *
 * @since 0.1.0
 * @category models
 */
export type RunEnd = Data.TaggedEnum<{
  Exited: { readonly exitCode: number; readonly failure: Option.Option<Descriptions.RemoteException> }
  NotStarted: {}
  LaunchFailed: { readonly exception: Descriptions.RemoteException }
}>

/**
 * @since 0.1.0
 * @category constructors
 */
export const RunEnd = Data.taggedEnum<RunEnd>()

/**
 * @since 0.1.0
 * @category models
 */
export interface DriverHandle {
  /**
   * Runs the driver's process once, to its end; the first run prepares the work dir and fetches the artifact,
   * which later runs reuse. Runs never overlap: one asked for while another runs waits for it. Once the driver is
   * killed, a run ends at once (`NotStarted`).
   */
  readonly run: Effect.Effect<RunEnd>
  /**
   * Stops the driver for good: a running process gets SIGTERM, then SIGKILL after the terminate timeout, and no
   * run starts any more. Completes once no run is going on.
   */
  readonly kill: Effect.Effect<void>
  /** How many times the driver process has been started so far. */
  readonly launches: Effect.Effect<number>
}

/**
 * Makes the driver's runner; nothing runs until `run`. Runs go on in the current scope, whose closing terminates a
 * running process (SIGTERM, then SIGKILL after the terminate timeout) and interrupts its run.
 *
 * @since 0.1.0
 * @category constructors
 */
export const start = (
  options: Options
): Effect.Effect<DriverHandle, never, ProcessLauncher | FileSystem.FileSystem | RpcEnv.RpcEnv | Scope.Scope> =>
  Effect.gen(function*() {
    const { command } = options.description
    const scope = yield* Effect.scope
    const context = yield* Effect.context<ProcessLauncher | FileSystem.FileSystem | RpcEnv.RpcEnv>()
    const killRequest = yield* Deferred.make<void>()
    const oneAtATime = yield* Effect.makeSemaphore(1)
    const launches = yield* Ref.make(0)
    const dir = Path.join(options.workDir, options.driverId)
    // A driver that failed carries why, as its submitter and `status` see it: the summary of its failure it wrote
    // (a Kindling app's driver does), else the end of its stderr, where a driver writes its error last (Spark's
    // worker reports no more than the state).
    const failureFile = Path.join(dir, WorkDirs.driverFailureFileName)
    const failure = (spec: SpawnSpec, code: number) =>
      Effect.map(
        Effect.flatMap(
          firstLines(failureFile, failureBytes),
          Option.match({ onNone: () => lastLines(spec.stderrFile, failureBytes), onSome: Effect.succeed })
        ),
        (said) =>
          new Descriptions.RemoteException({
            name: "DriverFailed",
            message: `The driver exited with code ${code}` + (said === "" ? "" : `: ${said}`)
          })
      )

    const prepare = Effect.gen(function*() {
      yield* makeWorkDir(dir)
      const userJar = yield* fetchArtifact(options.description.appUrl, dir, options.artifactMirrors)
      const args = substitute(command.arguments, { WORKER_URL: options.workerUrl, USER_JAR: userJar })
      return yield* nodeSpawnSpec({
        command,
        args,
        memoryMB: options.description.mem,
        resolveModule: options.installation.resolveModule,
        security: options.security,
        dir
      })
    })
    // What the first run prepared; runs are one at a time, so no two prepare.
    let prepared: SpawnSpec | undefined

    const runOnce = Effect.gen(function*() {
      if (yield* Deferred.isDone(killRequest)) return RunEnd.NotStarted()
      if (prepared === undefined) {
        const spec = yield* unlessKilled(killRequest, prepare)
        if (Option.isNone(spec)) return RunEnd.NotStarted()
        prepared = spec.value
      }
      const spec = prepared
      // What an earlier run wrote of its failure is not this one's.
      yield* FileSystem.FileSystem.pipe(
        Effect.flatMap((fs) => fs.remove(failureFile, { force: true })),
        Effect.ignore
      )
      const exit = yield* runProcess({
        spec,
        killRequest,
        terminateTimeout: options.terminateTimeout,
        onStarted: Ref.update(launches, (n) => n + 1)
      })
      const code = exitCode(exit)
      return RunEnd.Exited({
        exitCode: code,
        failure: code === 0 ? Option.none() : Option.some(yield* failure(spec, code))
      })
    }).pipe(
      Effect.catchAll((error) => {
        const failed = new Errors.DriverLaunchFailed({ driverId: options.driverId, reason: error.message })
        return Effect.succeed(
          RunEnd.LaunchFailed({
            exception: new Descriptions.RemoteException({ name: failed._tag, message: failed.message })
          })
        )
      })
    )

    return {
      // In the runner's scope, not the caller's fiber: closing the scope is what stops a run.
      run: runOnce.pipe(
        oneAtATime.withPermits(1),
        Effect.provide(context),
        Effect.forkIn(scope),
        Effect.flatMap(Fiber.join)
      ),
      kill: Effect.zipRight(Deferred.succeed(killRequest, undefined), oneAtATime.withPermits(1)(Effect.void)),
      launches: Ref.get(launches)
    }
  })
