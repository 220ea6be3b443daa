// The DAG scheduler's records (stages, jobs, the map output tracker), and what its transitions share of them.
import type { AppEvents } from "@kindling/app"
import type { TaskPlan } from "@kindling/protocol"
import type { Command, Config } from "../../DagScheduler.js"

interface MapOutput {
  readonly executorId: string
  readonly sizes: ReadonlyArray<number>
}

interface ShuffleOutputs {
  readonly numReduces: number
  readonly outputs: Array<MapOutput | undefined>
}

export interface Stage {
  readonly id: number
  /** Its call site (`count at logs.ts:42`), or its operation. */
  readonly name: string
  /** The app's stack at its call site. */
  readonly details: string
  /** The shuffle it writes; undefined for a result stage. */
  readonly shuffleId: number | undefined
  readonly tasks: ReadonlyArray<TaskPlan.EncodedTask>
  readonly preferredBlocks: ReadonlyArray<string | undefined>
  readonly parents: ReadonlyArray<number>
  /** What its tasks compute, for the app's UI. */
  readonly datasets: ReadonlyArray<AppEvents.DatasetInfo>
  readonly jobIds: Set<number>
  readonly firstJobId: number
  nextAttempt: number
  /** The map partitions (or result tasks) the latest attempt still waits for. */
  readonly pending: Set<number>
  /** Attempts that ended in a fetch failure since the stage last succeeded. */
  readonly failedAttempts: Set<number>
  /** The epoch each attempt started in. */
  readonly attemptEpochs: Map<number, number>
}

export interface Job {
  readonly id: number
  readonly finalStage: number
  readonly finished: Array<boolean>
  numFinished: number
  readonly pool: string
  /** Its job group and description, from the fiber that started it. */
  readonly group: string | undefined
  readonly description: string | undefined
  /** Every stage it needs, the skipped ones included. */
  readonly stageIds: ReadonlyArray<number>
}

// The DAG scheduler's state (public as `DagScheduler.State`).
export interface State {
  readonly config: Config
  readonly stages: Map<number, Stage>
  readonly shuffleStages: Map<number, number>
  /** The map output tracker, by shuffle id: it outlives the stages, so a later job skips what is done. */
  readonly shuffles: Map<number, ShuffleOutputs>
  readonly waiting: Set<number>
  readonly running: Set<number>
  readonly failed: Set<number>
  readonly jobs: Map<number, Job>
  nextStageId: number
  epoch: number
  readonly executorFailureEpoch: Map<string, number>
}

// Whether every map output of the shuffle is registered (public as `DagScheduler.isAvailable`).
export const isAvailable = (state: State, shuffleId: number): boolean => {
  const shuffle = state.shuffles.get(shuffleId)
  return shuffle !== undefined && shuffle.outputs.every((output) => output !== undefined)
}

// An attempt of the stage ended (failed, if with a reason): the stage no longer runs; a success clears its failures.
export const stageFinished = (
  state: State,
  stage: Stage,
  attempt: number,
  failureReason: string | undefined,
  out: Array<Command>
) => {
  state.running.delete(stage.id)
  if (failureReason === undefined) stage.failedAttempts.clear()
  out.push({ _tag: "StageCompleted", stageId: stage.id, stageAttempt: attempt, failureReason })
}
