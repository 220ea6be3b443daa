// Jobs that end: with their last result, cancelled or aborted with a stage; the stages no other job needs dropped.
import type { Command } from "../../DagScheduler.js"
import type { Job, Stage, State } from "./dagState.js"
import { stageFinished } from "./dagState.js"

export const abortStage = (state: State, stage: Stage, reason: string, out: Array<Command>) => {
  const jobs = [...stage.jobIds].map((id) => state.jobs.get(id)).filter((job) => job !== undefined)
  for (const job of jobs.sort((a, b) => a.id - b.id)) {
    endJob(state, job, `Job aborted due to stage failure: ${reason}`, out)
  }
}

// The job is over: stages no other job needs are forgotten, and what still runs of them is killed — an attempt
// that runs, and those left running by attempts given up on after a fetch failure.
export const endJob = (state: State, job: Job, failure: string | undefined, out: Array<Command>) => {
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
