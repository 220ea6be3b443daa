// What DriverRunner and ExecutorRunner share (the shell's side of running a process; the core's is workload.ts):
// preparing the work dir and the node command line, and running one process so that a kill, or the runner's own
// interruption, terminates it.
import * as FileSystem from "@effect/platform/FileSystem"
import { Installation } from "@kindling/installation"
import { ModuleLoading } from "@kindling/kernel"
import type { Descriptions } from "@kindling/protocol"
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Path from "node:path"
import {
  type NodeSecurity,
  parentWatchUrl,
  type ProcessExit,
  ProcessLauncher,
  type Spawned,
  type SpawnFailed,
  type SpawnSpec
} from "../ProcessLauncher.js"
import { reasonOf } from "./reason.js"

export class WorkDirFailed
  extends Data.TaggedError("WorkDirFailed")<{ readonly path: string; readonly reason: string }>
{
  override get message(): string {
    return `Cannot create the work dir ${this.path}: ${this.reason}`
  }
}

export class ModuleNotResolved
  extends Data.TaggedError("ModuleNotResolved")<{ readonly specifier: string; readonly reason: string }>
{
  override get message(): string {
    return `Cannot resolve the main module ${this.specifier}: ${this.reason}`
  }
}

export const makeWorkDir = (path: string): Effect.Effect<void, WorkDirFailed, FileSystem.FileSystem> =>
  Effect.flatMap(FileSystem.FileSystem, (fs) =>
    Effect.mapError(
      fs.makeDirectory(path, { recursive: true }),
      (error) => new WorkDirFailed({ path, reason: error.message })
    ))

/** Links the installation's packages into `dir/node_modules`, so that an app artifact put in `dir` imports them. */
export const linkInstallation = (
  installation: Installation.Installation,
  dir: string
): Effect.Effect<void, WorkDirFailed, FileSystem.FileSystem> =>
  Effect.mapError(
    Installation.link(installation, dir),
    (error) => new WorkDirFailed({ path: error.path, reason: error.reason })
  )

const inheritedEnv = (): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined) env[key] = value
  }
  return env
}

// The memory a process is charged is its whole footprint. V8 sizes each isolate's young generation for
// throughput whatever the old space's limit (two 16 MiB semi-spaces and more once a heap grows: some 48 MiB for
// the main thread and as much again for each task thread), which in an executor of 256 MiB is over a third of it;
// so the semi-spaces shrink with the memory, 1 MiB per 64 up to V8's own 16 (the flag holds for every isolate of
// the process). Measured on a 1 GiB sortByKey in 256 MiB executors: peak RSS 300 → 215 MiB, some 10 % slower.
const memoryFlags = (memoryMB: number): Array<string> => [
  `--max-old-space-size=${memoryMB}`,
  `--max-semi-space-size=${Math.min(16, Math.max(1, Math.floor(memoryMB / 64)))}`
]

// glibc's malloc gives each thread that allocates its own arena, up to 8 per core, and keeps what is freed in it:
// the buffers a task thread, libuv's pool and V8's helpers let go stay resident in separate arenas. Two arenas,
// as JVM deployments set for the same reason, took another 20–30 MiB off that executor's peak. Without effect on
// other C libraries; an operator's own setting wins.
const boundedAllocator = { MALLOC_ARENA_MAX: "2" }

// `node --import parent-watch [loading flags] [--max-old-space-size] [nodeOptions] <main> <args>` in `dir`,
// logging there.
export const nodeSpawnSpec = (options: {
  readonly command: Descriptions.Command
  readonly args: ReadonlyArray<string>
  readonly memoryMB: number
  readonly resolveModule: (specifier: string) => string
  readonly security: NodeSecurity | undefined
  readonly dir: string
}): Effect.Effect<SpawnSpec, ModuleNotResolved> =>
  Effect.try({
    try: () => options.resolveModule(options.command.mainModule),
    catch: (error) => new ModuleNotResolved({ specifier: options.command.mainModule, reason: reasonOf(error) })
  }).pipe(Effect.map((main) => ({
    command: process.execPath,
    args: [
      "--import",
      parentWatchUrl,
      ...ModuleLoading.flags(),
      // 0 MB would make V8 refuse to start; it means "no limit asked for".
      ...(options.memoryMB > 0 ? memoryFlags(options.memoryMB) : []),
      ...options.command.nodeOptions,
      main,
      ...options.args
    ],
    // The worker's secret and encryption win over whatever the command asks for: drivers and executors
    // authenticate (and encrypt) with them, as Spark's workers hand theirs to the processes they start.
    env: {
      ...(options.memoryMB > 0 ? boundedAllocator : {}),
      ...inheritedEnv(),
      ...options.command.environment,
      ...(options.security === undefined ? {} : {
        KINDLING_AUTHENTICATE: "true",
        KINDLING_AUTHENTICATE_SECRET: options.security.secret,
        KINDLING_NETWORK_CRYPTO_ENABLED: String(options.security.encrypt)
      })
    },
    cwd: options.dir,
    stdoutFile: Path.join(options.dir, "stdout"),
    stderrFile: Path.join(options.dir, "stderr")
  })))

/**
 * The last lines of a text file, at most `bytes` of them (from a line's start unless one line is longer): where a
 * process that failed said why. Empty when the file cannot be read.
 */
export const lastLines = (path: string, bytes: number): Effect.Effect<string, never, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const size = Number((yield* fs.stat(path)).size)
    const from = Math.max(0, size - bytes)
    const read = yield* Effect.scoped(
      Effect.flatMap(fs.open(path), (file) => Effect.zipRight(file.seek(from, "start"), file.readAlloc(size - from)))
    )
    const text = new TextDecoder().decode(Option.getOrElse(read, () => new Uint8Array()))
    const firstWhole = from === 0 ? 0 : text.indexOf("\n") + 1
    return (firstWhole > 0 && firstWhole < text.length ? text.slice(firstWhole) : text).trim()
  }).pipe(Effect.orElseSucceed(() => ""))

/**
 * The first lines of a text file, at most `bytes` of them (to a line's end unless one line is longer); none when
 * the file is not there or cannot be read.
 */
export const firstLines = (
  path: string,
  bytes: number
): Effect.Effect<Option.Option<string>, never, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const read = yield* Effect.scoped(Effect.flatMap(fs.open(path), (file) => file.readAlloc(bytes + 1)))
    const text = new TextDecoder().decode(Option.getOrElse(read, () => new Uint8Array()))
    if (text.length <= bytes) return Option.some(text.trim())
    const lastWhole = text.lastIndexOf("\n", bytes)
    return Option.some(text.slice(0, lastWhole > 0 ? lastWhole : bytes).trim())
  }).pipe(Effect.orElseSucceed(() => Option.none()))

// SIGTERM to the process group, then SIGKILL to whatever is left after the timeout. This runs inside releases (a
// worker stopping closes its runners' scopes), which are uninterruptible: there a timeout cannot stop its wait,
// and the worker would hang with a process that ignores SIGTERM. So the wait alone is interruptible — it runs in
// the timeout's own fiber, which the timeout interrupts — while the rest, the SIGKILL included, is not cut short
// by the interruption that closed the scope.
export const terminate = (spawned: Spawned, timeout: Duration.DurationInput): Effect.Effect<ProcessExit> =>
  spawned.signal("SIGTERM").pipe(
    Effect.zipRight(Effect.timeoutOption(Effect.interruptible(spawned.exited), timeout)),
    Effect.flatMap(Option.match({
      onNone: () =>
        Effect.logWarning(
          `Process ${spawned.pid} did not stop within ${Duration.format(Duration.decode(timeout))} of SIGTERM; ` +
            "killing its process group"
        ).pipe(Effect.zipRight(spawned.signal("SIGKILL")), Effect.zipRight(spawned.exited)),
      onSome: Effect.succeed
    }))
  )

// None when a kill was asked for before `effect` completed; `effect` is then interrupted.
export const unlessKilled = <A, E, R>(
  killRequest: Deferred.Deferred<void>,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<Option.Option<A>, E, R> =>
  Effect.raceFirst(Effect.asSome(effect), Effect.as(Deferred.await(killRequest), Option.none()))

// Runs one process to its end; whatever it started in its group ends with it. A process that exits by itself
// leaves its group's other members behind (a helper it forked), so the group is killed as soon as the exit is
// seen: while any member lives, the group's id cannot belong to anyone else. Should the runner be interrupted
// (its scope closing as the worker stops), the release terminates the process before the interruption
// completes, so a clean worker shutdown leaves no child behind.
export const runProcess = (options: {
  readonly spec: SpawnSpec
  readonly killRequest: Deferred.Deferred<void>
  readonly terminateTimeout: Duration.DurationInput
  readonly onStarted: Effect.Effect<void>
}): Effect.Effect<ProcessExit, SpawnFailed, ProcessLauncher> =>
  Effect.flatMap(ProcessLauncher, (launcher) =>
    Effect.acquireUseRelease(
      launcher.spawn(options.spec),
      (spawned) =>
        Effect.zipRight(
          options.onStarted,
          Effect.race(
            Effect.tap(spawned.exited, () => spawned.signal("SIGKILL")),
            Effect.zipRight(Deferred.await(options.killRequest), terminate(spawned, options.terminateTimeout))
          )
        ),
      (spawned, exit) => Exit.isSuccess(exit) ? Effect.void : terminate(spawned, options.terminateTimeout)
    ))
