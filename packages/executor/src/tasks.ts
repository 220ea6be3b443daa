/**
 * @kindling/executor/tasks: what evaluates a task and what its records are keyed and stored with — the modules
 * that need none of the executor's service, its RPC or its schemas. The app API imports this entry, so that an
 * app module loads quickly where it is imported to run tasks: in every task thread.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as Disk from "./Disk.js"
/** @since 0.1.0 */
export * as Evaluation from "./Evaluation.js"
/** @since 0.1.0 */
export * as Keys from "./Keys.js"
/** @since 0.1.0 */
export * as TextSplits from "./TextSplits.js"
