// The invariants of the driver's state, as lists of what is wrong: each scheduler's, and the core's over both.
import { Ids } from "@kindling/protocol"
import type { State as DagSchedulerState } from "./dagState.js"
import type { State as DriverState } from "./driverState.js"
import type { State as TaskSchedulerState } from "./taskSets.js"

// The task scheduler's invariants (public as `TaskScheduler.validate`, which lists them).
export const validateTaskScheduler = (state: TaskSchedulerState): Array<string> => {
  const problems: Array<string> = []
  const used = new Map<string, number>()
  for (const attempt of state.attempts.values()) {
    if (!state.executors.has(attempt.executorId)) {
      problems.push(`TID ${attempt.taskId} runs on unknown executor ${attempt.executorId}`)
    }
    used.set(attempt.executorId, (used.get(attempt.executorId) ?? 0) + state.config.cpusPerTask)
    const task = state.taskSets.get(attempt.taskSet)?.tasks[attempt.index]
    if (task !== undefined && !task.running.has(attempt.taskId)) {
      problems.push(`TID ${attempt.taskId} is not listed by its task`)
    }
  }
  for (const executor of state.executors.values()) {
    const booked = used.get(executor.id) ?? 0
    if (executor.freeCores < 0) problems.push(`executor ${executor.id} has ${executor.freeCores} free cores`)
    if (booked + executor.freeCores !== executor.cores) {
      problems.push(`executor ${executor.id}: ${booked} cores booked + ${executor.freeCores} free ≠ ${executor.cores}`)
    }
  }
  for (const taskSet of state.taskSets.values()) {
    let succeeded = 0
    for (const task of taskSet.tasks) {
      if (task.done) succeeded++
      if (task.done && task.pending) problems.push(`task ${taskSet.id}/${task.index} is done and pending`)
      if (task.pending && task.running.size > 0) problems.push(`task ${taskSet.id}/${task.index} pending while running`)
      if (task.running.size > 2) problems.push(`task ${taskSet.id}/${task.index} runs ${task.running.size} times`)
      if (!task.done && !task.pending && task.running.size === 0 && !taskSet.zombie) {
        problems.push(`task ${taskSet.id}/${task.index} is neither pending, running nor done`)
      }
      for (const taskId of task.running) {
        if (!state.attempts.has(taskId)) problems.push(`task ${taskSet.id}/${task.index} lists ended TID ${taskId}`)
      }
    }
    if (succeeded !== taskSet.succeeded) problems.push(`task set ${taskSet.id} counts ${taskSet.succeeded} done`)
  }
  return problems
}

// The DAG scheduler's invariants (public as `DagScheduler.validate`, which lists them).
export const validateDagScheduler = (state: DagSchedulerState): Array<string> => {
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

// The driver core's invariants, both schedulers' included (public as `DriverCore.validate`, which lists them).
export const validateDriver = (state: DriverState): ReadonlyArray<string> => {
  const problems = [...validateTaskScheduler(state.scheduler), ...validateDagScheduler(state.dag)]
  for (const jobId of state.jobs.keys()) {
    if (!state.dag.jobs.has(jobId)) problems.push(`job ${jobId} is not known to the DAG scheduler`)
  }
  for (const executorId of state.scheduler.executors.keys()) {
    if (!state.executors.has(Ids.ExecutorId.make(executorId))) {
      problems.push(`the scheduler offers executor ${executorId}, which is not registered`)
    }
  }
  for (const taskSet of state.scheduler.taskSets.values()) {
    if (!state.dag.stages.has(taskSet.stageId)) {
      problems.push(`task set ${taskSet.id} runs stage ${taskSet.stageId}, which the DAG scheduler dropped`)
    }
  }
  for (const stageId of state.dag.running) {
    const stage = state.dag.stages.get(stageId)
    if (stage === undefined || stage.pending.size === 0) continue
    const taskSet = state.scheduler.taskSets.get(`${stageId}.${stage.nextAttempt - 1}`)
    if (taskSet === undefined || taskSet.zombie) {
      problems.push(`stage ${stageId} waits for ${stage.pending.size} partitions that no task set will run`)
    }
  }
  return problems
}
