// Fetch failures: map outputs unregistered (a lost executor's too), and the failed stages resubmitted or aborted.
import type { Command, Input } from "../../DagScheduler.js"
import type { State } from "./dagState.js"
import { stageFinished } from "./dagState.js"
import { abortStage } from "./jobEnds.js"
import { submitStage } from "./stageRuns.js"

export const fetchFailed = (state: State, input: Extract<Input, { _tag: "FetchFailed" }>, out: Array<Command>) => {
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
export const executorLost = (state: State, executorId: string, epoch: number | undefined, out: Array<Command>) => {
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

export const resubmitFailedStages = (state: State, out: Array<Command>) => {
  if (state.failed.size === 0) return
  const failed = [...state.failed]
    .map((id) => state.stages.get(id)!)
    .sort((a, b) => a.firstJobId - b.firstJobId || a.id - b.id)
  state.failed.clear()
  out.push({ _tag: "Log", level: "Info", message: "Resubmitting failed stages" })
  for (const stage of failed) submitStage(state, stage, out)
}
