// The driver core's invariants, both schedulers' included (public as `DriverCore.validate`, which lists them).
import { Ids } from "@kindling/protocol"
import * as DagScheduler from "../../DagScheduler.js"
import * as TaskScheduler from "../../TaskScheduler.js"
import * as TaskSetId from "../../TaskSetId.js"
import type { State } from "./driverState.js"

export const validateDriver = (state: State): ReadonlyArray<string> => {
  const problems = [...TaskScheduler.validate(state.scheduler), ...DagScheduler.validate(state.dag)]
  for (const jobId of state.jobs.keys()) {
    if (!state.dag.jobs.has(jobId)) problems.push(`job ${jobId} is not known to the DAG scheduler`)
  }
  for (const executorId of state.scheduler.executors.keys()) {
    if (!state.executors.has(Ids.ExecutorId.make(executorId))) {
      problems.push(`the scheduler offers executor ${executorId}, which is not registered`)
    }
  }
  for (const taskSet of state.scheduler.taskSets.values()) {
    if (!state.dag.stages.has(taskSet.id.stageId)) {
      problems.push(
        `task set ${TaskSetId.key(taskSet.id)} runs stage ${taskSet.id.stageId}, which the DAG scheduler dropped`
      )
    }
  }
  for (const stageId of state.dag.running) {
    const stage = state.dag.stages.get(stageId)
    if (stage === undefined || stage.pending.size === 0) continue
    const taskSet = state.scheduler.taskSets.get(TaskSetId.key(TaskSetId.make(stageId, stage.nextAttempt - 1)))
    if (taskSet === undefined || taskSet.zombie) {
      problems.push(`stage ${stageId} waits for ${stage.pending.size} partitions that no task set will run`)
    }
  }
  return problems
}
