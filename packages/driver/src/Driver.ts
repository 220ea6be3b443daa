/**
 * The driver as a running role: its core (`DriverCore`) in the kernel's shell on the RpcEnv in context. It gives
 * the app context one operation, `runJob`: the encoded tasks of a job's partitions in, their results out (in
 * partition order), or the job's failure. Interrupting `runJob` cancels the job: its running tasks are killed.
 *
 * @since 0.1.0
 */
import { type AppContext, type AppEvents, JobFailed, type JobGraph } from "@kindling/app"
import { ParseModes } from "@kindling/data"
import { Shell } from "@kindling/kernel"
import { ClusterMessages, Endpoints, Errors, Ids, Records, type RpcAddress, type TaskPlan } from "@kindling/protocol"
import { DataPlane, RpcEnv } from "@kindling/rpc"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as PubSub from "effect/PubSub"
import type * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as DriverCore from "./DriverCore.js"
import * as SchedulerPool from "./SchedulerPool.js"
import * as SharedVariableRegistry from "./SharedVariableRegistry.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Driver extends AppContext.AppDriver {
  /** Where executors register. */
  readonly address: RpcAddress.RpcAddress
  /**
   * The same as a queue, for a listener that drains it in batches rather than wake for every event (the app UI:
   * a job of 10,000 tasks is 20,000 events).
   */
  readonly listen: Effect.Effect<Queue.Dequeue<AppEvents.AppEvent>, never, Scope.Scope>
  /**
   * Calls `listener` with each batch of events as the driver makes them, on its own thread, until the scope
   * closes: for a listener that only hands them on (the event log, to its thread), which a queue would cost a
   * fiber's wake-up per batch. A listener that throws is removed.
   */
  readonly onEvents: (
    listener: (events: ReadonlyArray<AppEvents.AppEvent>) => void
  ) => Effect.Effect<void, never, Scope.Scope>
  /** The executors that are registered and ready, as ids. */
  readonly executors: Effect.Effect<ReadonlyArray<string>>
  /** The cores of the executors that are registered and ready. */
  readonly cores: Effect.Effect<number>
  /** Cancels a running job (its action fails with `reason`), as the app UI's kill button does. */
  readonly cancelJob: (jobId: number, reason: string) => Effect.Effect<void>
  /** Tells the executors to stop: the app is done with them. */
  readonly stop: Effect.Effect<void>
  /** The app cannot go on: every job, running or to come, fails with the reason. */
  readonly abort: (reason: string) => Effect.Effect<void>
  /**
   * An executor is gone, as its cluster manager says: its tasks run again elsewhere. `started` is false when its
   * process never ran (its launch failed).
   */
  readonly executorRemoved: (
    executorId: string,
    reason: string,
    started: boolean,
    workerLost?: boolean
  ) => Effect.Effect<void>
  /** The cluster manager decommissions the executor (its worker is going away): it drains, then migrates. */
  readonly executorDecommissioned: (executorId: string, reason: string) => Effect.Effect<void>
  /**
   * Stops the driver as a defect of its own core would: another part of it (its app client) met one, and the app
   * cannot go on.
   */
  readonly halt: (reason: string) => Effect.Effect<void>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly config: DriverCore.Config
  readonly validateState?: boolean
  /**
   * The driver stopped on a defect of its own (its core threw, broke an invariant, or a command failed): its jobs
   * have failed and its executors were told to stop; what the mode holds for the app (its registration with the
   * master, an in-process executor) must be let go.
   */
  readonly onExit: (code: number, reason: string) => Effect.Effect<void>
  /** Carries out dynamic allocation's decisions with the cluster manager (a mode without one has none). */
  readonly allocate?: (
    command: Extract<DriverCore.DriverCommand, { readonly _tag: "RequestExecutors" | "KillExecutors" }>
  ) => Effect.Effect<void>
}

type Host = Shell.Host<DriverCore.Local>

interface RunningJob {
  readonly results: Array<unknown>
  readonly done: Deferred.Deferred<Array<unknown>, JobFailed>
  readonly group: string | undefined
  /** The CSV and JSON lines files its tasks read, their tallies summed over its partitions, by path. */
  readonly parsedFiles: Map<string, TaskPlan.ParsedFile>
}

/**
 * Starts the driver's endpoint on the RpcEnv in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: Options
): Effect.Effect<Driver, Shell.NotListening | RpcEnv.EndpointAlreadyRegistered, RpcEnv.RpcEnv | Scope.Scope> =>
  Effect.gen(function*() {
    const address = yield* Shell.listeningAddress(Endpoints.scheduler)
    const rpc = yield* RpcEnv.RpcEnv
    const jobs = new Map<number, RunningJob>()
    const events = yield* PubSub.unbounded<AppEvents.AppEvent>()
    const listeners = new Set<(events: ReadonlyArray<AppEvents.AppEvent>) => void>()
    const tellListeners = (batch: ReadonlyArray<AppEvents.AppEvent>) => {
      const failures: Array<unknown> = []
      for (const listener of listeners) {
        try {
          listener(batch)
        } catch (error) {
          listeners.delete(listener)
          failures.push(error)
        }
      }
      return Effect.forEach(
        failures,
        (error) => Effect.logError("An event listener failed and no longer listens", error),
        { discard: true }
      )
    }
    let nextJobId = 0
    let fatal: string | undefined
    const internalFailure = () =>
      new JobFailed({ reason: `Job aborted: the driver stopped on an internal error: ${fatal}`, internal: true })

    // A job whose result cannot be read fails; the core is told to cancel what is left of it.
    const resultLost = (jobId: number, job: RunningJob, index: number, why: string, host: Host) =>
      Effect.suspend(() => {
        const reason = `Job aborted: the result of task ${index} could not be read: ${why}`
        jobs.delete(jobId)
        host.feed({ _tag: "CancelJob", jobId, reason })
        return Deferred.fail(job.done, new JobFailed({ reason }))
      })

    // A successful task's result: its value, and the tallies of the files it parsed (each partition's once).
    const keep = (job: RunningJob, index: number, result: typeof TaskPlan.TaskResult.Encoded) => {
      job.results[index] = Records.decode(result.value)
      for (const file of result.parsedFiles ?? []) {
        const known = job.parsedFiles.get(file.path)
        job.parsedFiles.set(
          file.path,
          known === undefined
            ? file
            : { ...known, records: known.records + file.records, malformed: known.malformed + file.malformed }
        )
      }
    }

    // A file whose every record was malformed is most likely read with the wrong options (a JSON array read as
    // JSON lines): the job does not fail of it, so the driver says so, once a file.
    const warned = new Set<string>()
    const warnMalformed = (job: RunningJob) =>
      Effect.forEach(job.parsedFiles.values(), (file) => {
        const warning = ParseModes.everyRecordMalformed(file)
        if (warning === undefined || warned.has(file.path)) return Effect.void
        warned.add(file.path)
        return Effect.logWarning(warning)
      }, { discard: true })

    // A result that came with its task's end is kept at once; a large one is fetched from its executor before the
    // step's next command (the job's end, say) is carried out, so that no job ends without all of its results.
    const takeResult = (
      command: Extract<DriverCore.DriverCommand, { _tag: "TaskResult" }>,
      host: Host
    ): Effect.Effect<void> | undefined => {
      const job = jobs.get(command.jobId)
      if (job === undefined) return undefined
      const { outcome } = command
      if (outcome === undefined) return resultLost(command.jobId, job, command.index, "it is unreadable", host)
      if (outcome._tag === "TaskResult") {
        try {
          keep(job, command.index, outcome)
          return undefined
        } catch (defect) {
          // A value that cannot be read fails its job, not the driver.
          return resultLost(command.jobId, job, command.index, String(defect), host)
        }
      }
      if (outcome._tag !== "IndirectTaskResult" || command.from === undefined) {
        return resultLost(command.jobId, job, command.index, "its executor is gone", host)
      }
      return rpc.data.fetchBytes(command.from, outcome.blockId).pipe(
        Effect.map((bytes) => Records.decode(bytes) as typeof TaskPlan.TaskResult.Encoded),
        Effect.matchEffect({
          onSuccess: (result) => Effect.sync(() => keep(job, command.index, result)),
          onFailure: (error) => resultLost(command.jobId, job, command.index, error.message, host)
        }),
        Effect.catchAllDefect((defect) =>
          Effect.suspend(() =>
            jobs.has(command.jobId) ? resultLost(command.jobId, job, command.index, String(defect), host) : Effect.void
          )
        )
      )
    }

    // A task's result and the accumulators' updates are taken in the call (the shell takes no effect for them);
    // the rest are effects.
    const interpret = (command: DriverCore.DriverCommand, host: Host): Effect.Effect<void> | undefined => {
      const job = "jobId" in command ? jobs.get(command.jobId) : undefined
      switch (command._tag) {
        case "TaskResult":
          return takeResult(command, host)
        case "JobSucceeded":
          jobs.delete(command.jobId)
          return job === undefined
            ? undefined
            : Effect.zipRight(warnMalformed(job), Deferred.succeed(job.done, job.results))
        case "JobFailed":
          jobs.delete(command.jobId)
          return job === undefined ? undefined : Deferred.fail(job.done, new JobFailed({ reason: command.reason }))
        case "AccumulatorUpdates":
          SharedVariableRegistry.merge(command.updates)
          return undefined
        case "Events":
          return Effect.zipRight(tellListeners(command.events), PubSub.publishAll(events, command.events))
        case "RequestExecutors":
        case "KillExecutors":
          return options.allocate?.(command)
      }
    }

    // This app's broadcasts are served to its executors, and forgotten with the driver.
    const broadcasts: Array<number> = []
    const accumulators: Array<number> = []
    yield* Effect.addFinalizer(() => Effect.sync(() => SharedVariableRegistry.destroy({ broadcasts, accumulators })))
    yield* rpc.data.serve("broadcast/", (blockId, requester) =>
      Effect.suspend(() => {
        const [token = "", id = ""] = blockId.slice("broadcast/".length).split("/")
        const bytes = SharedVariableRegistry.broadcastBytes(Number(id), token)
        return bytes === undefined || !broadcasts.includes(Number(id))
          ? Effect.fail(new Errors.BlockNotFound({ blockId }))
          : Effect.as(
            Effect.logInfo(`Sending broadcast ${id} (${bytes.length} bytes) to ${requester.host}:${requester.port}`),
            DataPlane.fromBytes(bytes)
          )
      })).pipe(Effect.orDie)

    // A driver that no longer knows its own state fails every job it runs, lets the mode free what it holds — on a
    // cluster the app leaves its master first, which would otherwise replace the executors that stop — and tells
    // its executors to stop (its core cannot, but its last state says who they are).
    const state = DriverCore.make(options.config)
    const stopped = (code: number, reason: string) =>
      Effect.gen(function*() {
        fatal = reason
        const running = [...jobs.values()]
        jobs.clear()
        for (const job of running) yield* Deferred.fail(job.done, internalFailure())
        yield* options.onExit(code, reason)
        for (const executor of state.executors.values()) {
          yield* Effect.ignore(rpc.send(executor.ref, new ClusterMessages.StopExecutor()))
        }
      })

    const shell = yield* Shell.make({
      core: DriverCore.core,
      state,
      interpret,
      validateState: options.validateState ?? false,
      onExit: stopped
    })

    const runJob = (job: JobGraph.JobGraph) =>
      Effect.gen(function*() {
        const pool = yield* FiberRef.get(SchedulerPool.current)
        const done = yield* Deferred.make<Array<unknown>, JobFailed>()
        // Checked with nothing in between: a driver that stops from here on fails the job among its others.
        if (fatal !== undefined) return yield* internalFailure()
        const jobId = nextJobId++
        jobs.set(jobId, { results: new Array(job.tasks.length), done, group: job.group, parsedFiles: new Map() })
        shell.feed({ _tag: "SubmitJob", job: { ...job, jobId, pool } })
        return yield* Deferred.await(done).pipe(
          Effect.onInterrupt(() =>
            Effect.sync(() => {
              jobs.delete(jobId)
              shell.feed({ _tag: "CancelJob", jobId, reason: "the action that started it was interrupted" })
            })
          )
        )
      })

    return {
      address,
      runJob,
      events: Stream.fromPubSub(events),
      subscribe: Stream.fromPubSub(events, { scoped: true }),
      listen: PubSub.subscribe(events),
      onEvents: (listener) =>
        Effect.acquireRelease(
          Effect.sync(() => listeners.add(listener)),
          () => Effect.sync(() => listeners.delete(listener))
        ),
      executors: shell.read((state) => [...state.executors.values()].filter((e) => e.launched).map((e) => e.id)),
      cores: shell.read((state) =>
        [...state.executors.values()].reduce((sum, e) => sum + (e.launched ? e.cores : 0), 0)
      ),
      unpersist: (rddId) => Effect.sync(() => shell.feed({ _tag: "Unpersist", rddId })),
      cancelJob: (jobId, reason) => Effect.sync(() => shell.feed({ _tag: "CancelJob", jobId, reason })),
      cancelJobGroup: (group) =>
        Effect.sync(() => {
          for (const [jobId, job] of jobs) {
            if (job.group !== group) continue
            shell.feed({
              _tag: "CancelJob",
              jobId,
              reason: `Job ${jobId} cancelled part of cancelled job group ${group}`
            })
          }
        }),
      cancelAllJobs: Effect.sync(() => {
        for (const jobId of jobs.keys()) {
          shell.feed({ _tag: "CancelJob", jobId, reason: `Job ${jobId} cancelled as part of cancellation of all jobs` })
        }
      }),
      broadcast: (value) => {
        const made = SharedVariableRegistry.broadcast(value)
        broadcasts.push(made.id)
        return made
      },
      accumulator: (kind, name) => {
        const made = SharedVariableRegistry.accumulator<any, any>(kind, name)
        accumulators.push(made.id)
        return made
      },
      stop: Effect.sync(() => shell.feed({ _tag: "Stop" })),
      abort: (reason) => Effect.sync(() => shell.feed({ _tag: "Abort", reason })),
      executorRemoved: (executorId, reason, started, workerLost) =>
        Effect.sync(() =>
          shell.feed({
            _tag: "ExecutorRemoved",
            executorId: Ids.ExecutorId.make(executorId),
            reason,
            started,
            ...(workerLost === true ? { workerLost } : {})
          })
        ),
      executorDecommissioned: (executorId, reason) =>
        Effect.sync(() =>
          shell.feed({ _tag: "ExecutorDecommissioned", executorId: Ids.ExecutorId.make(executorId), reason })
        ),
      halt: shell.halt,
      fatalError: Effect.sync(() => fatal)
    }
  })
