// Stages run: submitted once their parents' outputs are there, an attempt at a time, and done task by task.
import type { Command, Input } from "../../DagScheduler.js"
import type { Job, Stage, State } from "./dagState.js"
import { isAvailable, stageFinished } from "./dagState.js"
import { endJob } from "./jobEnds.js"

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

export const submitStage = (state: State, stage: Stage, out: Array<Command>) => {
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
  const kind = stage.shuffleId === undefined ? "ResultStage" : "ShuffleMapStage"
  out.push({
    _tag: "Log",
    level: "Info",
    message: `Submitting ${partitions.length} missing tasks from ${kind} ${stage.id} (${stage.name})`
  })
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

export const taskSucceeded = (state: State, input: Extract<Input, { _tag: "TaskSucceeded" }>, out: Array<Command>) => {
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
