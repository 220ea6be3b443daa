// The driver core's records (executors, jobs, blocks), its step, and the queue through which it feeds its schedulers.
import type { AppEvents } from "@kindling/app"
import type { Core } from "@kindling/kernel"
import type { ClusterMessages, Ids, RpcAddress } from "@kindling/protocol"
import type { RpcEnv } from "@kindling/rpc"
import type * as DagScheduler from "../../DagScheduler.js"
import type { Config, DriverCommand, Local } from "../../DriverCore.js"
import type * as TaskScheduler from "../../TaskScheduler.js"
import type { Allocation } from "./allocation.js"
import type { Decommission } from "./decommissions.js"

export interface Executor {
  readonly id: Ids.ExecutorId
  readonly ref: RpcAddress.Ref<ClusterMessages.DriverToExecutor>
  readonly host: string
  readonly cores: number
  /** Where its logs can be read, as it said when it registered. */
  readonly logUrls: Readonly<Record<string, string>>
  readonly connection: RpcEnv.ConnectionId
  /** Offered tasks once it said it is ready (`LaunchedExecutor`). */
  launched: boolean
  lastHeard: number
}

// What the driver counts of a running job besides what its stages do.
export interface Job {
  readonly id: number
  resultBytes: number
  succeeded: number
  /** Why the job must fail though its tasks may all succeed (its results passed kindling.driver.maxResultSize). */
  failure: string | undefined
}

// The driver core's state (public as `DriverCore.State`).
export interface State {
  readonly config: Config
  readonly scheduler: TaskScheduler.State
  readonly dag: DagScheduler.State
  readonly executors: Map<Ids.ExecutorId, Executor>
  readonly jobs: Map<number, Job>
  /** Where the persisted partitions are (Spark's block manager master): executors by block id. */
  readonly blocks: Map<string, Set<Ids.ExecutorId>>
  /** Dynamic allocation's records, when it is on. */
  readonly allocation: Allocation | undefined
  /** The executors being decommissioned. */
  readonly decommissions: Map<Ids.ExecutorId, Decommission>
  /**
   * The worker shuffle services that serve executors' map outputs, by executor — kept after the executor is gone,
   * since its outputs are still served.
   */
  readonly shuffleServices: Map<Ids.ExecutorId, RpcAddress.RpcAddress>
  stopping: boolean
  aborted: string | undefined
}

export type Step = Core.Out<Local, DriverCommand> & {
  readonly state: State
  /** The connection the message being handled came on. */
  readonly connection: RpcEnv.ConnectionId
  /** Inputs of the schedulers waiting for their turn, oldest first. */
  readonly work: Array<Work>
  /** The tasks launched in this step, by executor, not yet sent: each executor gets them in one `LaunchTasks`. */
  readonly launches: Map<Ids.ExecutorId, Array<ClusterMessages.TaskDescription>>
  /** The events of this step, published together where the first of them was made. */
  events: Array<AppEvents.AppEvent> | undefined
}

// An input for one of the two schedulers; a DAG input about a successful task comes with what the task brought.
export type Work =
  | { readonly _tag: "Tasks"; readonly input: TaskScheduler.Input }
  | { readonly _tag: "Dag"; readonly input: DagScheduler.Input; readonly outcome: TaskOutcome | undefined }

// What becomes of a successful task's outcome, as the DAG scheduler decides.
export interface TaskOutcome {
  /** It is the result of task `index` of job `jobId`. */
  readonly result: (jobId: number, index: number) => void
  /** Its updates to accumulators count. */
  readonly counted: () => void
}

// Messages the core builds from its own state are valid by construction; checking each one again is most of
// the cost of launching a small task.
export const trusted = { disableValidation: true }

// Queues an input for the task scheduler.
export const schedule = (step: Step, input: TaskScheduler.Input) => {
  step.work.push({ _tag: "Tasks", input })
}

// Queues an input for the DAG scheduler, with the outcome of the task it reports a success of.
export const dag = (step: Step, input: DagScheduler.Input, outcome?: TaskOutcome) => {
  step.work.push({ _tag: "Dag", input, outcome })
}

export const event = (step: Step, appEvent: AppEvents.AppEvent) => {
  if (step.events === undefined) {
    step.events = [appEvent]
    step.commands.push({ _tag: "Events", events: step.events })
  } else {
    step.events.push(appEvent)
  }
}
