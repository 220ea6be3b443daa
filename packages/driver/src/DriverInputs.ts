/**
 * The driver's local inputs: its timers, and what the app and its cluster manager tell it (jobs to run or cancel,
 * datasets unpersisted, executors removed, the app stopping or aborted). They never cross a connection; as
 * schemas they document the driver's core in the protocol reference, and `DriverCore.Local` is derived from them.
 *
 * @since 0.1.0
 */
import { Ids } from "@kindling/protocol"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import type * as DagScheduler from "./DagScheduler.js"

// A job is the DAG scheduler's model (tasks as bytes, the shuffles they read, the datasets for the UI), built by
// the app in the same process: documented there, not repeated here.
const JobSpec = Schema.declare(
  (input: unknown): input is DagScheduler.JobSpec =>
    Predicate.hasProperty(input, "jobId") && Predicate.hasProperty(input, "tasks") &&
    Predicate.hasProperty(input, "shuffles"),
  {
    identifier: "JobSpec",
    description: "the job as the DAG scheduler takes it (`DagScheduler.JobSpec`): its result tasks, the shuffles " +
      "they depend on and its scheduler pool"
  }
)

/**
 * @since 0.1.0
 * @category schemas
 */
export const SubmitJob = Schema.TaggedStruct("SubmitJob", { job: JobSpec }).annotations({
  description: "An action of the app runs a job: its result tasks, after the shuffles they depend on"
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const ResubmitFailedStages = Schema.TaggedStruct("ResubmitFailedStages", {}).annotations({
  description: "A fetch failure's delay is over: the failed stages run again"
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const Unpersist = Schema.TaggedStruct("Unpersist", { rddId: Schema.Int }).annotations({
  description: "The app unpersisted a dataset: its executors drop its blocks"
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const CancelJob = Schema.TaggedStruct("CancelJob", { jobId: Schema.Int, reason: Schema.String }).annotations({
  description: "A job is cancelled: by the app, because its action was interrupted, or a result of it was lost"
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const ExecutorRemoved = Schema.TaggedStruct("ExecutorRemoved", {
  executorId: Ids.ExecutorId,
  reason: Schema.String,
  started: Schema.propertySignature(Schema.Boolean).annotations({
    description: "false when its process never ran"
  }),
  workerLost: Schema.optionalWith(Schema.Boolean, { exact: true }).annotations({
    description: "its worker was lost: the map outputs that worker's shuffle service served are lost too"
  })
}).annotations({
  description: "An executor is gone, as its cluster manager tells (its process exited, its worker was lost)"
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const ExecutorDecommissioned = Schema.TaggedStruct("ExecutorDecommissioned", {
  executorId: Ids.ExecutorId,
  reason: Schema.String
}).annotations({
  description: "An executor's worker is being decommissioned, as its cluster manager tells: it is offered no more " +
    "tasks, and once they are over its blocks are migrated to peers"
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const CheckDecommissions = Schema.TaggedStruct("CheckDecommissions", {}).annotations({
  description: "Every second: a decommissioning executor waiting for a peer takes one, or gives its blocks up past " +
    "its wait; one past `kindling.executor.decommission.forceKillTimeout` is stopped"
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const ReviveOffers = Schema.TaggedStruct("ReviveOffers", {}).annotations({
  description: "Every `kindling.scheduler.revive.interval`: free executor cores are offered to waiting tasks"
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const CheckSpeculation = Schema.TaggedStruct("CheckSpeculation", {}).annotations({
  description: "Every `kindling.speculation.interval`, when speculation is on: stragglers are looked for"
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const CheckAllocation = Schema.TaggedStruct("CheckAllocation", {}).annotations({
  description: "Every 100 ms, with kindling.dynamicAllocation.enabled: the executors the app asks for are sized to " +
    "its backlog, and idle ones are given back"
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const CheckExecutorTimeouts = Schema.TaggedStruct("CheckExecutorTimeouts", {}).annotations({
  description: "Every quarter of `kindling.network.timeout` (at least 1 s): executors silent for all of it are lost"
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const CheckStarvation = Schema.TaggedStruct("CheckStarvation", {}).annotations({
  description: "Every `kindling.scheduler.maxRegisteredResourcesWaitingTime`: warn if jobs wait with no executor"
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const Stop = Schema.TaggedStruct("Stop", {}).annotations({
  description: "The app is stopping: its executors are told to stop, and their going is expected"
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const Abort = Schema.TaggedStruct("Abort", { reason: Schema.String }).annotations({
  description: "The app cannot go on (its cluster manager removed it): every job, running or to come, fails"
})

/**
 * Every local input of the driver.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Local = Schema.Union(
  SubmitJob,
  ResubmitFailedStages,
  Unpersist,
  CancelJob,
  ExecutorRemoved,
  ExecutorDecommissioned,
  CheckDecommissions,
  ReviveOffers,
  CheckSpeculation,
  CheckAllocation,
  CheckExecutorTimeouts,
  CheckStarvation,
  Stop,
  Abort
)
