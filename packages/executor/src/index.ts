/**
 * @kindling/executor: runs an app's tasks — the executor role (`Executor`, its core `ExecutorCore`), the pool of
 * task threads it runs them on, and the evaluation of a task's partition plan. `local` mode in
 * `@kindling/driver` runs an executor in the driver's process; on a cluster `kindling executor` runs one.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as BlockStore from "./BlockStore.js"
/** @since 0.1.0 */
export * as Evaluation from "./Evaluation.js"
/** @since 0.1.0 */
export * as Executor from "./Executor.js"
/** @since 0.1.0 */
export * as ExecutorCore from "./ExecutorCore.js"
/** @since 0.1.0 */
export * as ExecutorInputs from "./ExecutorInputs.js"
/** @since 0.1.0 */
export * as ExecutorProcess from "./ExecutorProcess.js"
/** @since 0.1.0 */
export * as InlineTasks from "./InlineTasks.js"
/** @since 0.1.0 */
export * as ExternalShuffleService from "./ExternalShuffleService.js"
/** @since 0.1.0 */
export * as MemoryBudget from "./MemoryBudget.js"
/** @since 0.1.0 */
export * as Migration from "./Migration.js"
/** @since 0.1.0 */
export * as RecordFiles from "./RecordFiles.js"
/** @since 0.1.0 */
export * as ShuffleBlocks from "./ShuffleBlocks.js"
/** @since 0.1.0 */
export * as ShuffleFiles from "./ShuffleFiles.js"
/** @since 0.1.0 */
export * as ShuffleService from "./ShuffleService.js"
/** @since 0.1.0 */
export * as Spill from "./Spill.js"
/** @since 0.1.0 */
export * as TaskContext from "./TaskContext.js"
/** @since 0.1.0 */
export * as TaskThreads from "./TaskThreads.js"
/** @since 0.1.0 */
export * as ThreadCpu from "./ThreadCpu.js"
