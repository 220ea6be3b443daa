/**
 * @kindling/app: the app API — what an app is written against. An app module's default export is `App.make(main)`;
 * its main gets the app context (`Kindling`, Spark's `SparkContext`) and makes datasets (`Dataset`, Spark's RDD)
 * whose actions run as jobs on the driver's runtime (`@kindling/driver`), which builds the context with
 * `AppContext.make`, takes the jobs as `JobGraph`s and tells what happens in them as `AppEvents`.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as App from "./App.js"
/** @since 0.1.0 */
export * as AppContext from "./AppContext.js"
/** @since 0.1.0 */
export * as AppEvents from "./AppEvents.js"
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
export * as DataReader from "./DataReader.js"
/** @since 0.1.0 */
export { Dataset, type DatasetError, type StorageLevel } from "./Dataset.js"
/** @since 0.1.0 */
export * as DatasetWriter from "./DatasetWriter.js"
/** @since 0.1.0 */
export * as JobGraph from "./JobGraph.js"
/**
 * @since 0.1.0
 */
export * as JobGroups from "./JobGroups.js"
/** @since 0.1.0 */
export { Kindling, type KindlingContext } from "./Kindling.js"
/** @since 0.1.0 */
export * as StackFrames from "./StackFrames.js"
/** @since 0.1.0 */
export * as UserFunctions from "./UserFunctions.js"
