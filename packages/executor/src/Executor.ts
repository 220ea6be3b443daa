/**
 * The executor as a running role: its core (`ExecutorCore`) in the kernel's shell on the RpcEnv in context, with
 * its tasks run on a pool of task threads (`TaskThreads`). `local` mode runs one in the driver's process; on a
 * cluster, `kindling executor` runs one per process.
 *
 * @since 0.1.0
 */
import { DiskOperations, Shell, TemporaryDirectory } from "@kindling/kernel"
import {
  ClusterMessages,
  Endpoints,
  Errors,
  type Ids,
  Records,
  type RpcAddress,
  type SharedVariables
} from "@kindling/protocol"
import { type DataPlane, RpcEnv } from "@kindling/rpc"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberMap from "effect/FiberMap"
import * as Runtime from "effect/Runtime"
import * as Scope from "effect/Scope"
import * as PerfHooks from "node:perf_hooks"
import * as V8 from "node:v8"
import { BlockStore } from "./BlockStore.js"
import type { Disk } from "./Disk.js"
import type * as Evaluation from "./Evaluation.js"
import { blocksRead, shufflesRead } from "./Evaluation.js"
import * as ExecutorCore from "./ExecutorCore.js"
import * as NodeDisk from "./NodeDisk.js"
import * as ShuffleService from "./ShuffleService.js"
import type * as TaskContext from "./TaskContext.js"
import type * as TaskThreads from "./TaskThreads.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly executorId: Ids.ExecutorId
  readonly driver: RpcAddress.RpcAddress
  readonly hostname: string
  /** Where its logs can be read (`stdout`, `stderr`), told to the driver when it registers. */
  readonly logUrls?: Readonly<Record<string, string>>
  readonly threads: TaskThreads.TaskThreads
  /** The files it works on (the local file system unless given). */
  readonly disk?: Disk
  readonly heartbeatIntervalMillis: number
  readonly askTimeoutMillis: number
  /** A result of more bytes is left on this node's data plane for the driver to fetch (default 1 MiB). */
  readonly maxDirectResultSize?: number
  /**
   * Where shuffle outputs and spills go; it must exist. Without one, the executor makes a temporary directory,
   * removed when it stops.
   */
  readonly localDir?: string
  /** Bytes a task's aggregation or sort holds in memory before it spills (`kindling.shuffle.spill.threshold`). */
  readonly spillThreshold?: number
  /** The most shuffle bytes fetched at once (`kindling.reducer.maxSizeInFlight`, default 48 MiB). */
  readonly maxBytesInFlight?: number
  /**
   * A fetched shuffle block up to this size is kept in memory, a larger one goes to a file
   * (`kindling.network.maxRemoteBlockSizeFetchToMem`, default 1 MiB).
   */
  readonly maxInMemoryBlock?: number
  /**
   * Bytes of persisted partitions kept in memory (default: 60% of what the heap may grow to beyond 300 MiB, as
   * Spark's unified memory, storage's half of it).
   */
  readonly storageMemory?: number
  readonly validateState?: boolean
  /** Called when the executor must stop: told to, its driver gone, or its registration refused. */
  readonly onExit: (code: number, reason: string) => Effect.Effect<void>
}

type Host = Shell.Host<ExecutorCore.Local>

const resultPrefix = "task-result/"

const failure = (className: string, message: string) =>
  Records.encode({ _tag: "TaskFailure", className, message, stack: `${className}: ${message}` })

// How late this process's event loop runs its callbacks (a busy or blocked loop delays heartbeats and fetches),
// since the last time it was read: the executor's monitor, started with its first heartbeat and stopped with it.
const loopDelayMonitor = Effect.map(
  Effect.acquireRelease(
    Effect.sync(() => ({ histogram: undefined as PerfHooks.IntervalHistogram | undefined })),
    (monitor) => Effect.sync(() => monitor.histogram?.disable())
  ),
  (monitor) => (): number => {
    if (monitor.histogram === undefined) {
      monitor.histogram = PerfHooks.monitorEventLoopDelay({ resolution: 10 })
      monitor.histogram.enable()
    }
    // In milliseconds; 0 until the monitor has a sample.
    const delayP99 = monitor.histogram.count === 0 ? 0 : monitor.histogram.percentile(99) / 1e6
    monitor.histogram.reset()
    return delayP99
  }
)

// What the core cannot know, added to its heartbeat as it leaves: how far each running task has read, and this
// process's memory and event-loop delay (Spark's executor metrics, in Node's terms).
const withMeasurements = (
  heartbeat: ClusterMessages.ExecutorHeartbeat,
  threads: TaskThreads.TaskThreads,
  loopDelay: () => number
): ClusterMessages.ExecutorHeartbeat => {
  const memory = process.memoryUsage()
  const delayP99 = loopDelay()
  return new ClusterMessages.ExecutorHeartbeat({
    executorId: heartbeat.executorId,
    taskMetrics: heartbeat.taskMetrics.map((update) => {
      const progress = threads.progress(update.taskId)
      return progress === undefined ? update : new ClusterMessages.TaskMetricsUpdate({
        taskId: update.taskId,
        metrics: { ...update.metrics, recordsRead: progress.recordsRead }
      })
    }),
    executorMetrics: {
      processRss: memory.rss,
      heapUsed: memory.heapUsed,
      heapTotal: memory.heapTotal,
      external: memory.external,
      arrayBuffers: memory.arrayBuffers,
      eventLoopDelayP99: delayP99
    }
  })
}

// Spark's unified memory: 60% of the heap beyond 300 MiB reserved, half of it for storage by default.
const defaultStorageMemory = () => {
  const heap = V8.getHeapStatistics().heap_size_limit
  return Math.max(32 * 1024 * 1024, Math.floor(0.3 * (heap - 300 * 1024 * 1024)))
}

/**
 * A running executor.
 *
 * @since 0.1.0
 * @category models
 */
export interface Executor {
  /** Completes once the executor has stopped by itself: told to, its driver gone, or its registration refused. */
  readonly exited: Effect.Effect<void>
}

/**
 * Starts an executor on the RpcEnv in context and registers it with its driver. Its tasks stop when the scope
 * closes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: Options
): Effect.Effect<Executor, Shell.NotListening | RpcEnv.EndpointAlreadyRegistered, RpcEnv.RpcEnv | Scope.Scope> =>
  Effect.gen(function*() {
    const exited = yield* Deferred.make<void>()
    const loopDelay = yield* loopDelayMonitor
    const rpc = yield* RpcEnv.RpcEnv
    const address = yield* Shell.listeningAddress(Endpoints.executor)
    const driver = Endpoints.ref(options.driver, Endpoints.scheduler)
    const maxDirect = options.maxDirectResultSize ?? 1024 * 1024
    const localDir = options.localDir ?? (yield* TemporaryDirectory.make("kindling-executor-"))
    const disk = options.disk ?? NodeDisk.disk
    const spillThreshold = options.spillThreshold ?? 64 * 1024 * 1024
    const blocks = new BlockStore(disk, localDir, options.storageMemory ?? defaultStorageMemory())
    // Each broadcast is fetched once, into memory every task thread can read without a copy, by a fiber of the
    // executor's own: a task that stops waiting (killed) does not stop the fetch the others wait on. A fetch that
    // failed is tried again by the next task that needs the value.
    const runFork = Runtime.runFork(yield* Effect.runtime<never>())
    const broadcasts = new Map<number, Fiber.RuntimeFiber<Uint8Array, Errors.TransferError>>()
    yield* Effect.addFinalizer(() => Fiber.interruptAll(broadcasts.values()))
    const broadcastValue = (broadcast: { readonly id: number; readonly token: string }) =>
      Effect.suspend(() => {
        let fetch = broadcasts.get(broadcast.id)
        if (fetch === undefined) {
          fetch = runFork(
            rpc.data.fetchBytes(options.driver, `broadcast/${broadcast.token}/${broadcast.id}`).pipe(
              Effect.map((bytes) => {
                const shared = new Uint8Array(new SharedArrayBuffer(bytes.length))
                shared.set(bytes)
                return shared
              }),
              Effect.tapError(() => Effect.sync(() => broadcasts.delete(broadcast.id)))
            )
          )
          broadcasts.set(broadcast.id, fetch)
        }
        return Effect.map(Fiber.join(fetch), (bytes) => [broadcast.id, bytes] as const)
      })
    const shuffles = yield* ShuffleService.make({
      executorId: options.executorId,
      disk,
      localDir,
      driver,
      askTimeoutMillis: options.askTimeoutMillis,
      ...(options.maxBytesInFlight === undefined ? {} : { maxBytesInFlight: options.maxBytesInFlight }),
      ...(options.maxInMemoryBlock === undefined ? {} : { maxInMemoryBlock: options.maxInMemoryBlock })
    })

    // Large results wait here for the driver, which reads each once; a result read to its end is forgotten.
    const results = new Map<string, Uint8Array>()
    yield* rpc.data.serve(resultPrefix, (blockId) =>
      Effect.suspend(() => {
        const bytes = results.get(blockId)
        if (bytes === undefined) return Effect.fail(new Errors.BlockNotFound({ blockId }))
        return Effect.succeed<DataPlane.BlockSource>({
          size: bytes.length,
          read: (offset, length) =>
            Effect.sync(() => {
              if (offset + length >= bytes.length) results.delete(blockId)
              return bytes.subarray(offset, offset + length)
            })
        })
      })).pipe(Effect.orDie)
    const deliverable = (taskId: number, outcome: Uint8Array) => {
      if (outcome.length <= maxDirect) return outcome
      const blockId = `${resultPrefix}${taskId}`
      results.set(blockId, outcome)
      return Records.encode({ _tag: "IndirectTaskResult", blockId, size: outcome.length })
    }

    // What the task needs before a thread takes it: the shuffle blocks it reads, gathered into its scope, and the
    // persisted partitions it reads that are held here.
    const prepare = (
      taskId: number,
      bytes: Uint8Array,
      scope: Scope.Scope
    ): Effect.Effect<TaskContext.Inputs, ShuffleService.ShuffleFetchFailed | Errors.RpcError | Errors.TransferError> =>
      Effect.suspend(() => {
        let task: Evaluation.Task
        try {
          task = Records.decode(bytes) as Evaluation.Task
        } catch {
          // Not a task: the thread says so, as the task's failure.
          return Effect.succeed<TaskContext.Inputs>({ localDir, spillThreshold, shuffleInputs: [], cached: [] })
        }
        if (task.result._tag === "ShuffleWrite") shuffles.mapTaskStarting(task.result.shuffle)
        const cached = blocksRead(task.plan).flatMap((id) => {
          const segment = blocks.get(id)
          return segment === undefined ? [] : [[id, segment] as const]
        })
        const reads = shufflesRead(task.plan)
        // Most tasks read no shuffle and no broadcast: nothing to wait for.
        if (reads.length === 0 && task.broadcasts === undefined) {
          return Effect.succeed<TaskContext.Inputs>({ localDir, spillThreshold, shuffleInputs: [], cached })
        }
        return Effect.zipWith(
          Scope.extend(shuffles.gather(taskId, reads), scope),
          Effect.forEach(task.broadcasts ?? [], broadcastValue),
          (gathered, broadcasts): TaskContext.Inputs => ({
            localDir,
            spillThreshold,
            shuffleInputs: gathered.inputs,
            metrics: gathered.metrics,
            cached,
            broadcasts
          })
        )
      })

    // How a task ended: its outcome, and the persisted partitions it computed that are now kept here.
    const runTask = (task: Uint8Array, info: SharedVariables.TaskInfo) => {
      const taskId = info.taskAttemptId
      return Effect.scoped(Effect.gen(function*() {
        const inputs = yield* prepare(taskId, task, yield* Effect.scope)
        const { outcome, stored } = yield* options.threads.run(task, info, inputs)
        const { _tag } = Records.decode(outcome) as { readonly _tag: string }
        if (_tag !== "TaskResult") return { state: "FAILED" as const, outcome }
        return {
          state: "FINISHED" as const,
          outcome: deliverable(taskId, outcome),
          stored: stored.flatMap((block) => blocks.put(block) ?? [])
        }
      })).pipe(
        Effect.catchTag(
          "ShuffleFetchFailed",
          (failed) => Effect.succeed({ state: "FAILED" as const, outcome: Records.encode(failed.outcome) })
        ),
        // The thread died under the task (it ran out of memory, or exited), or the driver could not say where the
        // blocks are: the task failed, not the executor.
        Effect.catchAll((error) =>
          Effect.succeed({ state: "FAILED" as const, outcome: failure(error._tag, error.message) })
        )
      )
    }

    // A task's end as its executor reports it: interrupted, it was killed; a defect in running it (not in the task's
    // own code, which the thread reports) fails it, so that a task that cannot be run fails its job rather than run
    // again for ever.
    const ended = (exit: Exit.Exit<Effect.Effect.Success<ReturnType<typeof runTask>>>) => {
      if (Exit.isSuccess(exit)) return exit.value
      if (Exit.isInterrupted(exit)) return { state: "KILLED" as const, outcome: failure("TaskKilled", "killed") }
      const defect = Cause.squash(exit.cause)
      return defect instanceof Error
        ? { state: "FAILED" as const, outcome: failure(defect.name, defect.message) }
        : { state: "FAILED" as const, outcome: failure("Error", String(defect)) }
    }

    // The task runs on a fiber of its own, and its end — whatever it is — is watched from outside that fiber: one
    // killed before it even started (its kill came right behind its launch) ends without running anything of its
    // own, its finalizers included.
    const startTask = (command: Extract<ExecutorCore.ExecutorCommand, { _tag: "RunTask" }>, host: Host) =>
      Effect.gen(function*() {
        const fiber = yield* FiberMap.run(tasks, command.taskId, runTask(command.task, command.info))
        host.fork(
          Effect.flatMap(
            Fiber.await(fiber),
            (exit) => Effect.sync(() => host.feed({ _tag: "TaskEnded", taskId: command.taskId, ...ended(exit) }))
          )
        )
      })

    const interpret = (command: ExecutorCore.ExecutorCommand, host: Host) => {
      switch (command._tag) {
        case "Register":
          return Effect.sync(() =>
            host.fork(
              rpc.ask(driver, command.message, { timeout: options.askTimeoutMillis }).pipe(
                Effect.matchEffect({
                  onSuccess: () => Effect.sync(() => host.feed({ _tag: "Registered" })),
                  onFailure: (error) =>
                    Effect.sync(() => host.feed({ _tag: "RegistrationFailed", reason: error.message }))
                })
              )
            )
          )
        case "RunTask":
          return startTask(command, host)
        case "KillTask":
          return Effect.sync(() => host.fork(FiberMap.remove(tasks, command.taskId)))
        case "RemoveRdd":
          // The blocks are dropped whatever becomes of their files: one that cannot be removed is logged, not a
          // defect that would stop the executor.
          return DiskOperations.removing(localDir, () => blocks.removeDataset(command.rddId))
        case "Heartbeat":
          return Effect.sync(() =>
            host.fork(
              rpc.ask(driver, withMeasurements(command.message, options.threads, loopDelay), {
                timeout: options.askTimeoutMillis
              }).pipe(
                Effect.catchAll((error) =>
                  Effect.sync(() => host.feed({ _tag: "HeartbeatFailed", reason: error.message }))
                )
              )
            )
          )
      }
    }

    // The running tasks, by id; closing the executor's scope interrupts them, before what they use is closed.
    const tasks = yield* FiberMap.make<number, Effect.Effect.Success<ReturnType<typeof runTask>>>()
    yield* Shell.make({
      core: ExecutorCore.core,
      state: ExecutorCore.make({
        executorId: options.executorId,
        self: Endpoints.ref(address, Endpoints.executor),
        driver,
        hostname: options.hostname,
        ...(options.logUrls === undefined ? {} : { logUrls: options.logUrls }),
        cores: options.threads.size,
        heartbeatIntervalMillis: options.heartbeatIntervalMillis
      }),
      interpret,
      validateState: options.validateState ?? false,
      onExit: (code, reason) => Effect.zipRight(options.onExit(code, reason), Deferred.succeed(exited, undefined))
    })
    return { exited: Deferred.await(exited) }
  })
