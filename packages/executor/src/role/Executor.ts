/**
 * The executor as a running role: its core (`ExecutorCore`) in the kernel's shell on the RpcEnv in context, with
 * its tasks run on a pool of task threads (`TaskThreads`). `local` mode runs one in the driver's process; on a
 * cluster, `kindling executor` runs one per process.
 *
 * @since 0.1.0
 */
import { type Disk, ObjectStore } from "@kindling/data"
import * as NodeDisk from "@kindling/data/NodeDisk"
import { DiskOperations, Shell, TemporaryDirectory } from "@kindling/kernel"
import { ClusterMessages, Errors, type Ids, Records, type RpcAddress, type TaskPlan } from "@kindling/protocol"
// By its own path, not the index: an executor's bundle then leaves out the other roles' messages (see Endpoints).
import * as Endpoints from "@kindling/protocol/Endpoints"
import { type DataPlane, RpcEnv } from "@kindling/rpc"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as Runtime from "effect/Runtime"
import type * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as PerfHooks from "node:perf_hooks"
import * as V8 from "node:v8"
import { blockId as persistedBlockId, BlockStore } from "../shuffle/BlockStore.js"
import * as Migration from "../shuffle/Migration.js"
import * as ShuffleService from "../shuffle/ShuffleService.js"
import type * as TaskContext from "../tasks/TaskContext.js"
import type * as TaskThreads from "../tasks/TaskThreads.js"
import * as ExecutorCore from "./ExecutorCore.js"
import type * as ExecutorInputs from "./ExecutorInputs.js"

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
  readonly disk?: Disk.Disk
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
  /**
   * The object store its tasks read and write `s3://` paths in (the app's `kindling.hadoop.fs.s3a.*` settings);
   * without one, the AWS SDK's own defaults.
   */
  readonly objectStore?: ObjectStore.S3Settings
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
  /** Its app's id, which names the blocks a worker's shuffle service serves. */
  readonly appId?: string
  /** Its worker's shuffle service, which serves its map outputs from `localDir` too (`ExternalShuffleService`). */
  readonly shuffleService?: RpcAddress.RpcAddress
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
    const objectStore = options.objectStore ?? ObjectStore.settingsOf({})
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
      ...(options.appId === undefined ? {} : { appId: options.appId }),
      servedByWorker: options.shuffleService !== undefined,
      ...(options.maxBytesInFlight === undefined ? {} : { maxBytesInFlight: options.maxBytesInFlight }),
      ...(options.maxInMemoryBlock === undefined ? {} : { maxInMemoryBlock: options.maxInMemoryBlock })
    })

    const migration = yield* Migration.make({ disk, localDir, blocks, shuffles })

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

    // What the task needs before a thread takes it: the shuffle blocks it reads, gathered into the task's scope,
    // the broadcasts it reads, and the persisted partitions it reads that are held here. Most tasks read no
    // shuffle and no broadcast: their inputs are at hand at once, and they start without a fiber of their own.
    const prepare = (
      taskId: number,
      needs: TaskPlan.TaskNeeds
    ):
      | { readonly _tag: "Ready"; readonly inputs: TaskContext.Inputs }
      | {
        readonly _tag: "Gather"
        readonly gather: Effect.Effect<
          TaskContext.Inputs,
          ShuffleService.ShuffleFetchFailed | Errors.RpcError | Errors.TransferError,
          Scope.Scope
        >
      } =>
    {
      if (needs.writes !== undefined) shuffles.serve(needs.writes)
      const cached = needs.persisted.flatMap(({ partition, rddId }) => {
        const id = persistedBlockId(rddId, partition)
        const segment = blocks.get(id)
        return segment === undefined ? [] : [[id, segment] as const]
      })
      // A shuffle beneath a persisted partition held here is not read: the task reads that partition instead.
      const heldHere = ({ partition, rddId }: TaskPlan.TaskNeeds["persisted"][number]) =>
        cached.some(([id]) => id === persistedBlockId(rddId, partition))
      const reads = needs.shuffleReads.flatMap(({ beneath, reduceId, shuffle }) =>
        beneath.some(heldHere) ? [] : [{ ...shuffle, reduceId }]
      )
      if (reads.length === 0 && needs.broadcasts.length === 0) {
        return { _tag: "Ready", inputs: { localDir, spillThreshold, objectStore, shuffleInputs: [], cached } }
      }
      return {
        _tag: "Gather",
        gather: Effect.zipWith(
          shuffles.gather(taskId, reads),
          Effect.forEach(needs.broadcasts, broadcastValue),
          (gathered, broadcasts): TaskContext.Inputs => ({
            localDir,
            spillThreshold,
            objectStore,
            shuffleInputs: gathered.inputs,
            metrics: gathered.metrics,
            cached,
            broadcasts
          })
        )
      }
    }

    type Ended = Schema.Schema.Type<typeof ExecutorInputs.TasksEnded>["ends"][number]
    type End = Omit<Ended, "taskId">

    // A run's end as the driver hears of it: a result (a large one left here for the driver to fetch) with the
    // persisted partitions it computed, now kept here; or a failure — the task's own, or the thread's that died
    // under it (it ran out of memory, or exited), which fails the task, not the executor.
    const endOf = (taskId: number, run: TaskThreads.TaskRun): End => {
      if (Exit.isFailure(run)) {
        // The runner's tagged error (ThreadDied, ThreadStartFailed), or a defect of anything.
        const error = Cause.squash(run.cause)
        return error instanceof Error
          ? {
            state: "FAILED",
            outcome: failure((error as { readonly _tag?: string })._tag ?? error.name, error.message)
          }
          : { state: "FAILED", outcome: failure("Error", String(error)) }
      }
      const { outcome, stored, succeeded } = run.value
      if (!succeeded) return { state: "FAILED", outcome }
      return {
        state: "FINISHED",
        outcome: deliverable(taskId, outcome),
        stored: stored.flatMap((block) => blocks.put(block) ?? [])
      }
    }

    // The tasks running here, by id, with what stops each; a task leaves it when it ends or is stopped, whichever
    // comes first, and is reported once. The ends of one turn go to the core together, as one report.
    const running = new Map<number, () => void>()
    const ended: Array<Ended> = []
    const settle = (taskId: number, end: End, host: Host) => {
      if (!running.delete(taskId)) return
      ended.push({ taskId, ...end })
      if (ended.length > 1) return
      options.threads.afterEnds(() => host.feed({ _tag: "TasksEnded", ends: ended.splice(0) }))
    }
    // Gathering fibers: closing the executor interrupts them, and waits for them to let go of what they hold.
    const gathering = new Set<Fiber.RuntimeFiber<unknown, unknown>>()
    yield* Effect.addFinalizer(() =>
      Effect.suspend(() => {
        for (const stop of running.values()) stop()
        running.clear()
        return Fiber.interruptAll(gathering)
      })
    )

    const startTask = (command: Extract<ExecutorCore.ExecutorCommand, { _tag: "RunTask" }>, host: Host) => {
      const { info, needs, task, taskId } = command
      const prepared = prepare(taskId, needs)
      if (prepared._tag === "Ready") {
        running.set(
          taskId,
          options.threads.start(task, info, prepared.inputs, (run) => settle(taskId, endOf(taskId, run), host))
        )
        return
      }
      // Its inputs are gathered on a fiber, which the task then waits on: stopping it interrupts the fiber, whose
      // scope lets go of the fetched blocks once the task is over.
      const fiber = runFork(
        Effect.scoped(Effect.flatMap(
          prepared.gather,
          (inputs) =>
            Effect.async<TaskThreads.TaskRun>((resume) => {
              const stop = options.threads.start(task, info, inputs, (run) => resume(Effect.succeed(run)))
              return Effect.sync(stop)
            })
        )).pipe(
          Effect.map((run) => endOf(taskId, run)),
          Effect.catchTag(
            "ShuffleFetchFailed",
            (failed) => Effect.succeed<End>({ state: "FAILED", outcome: Records.encode(failed.outcome) })
          ),
          // The driver could not say where the blocks are, or they could not be fetched: the task failed.
          Effect.catchAll((error) =>
            Effect.succeed<End>({ state: "FAILED", outcome: failure(error._tag, error.message) })
          )
        )
      )
      gathering.add(fiber)
      running.set(taskId, () => fiber.unsafeInterruptAsFork(FiberId.none))
      fiber.addObserver((exit) => {
        gathering.delete(fiber)
        // A defect in gathering (not in the task's own code, which the thread reports) fails the task, so that a
        // task that cannot be run fails its job rather than run again for ever.
        if (Exit.isSuccess(exit)) settle(taskId, exit.value, host)
        else if (!Exit.isInterrupted(exit)) settle(taskId, endOf(taskId, Exit.failCause(exit.cause)), host)
      })
    }

    // A killed task ends at once, whatever it was doing: one killed before it even started (its kill came right
    // behind its launch) never runs.
    const killTask = (taskId: number, host: Host) => {
      const stop = running.get(taskId)
      if (stop === undefined) return
      stop()
      settle(taskId, { state: "KILLED", outcome: failure("TaskKilled", "killed") }, host)
    }

    // A task's launch and kill, and the asks that go on in the background, are carried out in the call (the
    // shell takes no effect for them); the rest are effects.
    const interpret = (command: ExecutorCore.ExecutorCommand, host: Host) => {
      switch (command._tag) {
        case "Register":
          host.fork(
            rpc.ask(driver, command.message, { timeout: options.askTimeoutMillis }).pipe(
              Effect.matchEffect({
                onSuccess: () => Effect.sync(() => host.feed({ _tag: "Registered" })),
                onFailure: (error) =>
                  Effect.sync(() => host.feed({ _tag: "RegistrationFailed", reason: error.message }))
              })
            )
          )
          return undefined
        case "RunTask":
          startTask(command, host)
          return undefined
        case "KillTask":
          killTask(command.taskId, host)
          return undefined
        case "ForgetPeer":
          return rpc.data.forget(command.address, `executor ${command.executorId} is lost`)
        case "RemoveRdd":
          // The blocks are dropped whatever becomes of their files: one that cannot be removed is logged, not a
          // defect that would stop the executor.
          return DiskOperations.removing(localDir, () => blocks.removeDataset(command.rddId))
        case "OfferMigration":
          // Not sent, the driver is out of reach: this executor stops when its connection to the driver closes.
          return rpc.send(
            driver,
            new ClusterMessages.ReadyToMigrate({ executorId: options.executorId, ...migration.offer() })
          ).pipe(Effect.catchAll((error) => Effect.logWarning(`Cannot offer blocks for migration: ${error.message}`)))
        case "Migrate":
          host.fork(
            migration.copy(command.message).pipe(
              Effect.flatMap((copied) =>
                Effect.sync(() => host.feed({ _tag: "Migrated", from: command.message.from, ...copied }))
              )
            )
          )
          return undefined
        case "Heartbeat":
          host.fork(
            rpc.ask(driver, withMeasurements(command.message, options.threads, loopDelay), {
              timeout: options.askTimeoutMillis
            }).pipe(
              Effect.catchAll((error) =>
                Effect.sync(() => host.feed({ _tag: "HeartbeatFailed", reason: error.message }))
              )
            )
          )
          return undefined
      }
    }

    yield* Shell.make({
      core: ExecutorCore.core,
      state: ExecutorCore.make({
        executorId: options.executorId,
        self: Endpoints.ref(address, Endpoints.executor),
        driver,
        hostname: options.hostname,
        ...(options.logUrls === undefined ? {} : { logUrls: options.logUrls }),
        cores: options.threads.size,
        heartbeatIntervalMillis: options.heartbeatIntervalMillis,
        ...(options.shuffleService === undefined ? {} : { shuffleService: options.shuffleService })
      }),
      interpret,
      validateState: options.validateState ?? false,
      onExit: (code, reason) => Effect.zipRight(options.onExit(code, reason), Deferred.succeed(exited, undefined))
    })
    return { exited: Deferred.await(exited) }
  })
