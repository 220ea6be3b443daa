/**
 * The driver's DAG scheduler (Spark's `DAGScheduler`) as a pure core: `step(state, input) → commands`. It cuts a
 * job into stages at its shuffles, submits a stage's missing partitions as a task set once its parents' map
 * outputs are all there, keeps track of those outputs (Spark's `MapOutputTracker`), resubmits stages after a fetch
 * failure, and says when a job has succeeded or failed. Where a task runs is the task scheduler's to decide.
 *
 * Its records and transitions live in `internal/dag/`: the records (`dagState`), stages built from a job's graph
 * (`stageGraph`), stage attempts and their tasks (`stageRuns`), fetch failures (`fetchFailures`) and the end of
 * jobs (`jobEnds`).
 *
 * @since 0.1.0
 */
import type { AppEvents, JobGraph } from "@kindling/app"
import type { TaskPlan } from "@kindling/protocol"
import * as dagState from "./internal/dag/dagState.js"
import { executorLost, fetchFailed, resubmitFailedStages } from "./internal/dag/fetchFailures.js"
import { abortStage, endJob } from "./internal/dag/jobEnds.js"
import { submitJob } from "./internal/dag/stageGraph.js"
import { taskSucceeded } from "./internal/dag/stageRuns.js"
import * as validation from "./internal/dag/validation.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Config {
  /** Failed attempts of a stage in a row (by fetch failures) that abort it (`kindling.stage.maxConsecutiveAttempts`). */
  readonly maxConsecutiveAttempts: number
  /** How long after a fetch failure the failed stages are resubmitted. */
  readonly resubmitDelayMillis: number
}

/**
 * A job as the scheduler runs it: the graph of its tasks, its id and its scheduler pool.
 *
 * @since 0.1.0
 * @category models
 */
export interface JobSpec extends JobGraph.JobGraph {
  readonly jobId: number
  readonly pool: string
}

/**
 * @since 0.1.0
 * @category models
 */
export type State = dagState.State

/**
 * @since 0.1.0
 * @category models
 */
export type Input =
  & (
    | { readonly _tag: "SubmitJob"; readonly job: JobSpec }
    | { readonly _tag: "CancelJob"; readonly jobId: number; readonly reason: string }
    /** A task succeeded (the task scheduler took this attempt as its task's success). */
    | {
      readonly _tag: "TaskSucceeded"
      readonly stageId: number
      readonly stageAttempt: number
      readonly partition: number
      readonly executorId: string
      /** A map task's bytes per reduce partition. */
      readonly sizes?: ReadonlyArray<number>
    }
    | {
      readonly _tag: "FetchFailed"
      readonly stageId: number
      readonly stageAttempt: number
      readonly shuffleId: number
      readonly mapIndex: number
      /** Where the output was said to be, if known. */
      readonly executorId: string | undefined
      readonly message: string
    }
    /** The task scheduler gave up on an attempt of the stage (a task failed too often). */
    | { readonly _tag: "StageAborted"; readonly stageId: number; readonly reason: string }
    /** The executor is gone; its map outputs with it unless a worker's shuffle service serves them. */
    | { readonly _tag: "ExecutorLost"; readonly executorId: string; readonly outputsLost: boolean }
    /** A decommissioning executor's map output was copied to another, which serves it from now on. */
    | {
      readonly _tag: "MapOutputMoved"
      readonly shuffleId: number
      readonly mapIndex: number
      readonly from: string
      readonly to: string
    }
    | { readonly _tag: "ResubmitFailedStages" }
  )
  & { readonly now: number }

/**
 * @since 0.1.0
 * @category models
 */
export type Command =
  | {
    readonly _tag: "SubmitTaskSet"
    readonly stageId: number
    readonly stageAttempt: number
    readonly jobId: number
    readonly pool: string
    readonly partitions: ReadonlyArray<number>
    /** The persisted partition each of those tasks reads, if any. */
    readonly preferredBlocks: ReadonlyArray<string | undefined>
  }
  /** Kill what runs of every attempt of the stage, and forget them: no job needs the stage any more. */
  | { readonly _tag: "CancelStage"; readonly stageId: number; readonly reason: string }
  /** The attempt's task set gets no further tasks (a fetch failure made it a zombie); running ones go on. */
  | { readonly _tag: "StopStageAttempt"; readonly stageId: number; readonly stageAttempt: number }
  /** The result of a result stage's task `index` belongs to job `jobId`. */
  | { readonly _tag: "ResultTask"; readonly jobId: number; readonly index: number }
  /**
   * The successful task's updates to accumulators count: a map task's each time one of its stage's attempts
   * succeeds, a result task's only the first time its partition finishes (Spark's guarantee for actions).
   */
  | { readonly _tag: "TaskCounted" }
  | { readonly _tag: "JobSucceeded"; readonly jobId: number }
  | { readonly _tag: "JobFailed"; readonly jobId: number; readonly reason: string }
  /** Feed `ResubmitFailedStages` after the delay. */
  | { readonly _tag: "ScheduleResubmit"; readonly delayMillis: number }
  | {
    readonly _tag: "JobStarted"
    readonly jobId: number
    readonly stageIds: ReadonlyArray<number>
    readonly stages: ReadonlyArray<AppEvents.StageInfo>
  }
  | { readonly _tag: "JobEnded"; readonly jobId: number; readonly succeeded: boolean }
  | {
    readonly _tag: "StageSubmitted"
    readonly stageId: number
    readonly stageAttempt: number
    readonly name: string
    readonly tasks: number
    readonly parents: ReadonlyArray<number>
  }
  | {
    readonly _tag: "StageCompleted"
    readonly stageId: number
    readonly stageAttempt: number
    readonly failureReason: string | undefined
  }
  | { readonly _tag: "Log"; readonly level: "Info" | "Warning"; readonly message: string }

/**
 * @since 0.1.0
 * @category constructors
 */
export const make = (config: Config): State => ({
  config,
  stages: new Map(),
  shuffleStages: new Map(),
  shuffles: new Map(),
  waiting: new Set(),
  running: new Set(),
  failed: new Set(),
  jobs: new Map(),
  nextStageId: 0,
  epoch: 0,
  executorFailureEpoch: new Map()
})

/**
 * @since 0.1.0
 */
export const step = (state: State, input: Input): Array<Command> => {
  const out: Array<Command> = []
  switch (input._tag) {
    case "SubmitJob":
      submitJob(state, input.job, out)
      break
    case "CancelJob": {
      const job = state.jobs.get(input.jobId)
      if (job !== undefined) endJob(state, job, input.reason, out)
      break
    }
    case "TaskSucceeded":
      taskSucceeded(state, input, out)
      break
    case "FetchFailed":
      fetchFailed(state, input, out)
      break
    case "StageAborted": {
      const stage = state.stages.get(input.stageId)
      if (stage !== undefined) abortStage(state, stage, input.reason, out)
      break
    }
    case "ExecutorLost":
      if (input.outputsLost) executorLost(state, input.executorId, undefined, out)
      break
    case "MapOutputMoved": {
      // Moved only if it is still the output copied: one lost, or computed again, since is left as it is.
      const outputs = state.shuffles.get(input.shuffleId)?.outputs
      const output = outputs?.[input.mapIndex]
      if (output?.executorId === input.from) outputs![input.mapIndex] = { ...output, executorId: input.to }
      break
    }
    case "ResubmitFailedStages":
      resubmitFailedStages(state, out)
      break
  }
  return out
}

/**
 * The map outputs registered on an executor.
 *
 * @since 0.1.0
 */
export const outputsOn = (
  state: State,
  executorId: string
): Array<{ readonly shuffleId: number; readonly mapIndex: number }> => {
  const found: Array<{ readonly shuffleId: number; readonly mapIndex: number }> = []
  for (const [shuffleId, shuffle] of state.shuffles) {
    shuffle.outputs.forEach((output, mapIndex) => {
      if (output?.executorId === executorId) found.push({ shuffleId, mapIndex })
    })
  }
  return found
}

/**
 * Whether every map output of the shuffle is registered.
 *
 * @since 0.1.0
 */
export const isAvailable: (state: State, shuffleId: number) => boolean = dagState.isAvailable

/**
 * Where the map outputs of a shuffle are for one reduce partition: per map partition the executor and the
 * block's size, or the first map partition without an output.
 *
 * @since 0.1.0
 */
export const locations = (
  state: State,
  shuffleId: number,
  reduceId: number
):
  | { readonly _tag: "Found"; readonly blocks: ReadonlyArray<{ readonly executorId: string; readonly size: number }> }
  | { readonly _tag: "Missing"; readonly mapIndex: number } =>
{
  const shuffle = state.shuffles.get(shuffleId)
  if (shuffle === undefined) return { _tag: "Missing", mapIndex: 0 }
  const blocks: Array<{ readonly executorId: string; readonly size: number }> = []
  for (let mapIndex = 0; mapIndex < shuffle.outputs.length; mapIndex++) {
    const output = shuffle.outputs[mapIndex]
    if (output === undefined) return { _tag: "Missing", mapIndex }
    blocks.push({ executorId: output.executorId, size: output.sizes[reduceId] ?? 0 })
  }
  return { _tag: "Found", blocks }
}

/**
 * The executors holding map outputs of a shuffle a running job reads or writes (Spark's active shuffles): with
 * shuffle tracking, dynamic allocation keeps them.
 *
 * @since 0.1.0
 */
export const activeShuffleHolders = (state: State): ReadonlySet<string> => {
  const holders = new Set<string>()
  for (const job of state.jobs.values()) {
    for (const stageId of job.stageIds) {
      const shuffleId = state.stages.get(stageId)?.shuffleId
      const outputs = shuffleId === undefined ? undefined : state.shuffles.get(shuffleId)?.outputs
      for (const output of outputs ?? []) if (output !== undefined) holders.add(output.executorId)
    }
  }
  return holders
}

/**
 * The encoded task of a stage's partition, with what it needs, for its launch.
 *
 * @since 0.1.0
 */
export const task = (state: State, stageId: number, partition: number): TaskPlan.EncodedTask | undefined =>
  state.stages.get(stageId)?.tasks[partition]

/**
 * What is wrong with the state, if anything: a stage in more than one of the waiting, running and failed sets,
 * or a result stage in none (each stage is in exactly one of waiting, running, failed and — map stages only —
 * done); a stage no job needs, or a job whose stages are gone; a shuffle mapped to a stage of another.
 *
 * @since 0.1.0
 */
export const validate: (state: State) => Array<string> = validation.validateDagScheduler
