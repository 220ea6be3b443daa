/**
 * @kindling/executor: runs an app's tasks. `local` mode in `@kindling/driver` runs an executor in the driver's
 * process; on a cluster `kindling executor` runs one (`main`). Its modules, by folder:
 *
 * - `role/`: the executor role — its core (`ExecutorCore`, with its local inputs `ExecutorInputs`), the shell that
 *   hosts it (`Executor`), the process that starts one (`ExecutorProcess`) and the memory it shares (`MemoryBudget`).
 * - `tasks/`: the task runtime — the pool of task threads (`TaskThreads`) or the inline runner (`InlineTasks`)
 *   tasks run on, one usable before it is made (`LateThreads`), what a task is handed (`TaskContext`) and the CPU
 *   time it takes (`ThreadCpu`).
 * - `engine/`: what a task computes — a partition's plan evaluated (`Evaluation`), aggregations and their spills.
 * - `shuffle/`: map outputs and blocks — shuffle files written, served and fetched (`ShuffleWriter`,
 *   `ShuffleService`, `ShuffleBlocks`, `ShuffleFiles`, the worker's `ExternalShuffleService`), the persisted
 *   partitions (`BlockStore`), record files, and migrating both off a decommissioned executor (`Migration`).
 *
 * The data tasks read and write — formats, paths, the storage port — is `@kindling/data`'s.
 *
 * @since 0.1.0
 */

// The role.
/** @since 0.1.0 */
export * as Executor from "./role/Executor.js"
/** @since 0.1.0 */
export * as ExecutorCore from "./role/ExecutorCore.js"
/** @since 0.1.0 */
export * as ExecutorInputs from "./role/ExecutorInputs.js"
/** @since 0.1.0 */
export * as ExecutorProcess from "./role/ExecutorProcess.js"
/** @since 0.1.0 */
export * as MemoryBudget from "./role/MemoryBudget.js"

// The task runtime.
/** @since 0.1.0 */
export * as InlineTasks from "./tasks/InlineTasks.js"
/** @since 0.1.0 */
export * as LateThreads from "./tasks/LateThreads.js"
/** @since 0.1.0 */
export * as TaskContext from "./tasks/TaskContext.js"
/** @since 0.1.0 */
export * as TaskThreads from "./tasks/TaskThreads.js"
/** @since 0.1.0 */
export * as ThreadCpu from "./tasks/ThreadCpu.js"

// The engine.
/** @since 0.1.0 */
export * as Evaluation from "./engine/Evaluation.js"
/** @since 0.1.0 */
export * as Spill from "./engine/Spill.js"

// Shuffle and blocks.
/** @since 0.1.0 */
export * as BlockStore from "./shuffle/BlockStore.js"
/** @since 0.1.0 */
export * as ExternalShuffleService from "./shuffle/ExternalShuffleService.js"
/** @since 0.1.0 */
export * as Migration from "./shuffle/Migration.js"
/** @since 0.1.0 */
export * as RecordFiles from "./shuffle/RecordFiles.js"
/** @since 0.1.0 */
export * as ShuffleBlocks from "./shuffle/ShuffleBlocks.js"
/** @since 0.1.0 */
export * as ShuffleFiles from "./shuffle/ShuffleFiles.js"
/** @since 0.1.0 */
export * as ShuffleService from "./shuffle/ShuffleService.js"
