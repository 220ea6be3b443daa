/**
 * @kindling/worker: the worker role of a Kindling cluster — launching, supervising and killing the driver and
 * executor processes it is asked to run. The driver process entry is `@kindling/worker/DriverWrapper`.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as Artifacts from "./Artifacts.js"
/** @since 0.1.0 */
export * as DriverRunner from "./DriverRunner.js"
/** @since 0.1.0 */
export * as ExecutorRunner from "./ExecutorRunner.js"
/** @since 0.1.0 */
export * as ProcessLauncher from "./ProcessLauncher.js"
/** @since 0.1.0 */
export * as Runners from "./Runners.js"
/** @since 0.1.0 */
export * as Supervision from "./Supervision.js"
/** @since 0.1.0 */
export * as Worker from "./Worker.js"
/** @since 0.1.0 */
export * as WorkerConf from "./WorkerConf.js"
/** @since 0.1.0 */
export * as WorkerCore from "./WorkerCore.js"
/** @since 0.1.0 */
export * as WorkerInputs from "./WorkerInputs.js"
