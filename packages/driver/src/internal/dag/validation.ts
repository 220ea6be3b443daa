// The DAG scheduler's invariants (public as `DagScheduler.validate`, which lists them).
import type { State } from "./dagState.js"

export const validateDagScheduler = (state: State): Array<string> => {
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
