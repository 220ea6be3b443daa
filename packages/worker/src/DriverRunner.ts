/**
 * Runs one driver on a worker, as Spark's DriverRunner does: a work dir `<workDir>/<driverId>`, the app artifact
 * fetched into it, the driver process started with stdout and stderr in files there, and — for a supervised
 * driver — relaunched with exponential back-off until it exits with 0 or is killed.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { type Installation, WorkDirs } from "@kindling/installation"
import { Descriptions, Errors, type Ids, type RpcAddress, type States } from "@kindling/protocol"
import type { RpcEnv } from "@kindling/rpc"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import * as Path from "node:path"
import { fetchArtifact } from "./Artifacts.js"
import { firstLines, lastLines, makeWorkDir, nodeSpawnSpec, runProcess, unlessKilled } from "./internal/nodeProcess.js"
import type { NodeSecurity, ProcessLauncher, SpawnSpec } from "./ProcessLauncher.js"
import { driverFinalState, exitCode, nextBackoff, substitute } from "./Supervision.js"

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
  /** The first wait before relaunching a supervised driver (Spark: 1 second). */
  readonly initialBackoff: Duration.DurationInput
  /** The installation whose entry module the command names. */
  readonly installation: Installation.Installation
  /** The cluster's secret and whether to encrypt, handed to the process in its environment (never on its command line). */
  readonly security?: NodeSecurity | undefined
}

/**
 * How a driver ended: FINISHED, KILLED or FAILED from its last exit code, or ERROR with the exception when it
 * could not be prepared or launched.
 *
 * @since 0.1.0
 * @category models
 */
export interface DriverResult {
  readonly state: States.DriverState
  readonly exception: Option.Option<Descriptions.RemoteException>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface DriverHandle {
  /**
   * Stops the driver for good: no further relaunch, a back-off wait ends at once, and a running process gets
   * SIGTERM, then SIGKILL after the terminate timeout. Completes once the driver has ended.
   */
  readonly kill: Effect.Effect<void>
  /** Waits for the final state. */
  readonly result: Effect.Effect<DriverResult>
  /** How many times the driver process has been started so far. */
  readonly launches: Effect.Effect<number>
}

/**
 * Starts running the driver in the background of the current scope. Closing the scope terminates a running
 * process (SIGTERM, then SIGKILL after the terminate timeout) and ends the driver as KILLED.
 *
 * @since 0.1.0
 * @category constructors
 */
export const start = (
  options: Options
): Effect.Effect<DriverHandle, never, ProcessLauncher | FileSystem.FileSystem | RpcEnv.RpcEnv | Scope.Scope> =>
  Effect.gen(function*() {
    const { command, supervise } = options.description
    const killRequest = yield* Deferred.make<void>()
    const result = yield* Deferred.make<DriverResult>()
    const launches = yield* Ref.make(0)
    const dir = Path.join(options.workDir, options.driverId)
    const initialMillis = Duration.toMillis(Duration.decode(options.initialBackoff))
    const ended = (state: States.DriverState): DriverResult => ({ state, exception: Option.none() })
    // A driver that failed carries why, as its submitter and `status` see it: the summary of its failure it wrote
    // (a Kindling app's driver does), else the end of its stderr, where a driver writes its error last (Spark's
    // worker reports no more than the state).
    const failureFile = Path.join(dir, WorkDirs.driverFailureFileName)
    const failed = (spec: SpawnSpec, code: number | undefined) =>
      Effect.map(
        Effect.flatMap(
          firstLines(failureFile, failureBytes),
          Option.match({ onNone: () => lastLines(spec.stderrFile, failureBytes), onSome: Effect.succeed })
        ),
        (said): DriverResult => ({
          state: driverFinalState({ exitCode: code, killed: false }),
          exception: Option.some(
            new Descriptions.RemoteException({
              name: "DriverFailed",
              message: `The driver exited with code ${code ?? "none (a signal)"}` + (said === "" ? "" : `: ${said}`)
            })
          )
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

    const run = Effect.gen(function*() {
      const spec = yield* unlessKilled(killRequest, prepare)
      if (Option.isNone(spec)) return ended(driverFinalState({ exitCode: undefined, killed: true }))
      let backoff: number | undefined
      while (true) {
        // What an earlier launch wrote of its failure is not this one's.
        yield* FileSystem.FileSystem.pipe(
          Effect.flatMap((fs) => fs.remove(failureFile, { force: true })),
          Effect.ignore
        )
        const startedAt = yield* Clock.currentTimeMillis
        const exit = yield* runProcess({
          spec: spec.value,
          killRequest,
          terminateTimeout: options.terminateTimeout,
          onStarted: Ref.update(launches, (n) => n + 1)
        })
        const code = exitCode(exit)
        const killed = yield* Deferred.isDone(killRequest)
        if (code === 0 || killed) return ended(driverFinalState({ exitCode: code, killed }))
        if (!supervise) return yield* failed(spec.value, code)
        backoff = nextBackoff(backoff, (yield* Clock.currentTimeMillis) - startedAt, initialMillis)
        const slept = yield* unlessKilled(killRequest, Effect.sleep(backoff))
        if (Option.isNone(slept)) return ended(driverFinalState({ exitCode: code, killed: true }))
      }
    }).pipe(
      Effect.catchAll((error) => {
        const failure = new Errors.DriverLaunchFailed({ driverId: options.driverId, reason: error.message })
        return Effect.succeed<DriverResult>({
          state: "ERROR",
          exception: Option.some(new Descriptions.RemoteException({ name: failure._tag, message: failure.message }))
        })
      })
    )

    yield* run.pipe(
      Effect.flatMap((final) => Deferred.succeed(result, final)),
      Effect.onInterrupt(() => Deferred.succeed(result, ended("KILLED"))),
      Effect.forkScoped
    )

    return {
      kill: Effect.zipRight(Deferred.succeed(killRequest, undefined), Deferred.await(result)).pipe(Effect.asVoid),
      result: Deferred.await(result),
      launches: Ref.get(launches)
    }
  })
