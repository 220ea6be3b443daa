// What the two schedulers decide, carried out a batch at a time: launches, kills, task sets, jobs' ends, events.
import { Core } from "@kindling/kernel"
import { ClusterMessages, Ids } from "@kindling/protocol"
import * as DagScheduler from "../../DagScheduler.js"
import * as TaskScheduler from "../../TaskScheduler.js"
import * as TaskSetId from "../../TaskSetId.js"
import type { Job } from "../dag/dagState.js"
import type { Step, TaskOutcome } from "./driverState.js"
import { dag, event, schedule, trusted } from "./driverState.js"
import { locationsOf } from "./locations.js"

// Takes the queued inputs in order, each batch of decisions carried out before the next input is taken; then the
// jobs whose results passed kindling.driver.maxResultSize are cancelled, once all of their results are counted.
export const settle = (step: Step) => {
  const { state } = step
  for (;;) {
    const work = step.work.shift()
    if (work !== undefined) {
      if (work._tag === "Tasks") carryOut(step, TaskScheduler.step(state.scheduler, work.input))
      else carryOutDag(step, DagScheduler.step(state.dag, work.input), work.outcome)
      continue
    }
    const overLimit = [...state.jobs.values()].filter((job) => job.failure !== undefined && state.dag.jobs.has(job.id))
    if (overLimit.length === 0) return
    for (const job of overLimit) dag(step, { _tag: "CancelJob", jobId: job.id, reason: job.failure!, now: step.now })
  }
}

// Sends the tasks launched in this step so far, one message per executor (only to `only`, if given).
export const sendLaunches = (step: Step, only?: Ids.ExecutorId) => {
  for (const [executorId, tasks] of step.launches) {
    if (only !== undefined && executorId !== only) continue
    step.launches.delete(executorId)
    const executor = step.state.executors.get(executorId)
    if (executor === undefined) continue
    Core.send(step, executor.ref, new ClusterMessages.LaunchTasks({ executorId, tasks }, trusted))
  }
}

// Carries out what the task scheduler decided; `onSucceeded` takes the successes (only a status update has them).
export const carryOut = (
  step: Step,
  commands: ReadonlyArray<TaskScheduler.Command>,
  onSucceeded?: (command: Extract<TaskScheduler.Command, { _tag: "TaskSucceeded" }>) => void
) => {
  const { state } = step
  for (const command of commands) {
    switch (command._tag) {
      case "LaunchTask": {
        const taskSet = state.scheduler.taskSets.get(TaskSetId.key(command.taskSet))
        const executor = state.executors.get(Ids.ExecutorId.make(command.executorId))
        const task = taskSet === undefined
          ? undefined
          : DagScheduler.task(state.dag, taskSet.id.stageId, command.partition)
        if (taskSet === undefined || executor === undefined || task === undefined) {
          // Its task set, stage or executor was dropped after the decision was queued: nothing is sent, and the
          // attempt ends here, so that its core is free again.
          schedule(step, {
            _tag: "StatusUpdate",
            taskId: command.taskId,
            state: "KILLED",
            reason: "its stage was dropped before it was launched",
            now: step.now
          })
          break
        }
        let launches = step.launches.get(executor.id)
        if (launches === undefined) step.launches.set(executor.id, launches = [])
        launches.push(
          new ClusterMessages.TaskDescription({
            taskId: command.taskId,
            attemptNumber: command.attempt,
            name: `task ${command.index}.${command.attempt} in stage ${TaskSetId.key(taskSet.id)}`,
            index: command.index,
            partitionId: command.partition,
            stageId: taskSet.id.stageId,
            stageAttemptId: taskSet.id.stageAttempt,
            cpus: state.config.scheduler.cpusPerTask,
            properties: {},
            resources: {},
            serializedTask: task.bytes,
            needs: task.needs
          }, trusted)
        )
        event(step, {
          _tag: "TaskStart",
          stageId: taskSet.id.stageId,
          stageAttempt: taskSet.id.stageAttempt,
          taskId: command.taskId,
          index: command.index,
          executorId: executor.id,
          locality: command.locality,
          time: step.now
        })
        break
      }
      case "KillTask": {
        const executor = state.executors.get(Ids.ExecutorId.make(command.executorId))
        if (executor === undefined) break
        // A kill goes after the launch of its task, which may be in this step's batch.
        sendLaunches(step, executor.id)
        Core.send(
          step,
          executor.ref,
          new ClusterMessages.KillTask({
            taskId: command.taskId,
            executor: executor.id,
            interruptThread: true,
            reason: command.reason
          }, trusted)
        )
        break
      }
      case "TaskSucceeded":
        // Its result came with the status update that made it succeed: `statusUpdate` hands it over.
        onSucceeded?.(command)
        break
      case "TaskSetFinished":
        // The DAG scheduler ends stages by their partitions, which it has been told of task by task.
        break
      case "TaskSetFailed":
        dag(step, { _tag: "StageAborted", stageId: command.taskSet.stageId, reason: command.reason, now: step.now })
        break
      case "Log":
        Core.log(step, command.level, command.message)
        break
    }
  }
}

// Carries out what the DAG scheduler decided.
// A job's group and description, for its start event, when it has them.
const jobProperties = (job: Job | undefined) => ({
  ...(job?.group === undefined ? {} : { jobGroup: job.group }),
  ...(job?.description === undefined ? {} : { description: job.description })
})

const carryOutDag = (
  step: Step,
  commands: ReadonlyArray<DagScheduler.Command>,
  outcome: TaskOutcome | undefined
) => {
  const { state } = step
  for (const command of commands) {
    switch (command._tag) {
      case "SubmitTaskSet":
        schedule(step, {
          _tag: "SubmitTaskSet",
          taskSet: TaskSetId.make(command.stageId, command.stageAttempt),
          jobId: command.jobId,
          pool: command.pool,
          partitions: command.partitions,
          preferences: command.preferredBlocks.map((blockId) => locationsOf(state, blockId)),
          now: step.now
        })
        break
      case "CancelStage":
        schedule(step, { _tag: "CancelStage", stageId: command.stageId, reason: command.reason, now: step.now })
        break
      case "StopStageAttempt":
        schedule(step, {
          _tag: "StopTaskSet",
          taskSet: TaskSetId.make(command.stageId, command.stageAttempt),
          now: step.now
        })
        break
      case "ResultTask":
        outcome?.result(command.jobId, command.index)
        break
      case "TaskCounted":
        outcome?.counted()
        break
      case "JobSucceeded":
      case "JobFailed": {
        const overLimit = state.jobs.get(command.jobId)?.failure
        state.jobs.delete(command.jobId)
        step.commands.push(
          command._tag === "JobSucceeded" && overLimit === undefined
            ? command
            : {
              _tag: "JobFailed",
              jobId: command.jobId,
              reason: command._tag === "JobFailed" ? command.reason : overLimit!
            }
        )
        break
      }
      case "ScheduleResubmit":
        Core.startTimer(step, "resubmitFailedStages", { _tag: "ResubmitFailedStages" }, command.delayMillis)
        break
      case "JobStarted":
        event(step, {
          _tag: "JobStart",
          jobId: command.jobId,
          stageIds: command.stageIds,
          stages: command.stages,
          pool: state.dag.jobs.get(command.jobId)?.pool ?? "default",
          ...jobProperties(state.dag.jobs.get(command.jobId)),
          time: step.now
        })
        break
      case "JobEnded":
        event(step, { _tag: "JobEnd", jobId: command.jobId, succeeded: command.succeeded, time: step.now })
        break
      case "StageSubmitted":
        event(step, {
          _tag: "StageSubmitted",
          stageId: command.stageId,
          stageAttempt: command.stageAttempt,
          name: command.name,
          tasks: command.tasks,
          parentIds: command.parents,
          time: step.now
        })
        break
      case "StageCompleted":
        event(step, {
          _tag: "StageCompleted",
          stageId: command.stageId,
          stageAttempt: command.stageAttempt,
          ...(command.failureReason === undefined ? {} : { failureReason: command.failureReason }),
          time: step.now
        })
        break
      case "Log":
        Core.log(step, command.level, command.message)
        break
    }
  }
}
