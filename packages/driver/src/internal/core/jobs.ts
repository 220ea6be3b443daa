// The app's jobs as the driver counts them: submitted, cancelled, and their results held to maxResultSize.
import { Core } from "@kindling/kernel"
import type { RpcAddress, TaskPlan } from "@kindling/protocol"
import type * as DagScheduler from "../../DagScheduler.js"
import * as Allocation from "./allocation.js"
import type { Step } from "./driverState.js"
import { dag } from "./driverState.js"

// A result's size as kindling.driver.maxResultSize counts it: an indirect one (a few bytes) says its own.
const resultSize = (data: Uint8Array, outcome: typeof TaskPlan.TaskOutcome.Encoded | undefined): number =>
  outcome?._tag === "IndirectTaskResult" ? outcome.size : data.length

// A result task's result goes to its job, unless the job's results passed kindling.driver.maxResultSize.
export const takeResult = (
  step: Step,
  jobId: number,
  index: number,
  data: Uint8Array,
  outcome: typeof TaskPlan.TaskOutcome.Encoded | undefined,
  from: RpcAddress.RpcAddress | undefined
) => {
  const job = step.state.jobs.get(jobId)
  if (job === undefined || job.failure !== undefined) return
  job.succeeded++
  job.resultBytes += resultSize(data, outcome)
  const limit = step.state.config.maxResultSize
  if (limit > 0 && job.resultBytes > limit) {
    job.failure = `Job aborted due to stage failure: Total size of serialized results of ${job.succeeded} tasks ` +
      `(${job.resultBytes} bytes) is bigger than kindling.driver.maxResultSize (${limit} bytes)`
    return
  }
  step.commands.push({ _tag: "TaskResult", jobId, index, outcome, from })
}

export const cancelJob = (step: Step, jobId: number, reason: string) => {
  if (!step.state.dag.jobs.has(jobId)) return
  dag(step, { _tag: "CancelJob", jobId, reason, now: step.now })
}

export const submitJob = (step: Step, job: DagScheduler.JobSpec) => {
  const { state } = step
  if (state.aborted !== undefined) {
    step.commands.push({ _tag: "JobFailed", jobId: job.jobId, reason: state.aborted })
    return
  }
  Allocation.jobSubmitted(step)
  state.jobs.set(job.jobId, { id: job.jobId, resultBytes: 0, succeeded: 0, failure: undefined })
  dag(step, { _tag: "SubmitJob", job, now: step.now })
  if (state.executors.size === 0 && job.tasks.length > 0) {
    Core.log(step, "Info", `Job ${job.jobId} waits for executors`)
  }
}
