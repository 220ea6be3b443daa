// A submitted job's stages: built from its graph (a shuffle's map stage shared by the jobs that need it), then run.
import type { AppEvents, JobGraph } from "@kindling/app"
import type { TaskPlan } from "@kindling/protocol"
import type { Command, JobSpec } from "../../DagScheduler.js"
import type { Stage, State } from "./dagState.js"
import { submitStage } from "./stageRuns.js"

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
    name: spec.name,
    details: spec.details ?? "",
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
    readonly details: string
    readonly shuffleId: number | undefined
    readonly tasks: ReadonlyArray<TaskPlan.EncodedTask>
    readonly preferredBlocks: ReadonlyArray<string | undefined>
    readonly parents: ReadonlyArray<number>
    readonly jobId: number
    readonly datasets: ReadonlyArray<AppEvents.DatasetInfo>
  }
): Stage => {
  const stage: Stage = {
    id: state.nextStageId++,
    name: spec.name,
    details: spec.details,
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
  details: stage.details,
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

export const submitJob = (state: State, spec: JobSpec, out: Array<Command>) => {
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
    name: spec.name,
    details: spec.details ?? "",
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
    group: spec.group,
    description: spec.description,
    stageIds
  })
  out.push({
    _tag: "Log",
    level: "Info",
    message: `Got job ${spec.jobId} (${spec.name}) with ${spec.tasks.length} output partitions`
  })
  out.push({
    _tag: "JobStarted",
    jobId: spec.jobId,
    stageIds,
    stages: stageIds.map((id) => stageInfo(state.stages.get(id)!))
  })
  submitStage(state, finalStage, out)
}
