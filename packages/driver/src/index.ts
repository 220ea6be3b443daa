/**
 * @kindling/driver: an app's side of the cluster — the app programming model (`App`, the `Kindling` context,
 * `Dataset`), the driver role and its schedulers, and `local` mode.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as App from "./App.js"
/** @since 0.1.0 */
export {
  EmptyDataset,
  InputNotReadable,
  InvalidArgument,
  JobFailed,
  OutputDirectoryExists,
  OutputNotWritable
} from "./AppErrors.js"
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
export { Dataset, type DatasetError, type StorageLevel } from "./Dataset.js"
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
export { Kindling, type KindlingContext } from "./Kindling.js"
/** @since 0.1.0 */
export * as LocalMode from "./LocalMode.js"
/** @since 0.1.0 */
export * as MasterSpec from "./MasterSpec.js"
/** @since 0.1.0 */
export * as SchedulerPool from "./SchedulerPool.js"
/** @since 0.1.0 */
export * as TaskScheduler from "./TaskScheduler.js"
/** @since 0.1.0 */
export * as UserFunctions from "./UserFunctions.js"
