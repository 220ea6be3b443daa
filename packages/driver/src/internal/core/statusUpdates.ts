// Status updates from executors: a task's end told to its listeners and schedulers, and what it brought back.
import { type ClusterMessages, Records, type States, type TaskPlan } from "@kindling/protocol"
import * as TaskScheduler from "../../TaskScheduler.js"
import { carryOut } from "./decisions.js"
import type { Executor, Step, TaskOutcome } from "./driverState.js"
import { dag, event } from "./driverState.js"
import { takeResult } from "./jobs.js"

// What a task that did not finish reported: a fetch failure, or a failure as Spark prints it (the error's
// stack, which starts with its class and message).
const failureOf = (
  data: Uint8Array
): { readonly text: string; readonly fetchFailed?: typeof TaskPlan.FetchFailed.Encoded } => {
  try {
    const outcome = Records.decode(data) as typeof TaskPlan.TaskOutcome.Encoded
    if (outcome._tag === "TaskFailure") return { text: outcome.stack }
    if (outcome._tag === "FetchFailed") return { text: outcome.message, fetchFailed: outcome }
  } catch {
    // an executor that sent no readable failure
  }
  return { text: "the task failed without saying why" }
}

const schedulerState = (state: States.TaskState): Extract<TaskScheduler.Input, { _tag: "StatusUpdate" }>["state"] => {
  switch (state) {
    case "LAUNCHING":
    case "RUNNING":
      return "RUNNING"
    case "FINISHED":
    case "KILLED":
    case "LOST":
    case "FAILED":
      return state
  }
}

// A running attempt ended (as its executor reports, or with its executor): its stage's listeners hear of it.
export const taskEnded = (
  step: Step,
  taskId: number,
  succeeded: boolean,
  metrics: Readonly<Record<string, number>> = {},
  reason?: string
) => {
  const attempt = step.state.scheduler.attempts.get(taskId)
  if (attempt === undefined) return
  event(step, {
    _tag: "TaskEnd",
    stageId: attempt.taskSet.stageId,
    stageAttempt: attempt.taskSet.stageAttempt,
    taskId,
    succeeded,
    ...(reason === undefined ? {} : { reason }),
    metrics: { ...metrics, duration: step.now - attempt.launchedAt },
    time: step.now
  })
}

// A finished task's result, but its value (left encoded): a few fields, cheap to read.
const finishedOutcome = (data: Uint8Array): typeof TaskPlan.TaskOutcome.Encoded | undefined => {
  try {
    return Records.decode(data) as typeof TaskPlan.TaskOutcome.Encoded
  } catch {
    return undefined // unreadable: the shell fails the job
  }
}

// A map task's result value is its `MapStatus`: the bytes it wrote per reduce partition.
const mapSizes = (outcome: typeof TaskPlan.TaskOutcome.Encoded | undefined): ReadonlyArray<number> => {
  if (outcome?._tag !== "TaskResult") return []
  try {
    const status = Records.decode(outcome.value) as { readonly sizes?: ReadonlyArray<number> } | undefined
    return Array.isArray(status?.sizes) ? status.sizes : []
  } catch {
    return []
  }
}

// Each update in turn, as if it had come alone.
export const statusUpdates = (step: Step, message: ClusterMessages.StatusUpdates) => {
  const executor = step.state.executors.get(message.executorId)
  if (executor !== undefined) executor.lastHeard = step.now
  for (const update of message.updates) statusUpdate(step, executor, update)
}

const statusUpdate = (
  step: Step,
  executor: Executor | undefined,
  message: ClusterMessages.TaskStatus
) => {
  const { state } = step
  const status = schedulerState(message.state)
  const finished = status === "FINISHED" ? finishedOutcome(message.data) : undefined
  const failure = status === "FAILED" || status === "KILLED" ? failureOf(message.data) : undefined
  if (status !== "RUNNING") {
    taskEnded(
      step,
      message.taskId,
      status === "FINISHED",
      finished?._tag === "TaskResult" ? finished.metrics : undefined,
      status === "FINISHED" ? undefined : failure?.text ?? status
    )
  }
  const taskSet = state.scheduler.attempts.get(message.taskId)?.taskSet
  // The first thing the step does, so that nothing waits in the queue before it.
  const commands = TaskScheduler.step(state.scheduler, {
    _tag: "StatusUpdate",
    taskId: message.taskId,
    state: status,
    reason: failure?.text ?? "",
    ...(failure?.fetchFailed === undefined ? {} : { fetchFailed: true }),
    now: step.now
  })
  // What the task brought back goes where the DAG scheduler says: a result to its job, the task's updates to
  // accumulators when they count.
  const outcome: TaskOutcome = {
    result: (jobId, index) => takeResult(step, jobId, index, message.data, finished, executor?.ref.address),
    counted: () => {
      if (finished?._tag === "TaskResult" && finished.accumulators !== undefined && finished.accumulators.length > 0) {
        step.commands.push({ _tag: "AccumulatorUpdates", updates: finished.accumulators })
      }
    }
  }
  carryOut(step, commands, (command) => {
    const isMap = state.dag.stages.get(command.taskSet.stageId)?.shuffleId !== undefined
    dag(step, {
      _tag: "TaskSucceeded",
      stageId: command.taskSet.stageId,
      stageAttempt: command.taskSet.stageAttempt,
      partition: command.partition,
      executorId: command.executorId,
      ...(isMap ? { sizes: mapSizes(finished) } : {}),
      now: step.now
    }, outcome)
  })
  if (failure?.fetchFailed !== undefined && taskSet !== undefined) {
    dag(step, {
      _tag: "FetchFailed",
      stageId: taskSet.stageId,
      stageAttempt: taskSet.stageAttempt,
      shuffleId: failure.fetchFailed.shuffleId,
      mapIndex: failure.fetchFailed.mapIndex,
      executorId: failure.fetchFailed.executorId,
      message: failure.text,
      now: step.now
    })
  }
}
