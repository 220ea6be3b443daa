/**
 * The port through which runners start driver and executor processes. `layerNode` spawns real children with
 * `node:child_process`: each in its own process group (so a signal reaches everything it started), with stdout
 * and stderr appended to files, and with exit codes after signals as plain values rather than failures.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import { reasonOf } from "./internal/reason.js"

/**
 * The file URL of `parent-watch.mjs`, for `node --import`: preloaded into a child, it takes the child's process
 * group down when the worker that started it dies without cleaning up. It sits next to `src/` and `dist/`, so the
 * same relative URL works from the sources and from the build.
 *
 * @since 0.1.0
 * @category constants
 */
export const parentWatchUrl: string = new URL("../parent-watch.mjs", import.meta.url).href

/**
 * What a worker hands the drivers and executors it starts about the network: the cluster's secret, and whether
 * their connections are encrypted (`kindling.network.crypto.enabled`).
 *
 * @since 0.1.0
 * @category models
 */
export interface NodeSecurity {
  readonly secret: string
  readonly encrypt: boolean
}

/**
 * What to start: the executable, its arguments, its whole environment, its working directory, and the files its
 * stdout and stderr are appended to.
 *
 * @since 0.1.0
 * @category models
 */
export interface SpawnSpec {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly env: Record<string, string>
  readonly cwd: string
  readonly stdoutFile: string
  readonly stderrFile: string
}

/**
 * How a process ended: its exit code, or the signal that ended it (then `code` is null).
 *
 * @since 0.1.0
 * @category models
 */
export interface ProcessExit {
  readonly code: number | null
  readonly signal: string | null
}

/**
 * A started process. `exited` waits for its end (any number of times); `signal` signals its whole process group
 * and does nothing once the group is gone.
 *
 * @since 0.1.0
 * @category models
 */
export interface Spawned {
  readonly pid: number
  readonly exited: Effect.Effect<ProcessExit>
  readonly signal: (sig: NodeJS.Signals) => Effect.Effect<void>
}

/**
 * The process could not be started (missing executable or working directory, unwritable log file).
 *
 * @since 0.1.0
 * @category errors
 */
export class SpawnFailed
  extends Data.TaggedError("SpawnFailed")<{ readonly command: string; readonly reason: string }>
{
  override get message(): string {
    return `Cannot start ${this.command}: ${this.reason}`
  }
}

/**
 * @since 0.1.0
 * @category tags
 */
export class ProcessLauncher extends Context.Tag("@kindling/worker/ProcessLauncher")<ProcessLauncher, {
  readonly spawn: (spec: SpawnSpec) => Effect.Effect<Spawned, SpawnFailed>
}>() {}

const signalGroup = (pid: number, sig: NodeJS.Signals): void => {
  try {
    process.kill(-pid, sig)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error
  }
}

const spawn = (spec: SpawnSpec): Effect.Effect<Spawned, SpawnFailed> =>
  Effect.async<Spawned, SpawnFailed>((resume) => {
    const failed = (error: unknown) => new SpawnFailed({ command: spec.command, reason: reasonOf(error) })
    const fds: Array<number> = []
    let child: ChildProcess.ChildProcess
    try {
      fds.push(Fs.openSync(spec.stdoutFile, "a"), Fs.openSync(spec.stderrFile, "a"))
      child = ChildProcess.spawn(spec.command, spec.args, {
        cwd: spec.cwd,
        env: spec.env,
        detached: true,
        stdio: ["ignore", fds[0]!, fds[1]!]
      })
    } catch (error) {
      resume(Effect.fail(failed(error)))
      return
    } finally {
      // spawn() has forked by the time it returns, so the child holds its own copies of the descriptors.
      for (const fd of fds) Fs.closeSync(fd)
    }
    const exited = new Promise<ProcessExit>((resolve) =>
      child.once("exit", (code, signal) => resolve({ code, signal }))
    )
    let settled = false
    // Also keeps a late "error" (after "spawn") from becoming an uncaught exception.
    child.on("error", (error) => {
      if (settled) return
      settled = true
      resume(Effect.fail(failed(error)))
    })
    child.once("spawn", () => {
      if (settled) return
      settled = true
      const pid = child.pid!
      resume(Effect.succeed({
        pid,
        exited: Effect.promise(() => exited),
        signal: (sig) => Effect.sync(() => signalGroup(pid, sig))
      }))
    })
    return Effect.sync(() => {
      if (child.pid !== undefined) signalGroup(child.pid, "SIGKILL")
    })
  })

/**
 * Spawns real processes with `node:child_process`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerNode: Layer.Layer<ProcessLauncher> = Layer.succeed(ProcessLauncher, ProcessLauncher.of({ spawn }))
