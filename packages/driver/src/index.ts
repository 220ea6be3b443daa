/**
 * @kindling/driver: the driver's runtime — the driver role with its core and schedulers (DAG, tasks, pools),
 * its shared variables, its client of the master, the app's listeners, `local` mode and the cluster's driver, and
 * loading an app module. It runs the jobs the app API (`@kindling/app`) makes.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as AppModule from "./AppModule.js"
/** @since 0.1.0 */
export * as AppListeners from "./AppListeners.js"
/** @since 0.1.0 */
export * as AppClient from "./AppClient.js"
/** @since 0.1.0 */
export * as AppClientCore from "./AppClientCore.js"
/** @since 0.1.0 */
export * as AppClientInputs from "./AppClientInputs.js"
/** @since 0.1.0 */
export * as Cluster from "./Cluster.js"
/** @since 0.1.0 */
export * as DagScheduler from "./DagScheduler.js"
/** @since 0.1.0 */
export * as Driver from "./Driver.js"
/** @since 0.1.0 */
export * as DriverConf from "./DriverConf.js"
/** @since 0.1.0 */
export * as DriverCore from "./DriverCore.js"
/** @since 0.1.0 */
export * as DriverInputs from "./DriverInputs.js"
/** @since 0.1.0 */
export * as LocalMode from "./LocalMode.js"
/** @since 0.1.0 */
export * as MasterSpec from "./MasterSpec.js"
/** @since 0.1.0 */
export * as SchedulerPool from "./SchedulerPool.js"
/** @since 0.1.0 */
export * as TaskScheduler from "./TaskScheduler.js"
/** @since 0.1.0 */
export * as TaskSetId from "./TaskSetId.js"

/**
 * @since 0.1.0
 */
export * as ExecutorAllocation from "./ExecutorAllocation.js"
