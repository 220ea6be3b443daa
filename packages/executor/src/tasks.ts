/**
 * @kindling/executor/tasks: what evaluates a task and what its records are keyed and stored with — the modules
 * that need none of the executor's service, its RPC or its schemas. The app API imports this entry, so that an
 * app module loads quickly where it is imported to run tasks: in every task thread.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as Compression from "./Compression.js"
/** @since 0.1.0 */
export * as Csv from "./Csv.js"
/** @since 0.1.0 */
export * as Disk from "./Disk.js"
/** @since 0.1.0 */
export * as Evaluation from "./Evaluation.js"
/** @since 0.1.0 */
export * as FieldValues from "./FieldValues.js"
/** @since 0.1.0 */
export * as FilePaths from "./FilePaths.js"
/** @since 0.1.0 */
export * as JsonLines from "./JsonLines.js"
/** @since 0.1.0 */
export * as Keys from "./Keys.js"
/** @since 0.1.0 */
export * as ObjectStore from "./ObjectStore.js"
/** @since 0.1.0 */
export * as Parquet from "./Parquet.js"
/** @since 0.1.0 */
export * as PartFiles from "./PartFiles.js"
/** @since 0.1.0 */
export * as ParseModes from "./ParseModes.js"
/** @since 0.1.0 */
export * as SparkRandom from "./SparkRandom.js"
/** @since 0.1.0 */
export * as TextSplits from "./TextSplits.js"
