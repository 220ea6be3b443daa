import type { JobGraph } from "@kindling/app"
import { type AppEvents } from "@kindling/monitoring"

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

interface MapOutput {
  readonly executorId: string
  readonly sizes: ReadonlyArray<number>
}

interface ShuffleOutputs {
  readonly numReduces: number
  readonly outputs: Array<MapOutput | undefined>
}

interface Stage {
  readonly id: number
  readonly name: string
  /** The shuffle it writes; undefined for a result stage. */
  readonly shuffleId: number | undefined
  readonly tasks: ReadonlyArray<Uint8Array>
  readonly preferredBlocks: ReadonlyArray<string | undefined>
  readonly parents: ReadonlyArray<number>
  /** What its tasks compute, for the app's UI. */
  readonly datasets: ReadonlyArray<AppEvents.DatasetInfo>
  readonly jobIds: Set<number>
  readonly firstJobId: number
  nextAttempt: number
  /** The map partitions (or result tasks) the latest attempt still waits for. */
  readonly pending: Set<number>
  /** Attempts that ended in a fetch failure since the stage last succeeded. */
  readonly failedAttempts: Set<number>
  /** The epoch each attempt started in. */
  readonly attemptEpochs: Map<number, number>
}

interface Job {
  readonly id: number
  readonly finalStage: number
  readonly finished: Array<boolean>
  numFinished: number
  readonly pool: string
  /** Every stage it needs, the skipped ones included. */
  readonly stageIds: ReadonlyArray<number>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface State {
  readonly config: Config
  readonly stages: Map<number, Stage>
  readonly shuffleStages: Map<number, number>
  /** The map output tracker, by shuffle id: it outlives the stages, so a later job skips what is done. */
  readonly shuffles: Map<number, ShuffleOutputs>
  readonly waiting: Set<number>
  readonly running: Set<number>
  readonly failed: Set<number>
  readonly jobs: Map<number, Job>
  nextStageId: number
  epoch: number
  readonly executorFailureEpoch: Map<string, number>
}

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
    | { readonly _tag: "ExecutorLost"; readonly executorId: string }
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
      executorLost(state, input.executorId, undefined, out)
      break
    case "ResubmitFailedStages":
      resubmitFailedStages(state, out)
      break
  }
  return out
}

/**
 * Whether every map output of the shuffle is registered.
 *
 * @since 0.1.0
 */
export const isAvailable = (state: State, shuffleId: number): boolean => {
  const shuffle = state.shuffles.get(shuffleId)
  return shuffle !== undefined && shuffle.outputs.every((output) => output !== undefined)
}

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
 * The encoded task of a stage's partition, for its launch.
 *
 * @since 0.1.0
 */
export const taskBytes = (state: State, stageId: number, partition: number): Uint8Array | undefined =>
  state.stages.get(stageId)?.tasks[partition]

const shuffleStage = (
  state: State,
  spec: JobGraph.ShuffleSpec,
  specs: Map<number, JobGraph.ShuffleSpec>,
  jobId: number
): Stage => {
  const existing = state.shuffleStages.get(spec.shuffleId)
  if (existing !== undefined) return state.stages.get(existing)!
  // Parents first, so that they get the lower ids.
  const parents = spec.parents.map((id) => shuffleStage(state, specs.get(id)!, specs, jobId).id)
  const stage = newStage(state, {
    name: `${spec.name} (shuffle ${spec.shuffleId})`,
    shuffleId: spec.shuffleId,
    tasks: spec.mapTasks,
    preferredBlocks: spec.preferredBlocks,
    parents,
    jobId,
    datasets: spec.datasets ?? []
  })
  state.shuffleStages.set(spec.shuffleId, stage.id)
  if (!state.shuffles.has(spec.shuffleId)) {
    state.shuffles.set(spec.shuffleId, { numReduces: spec.numReduces, outputs: spec.mapTasks.map(() => undefined) })
  }
  return stage
}

const newStage = (
  state: State,
  spec: {
    readonly name: string
    readonly shuffleId: number | undefined
    readonly tasks: ReadonlyArray<Uint8Array>
    readonly preferredBlocks: ReadonlyArray<string | undefined>
    readonly parents: ReadonlyArray<number>
    readonly jobId: number
    readonly datasets: ReadonlyArray<AppEvents.DatasetInfo>
  }
): Stage => {
  const stage: Stage = {
    id: state.nextStageId++,
    name: spec.name,
    shuffleId: spec.shuffleId,
    tasks: spec.tasks,
    preferredBlocks: spec.preferredBlocks,
    parents: spec.parents,
    datasets: spec.datasets,
    jobIds: new Set(),
    firstJobId: spec.jobId,
    nextAttempt: 0,
    pending: new Set(),
    failedAttempts: new Set(),
    attemptEpochs: new Map()
  }
  state.stages.set(stage.id, stage)
  return stage
}

const stageInfo = (stage: Stage): AppEvents.StageInfo => ({
  stageId: stage.id,
  name: stage.name,
  numTasks: stage.tasks.length,
  parentIds: stage.parents,
  datasets: stage.datasets
})

// Every stage the stage needs, itself included, parents before children.
const lineage = (state: State, stageId: number, into: Array<number> = []): Array<number> => {
  if (into.includes(stageId)) return into
  for (const parent of state.stages.get(stageId)!.parents) lineage(state, parent, into)
  into.push(stageId)
  return into
}

const submitJob = (state: State, spec: JobSpec, out: Array<Command>) => {
  if (spec.tasks.length === 0) {
    // Nothing to compute: the job is done at once, with no stage (as Spark's runJob of no partitions).
    out.push({ _tag: "JobStarted", jobId: spec.jobId, stageIds: [], stages: [] })
    out.push({ _tag: "JobEnded", jobId: spec.jobId, succeeded: true })
    out.push({ _tag: "JobSucceeded", jobId: spec.jobId })
    return
  }
  const specs = new Map(spec.shuffles.map((shuffle) => [shuffle.shuffleId, shuffle]))
  const parents = spec.parents.map((id) => shuffleStage(state, specs.get(id)!, specs, spec.jobId).id)
  const finalStage = newStage(state, {
    name: `${spec.name} (job ${spec.jobId})`,
    shuffleId: undefined,
    tasks: spec.tasks,
    preferredBlocks: spec.preferredBlocks,
    parents,
    jobId: spec.jobId,
    datasets: spec.datasets ?? []
  })
  const stageIds = lineage(state, finalStage.id)
  for (const stageId of stageIds) state.stages.get(stageId)!.jobIds.add(spec.jobId)
  state.jobs.set(spec.jobId, {
    id: spec.jobId,
    finalStage: finalStage.id,
    finished: spec.tasks.map(() => false),
    numFinished: 0,
    pool: spec.pool,
    stageIds
  })
  out.push({ _tag: "Log", level: "Info", message: `Got job ${spec.jobId} with ${spec.tasks.length} output partitions` })
  out.push({
    _tag: "JobStarted",
    jobId: spec.jobId,
    stageIds,
    stages: stageIds.map((id) => stageInfo(state.stages.get(id)!))
  })
  submitStage(state, finalStage, out)
}

// The earliest job still running that needs the stage.
const activeJob = (state: State, stage: Stage): Job | undefined => {
  let found: Job | undefined
  for (const jobId of stage.jobIds) {
    const job = state.jobs.get(jobId)
    if (job !== undefined && (found === undefined || job.id < found.id)) found = job
  }
  return found
}

const missingParents = (state: State, stage: Stage): Array<Stage> =>
  stage.parents
    .map((id) => state.stages.get(id)!)
    .filter((parent) => !isAvailable(state, parent.shuffleId!))
    .sort((a, b) => a.id - b.id)

const submitStage = (state: State, stage: Stage, out: Array<Command>) => {
  const job = activeJob(state, stage)
  if (job === undefined) return
  if (state.waiting.has(stage.id) || state.running.has(stage.id) || state.failed.has(stage.id)) return
  const missing = missingParents(state, stage)
  if (missing.length === 0) {
    submitMissingTasks(state, stage, job, out)
    return
  }
  for (const parent of missing) submitStage(state, parent, out)
  state.waiting.add(stage.id)
}

const submitMissingTasks = (state: State, stage: Stage, job: Job, out: Array<Command>) => {
  let partitions: Array<number>
  if (stage.shuffleId === undefined) {
    const resultJob = state.jobs.get([...stage.jobIds][0]!)!
    partitions = resultJob.finished.flatMap((done, i) => (done ? [] : [i]))
  } else {
    const outputs = state.shuffles.get(stage.shuffleId)!.outputs
    partitions = outputs.flatMap((output, i) => (output === undefined ? [i] : []))
  }
  const attempt = stage.nextAttempt++
  stage.pending.clear()
  for (const partition of partitions) stage.pending.add(partition)
  stage.attemptEpochs.set(attempt, state.epoch)
  state.running.add(stage.id)
  out.push({
    _tag: "StageSubmitted",
    stageId: stage.id,
    stageAttempt: attempt,
    name: stage.name,
    tasks: partitions.length,
    parents: stage.parents
  })
  if (partitions.length === 0) {
    // Everything is there already (outputs registered by a late task of an earlier attempt).
    stageFinished(state, stage, attempt, undefined, out)
    submitWaitingChildren(state, stage, out)
    return
  }
  out.push({ _tag: "Log", level: "Info", message: `Submitting ${partitions.length} missing tasks from ${stage.name}` })
  out.push({
    _tag: "SubmitTaskSet",
    stageId: stage.id,
    stageAttempt: attempt,
    jobId: job.id,
    pool: job.pool,
    partitions,
    preferredBlocks: partitions.map((partition) => stage.preferredBlocks[partition])
  })
}

const stageFinished = (
  state: State,
  stage: Stage,
  attempt: number,
  failureReason: string | undefined,
  out: Array<Command>
) => {
  state.running.delete(stage.id)
  if (failureReason === undefined) stage.failedAttempts.clear()
  out.push({ _tag: "StageCompleted", stageId: stage.id, stageAttempt: attempt, failureReason })
}

const submitWaitingChildren = (state: State, parent: Stage, out: Array<Command>) => {
  const children = [...state.waiting]
    .map((id) => state.stages.get(id)!)
    .filter((stage) => stage.parents.includes(parent.id))
    .sort((a, b) => a.firstJobId - b.firstJobId || a.id - b.id)
  for (const child of children) {
    state.waiting.delete(child.id)
    submitStage(state, child, out)
  }
}

const taskSucceeded = (state: State, input: Extract<Input, { _tag: "TaskSucceeded" }>, out: Array<Command>) => {
  const stage = state.stages.get(input.stageId)
  if (stage === undefined) return
  if (stage.shuffleId === undefined) {
    const job = activeJob(state, stage)
    if (job === undefined || job.finished[input.partition]) return
    job.finished[input.partition] = true
    job.numFinished++
    stage.pending.delete(input.partition)
    out.push({ _tag: "TaskCounted" })
    out.push({ _tag: "ResultTask", jobId: job.id, index: input.partition })
    if (job.numFinished === job.finished.length) {
      // The stage's latest attempt completes with the job, unless it was given up on already (a late task of it
      // finished the job while its stage waited to be resubmitted).
      if (state.running.has(stage.id)) stageFinished(state, stage, stage.nextAttempt - 1, undefined, out)
      endJob(state, job, undefined, out)
    }
    return
  }
  stage.pending.delete(input.partition)
  out.push({ _tag: "TaskCounted" })
  const failedAt = state.executorFailureEpoch.get(input.executorId)
  const epoch = stage.attemptEpochs.get(input.stageAttempt) ?? 0
  if (failedAt !== undefined && epoch <= failedAt) {
    out.push({
      _tag: "Log",
      level: "Info",
      message: `Ignoring possibly bogus completion of partition ${input.partition} of ${stage.name} from lost ` +
        `executor ${input.executorId}`
    })
  } else {
    const shuffle = state.shuffles.get(stage.shuffleId)!
    shuffle.outputs[input.partition] = { executorId: input.executorId, sizes: input.sizes ?? [] }
  }
  if (state.running.has(stage.id) && stage.pending.size === 0) {
    stageFinished(state, stage, stage.nextAttempt - 1, undefined, out)
    if (!isAvailable(state, stage.shuffleId)) {
      // Outputs were lost while it ran: run the missing partitions again.
      submitStage(state, stage, out)
    } else {
      submitWaitingChildren(state, stage, out)
    }
  }
}

const fetchFailed = (state: State, input: Extract<Input, { _tag: "FetchFailed" }>, out: Array<Command>) => {
  const stage = state.stages.get(input.stageId)
  // A late report from an attempt already given up on changes nothing.
  if (stage === undefined || input.stageAttempt !== stage.nextAttempt - 1) return
  const mapStageId = state.shuffleStages.get(input.shuffleId)
  const mapStage = mapStageId === undefined ? undefined : state.stages.get(mapStageId)
  out.push({ _tag: "StopStageAttempt", stageId: stage.id, stageAttempt: input.stageAttempt })
  stage.failedAttempts.add(input.stageAttempt)
  if (state.running.has(stage.id)) {
    stageFinished(state, stage, input.stageAttempt, `fetch failed: ${input.message}`, out)
  }
  const shuffle = state.shuffles.get(input.shuffleId)
  const lost = shuffle?.outputs[input.mapIndex]
  if (lost !== undefined && (input.executorId === undefined || lost.executorId === input.executorId)) {
    shuffle!.outputs[input.mapIndex] = undefined
  }
  if (stage.failedAttempts.size >= state.config.maxConsecutiveAttempts) {
    abortStage(
      state,
      stage,
      `${stage.name} has failed the maximum allowable number of times: ` +
        `${state.config.maxConsecutiveAttempts}. Most recent failure reason: ${input.message}`,
      out
    )
    return
  }
  if (state.failed.size === 0) {
    out.push({ _tag: "ScheduleResubmit", delayMillis: state.config.resubmitDelayMillis })
  }
  out.push({
    _tag: "Log",
    level: "Warning",
    message: `Resubmitting ${stage.name} and ${mapStage?.name ?? `shuffle ${input.shuffleId}`} after a fetch failure`
  })
  state.waiting.delete(stage.id)
  state.failed.add(stage.id)
  if (mapStage !== undefined) {
    state.waiting.delete(mapStage.id)
    if (!state.running.has(mapStage.id)) state.failed.add(mapStage.id)
  }
  if (input.executorId !== undefined) {
    executorLost(state, input.executorId, stage.attemptEpochs.get(input.stageAttempt), out)
  }
}

// Unregisters the executor's map outputs, once per failure: `epoch` is that of the attempt that noticed (a
// failure already handled in a later epoch is not handled again).
const executorLost = (state: State, executorId: string, epoch: number | undefined, out: Array<Command>) => {
  const failedAt = state.executorFailureEpoch.get(executorId)
  if (failedAt !== undefined && epoch !== undefined && failedAt >= epoch) return
  state.executorFailureEpoch.set(executorId, state.epoch)
  state.epoch++
  let removed = 0
  for (const shuffle of state.shuffles.values()) {
    for (let i = 0; i < shuffle.outputs.length; i++) {
      if (shuffle.outputs[i]?.executorId === executorId) {
        shuffle.outputs[i] = undefined
        removed++
      }
    }
  }
  if (removed > 0) {
    out.push({
      _tag: "Log",
      level: "Info",
      message: `Unregistered ${removed} map outputs of lost executor ${executorId} (epoch ${state.epoch})`
    })
  }
}

const resubmitFailedStages = (state: State, out: Array<Command>) => {
  if (state.failed.size === 0) return
  const failed = [...state.failed]
    .map((id) => state.stages.get(id)!)
    .sort((a, b) => a.firstJobId - b.firstJobId || a.id - b.id)
  state.failed.clear()
  out.push({ _tag: "Log", level: "Info", message: "Resubmitting failed stages" })
  for (const stage of failed) submitStage(state, stage, out)
}

const abortStage = (state: State, stage: Stage, reason: string, out: Array<Command>) => {
  const jobs = [...stage.jobIds].map((id) => state.jobs.get(id)).filter((job) => job !== undefined)
  for (const job of jobs.sort((a, b) => a.id - b.id)) {
    endJob(state, job, `Job aborted due to stage failure: ${reason}`, out)
  }
}

// The job is over: stages no other job needs are forgotten, and what still runs of them is killed — an attempt
// that runs, and those left running by attempts given up on after a fetch failure.
const endJob = (state: State, job: Job, failure: string | undefined, out: Array<Command>) => {
  state.jobs.delete(job.id)
  for (const stageId of job.stageIds) {
    const stage = state.stages.get(stageId)
    if (stage === undefined) continue
    stage.jobIds.delete(job.id)
    if (stage.jobIds.size > 0) continue
    out.push({ _tag: "CancelStage", stageId, reason: failure ?? "its job is over" })
    if (state.running.has(stageId)) {
      stageFinished(state, stage, stage.nextAttempt - 1, failure ?? "its job is over", out)
    }
    state.waiting.delete(stageId)
    state.failed.delete(stageId)
    state.stages.delete(stageId)
    if (stage.shuffleId !== undefined && state.shuffleStages.get(stage.shuffleId) === stageId) {
      state.shuffleStages.delete(stage.shuffleId)
    }
  }
  out.push({ _tag: "JobEnded", jobId: job.id, succeeded: failure === undefined })
  out.push(
    failure === undefined
      ? { _tag: "JobSucceeded", jobId: job.id }
      : { _tag: "JobFailed", jobId: job.id, reason: failure }
  )
}

/**
 * What is wrong with the state, if anything: a stage in more than one of the waiting, running and failed sets,
 * or a result stage in none (each stage is in exactly one of waiting, running, failed and — map stages only —
 * done); a stage no job needs, or a job whose stages are gone; a shuffle mapped to a stage of another.
 *
 * @since 0.1.0
 */
export const validate = (state: State): Array<string> => {
  const problems: Array<string> = []
  for (const stage of state.stages.values()) {
    const sets = [state.waiting, state.running, state.failed].filter((set) => set.has(stage.id)).length
    if (sets > 1) problems.push(`stage ${stage.id} is in ${sets} of the waiting, running and failed sets`)
    // A map stage in none of them is done (its outputs may since have been lost); a result stage is done only
    // with its job, which forgets it.
    if (sets === 0 && stage.shuffleId === undefined) problems.push(`result stage ${stage.id} is in no set`)
    if (stage.jobIds.size === 0) problems.push(`stage ${stage.id} is kept for no job`)
    for (const jobId of stage.jobIds) {
      if (!state.jobs.has(jobId)) problems.push(`stage ${stage.id} is kept for ended job ${jobId}`)
    }
    for (const parent of stage.parents) {
      if (!state.stages.has(parent)) problems.push(`stage ${stage.id} lost its parent stage ${parent}`)
    }
  }
  for (const set of [state.waiting, state.running, state.failed]) {
    for (const id of set) if (!state.stages.has(id)) problems.push(`unknown stage ${id} in a stage set`)
  }
  for (const job of state.jobs.values()) {
    for (const stageId of job.stageIds) {
      if (!state.stages.get(stageId)?.jobIds.has(job.id)) problems.push(`job ${job.id} lost stage ${stageId}`)
    }
    if (job.numFinished !== job.finished.filter(Boolean).length) problems.push(`job ${job.id} miscounts`)
  }
  for (const [shuffleId, stageId] of state.shuffleStages) {
    if (state.stages.get(stageId)?.shuffleId !== shuffleId) problems.push(`shuffle ${shuffleId} maps to a wrong stage`)
  }
  return problems
}
