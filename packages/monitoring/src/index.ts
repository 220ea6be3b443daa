/**
 * @kindling/monitoring: what people watch a cluster through, for every role — the master's and workers' web UIs;
 * for an app, the status folded from its event stream (Spark's listener bus, which `@kindling/app` names and the
 * driver emits), its web UI and Spark's monitoring REST API, the console progress bar, event logs in Spark's
 * format and the history server that replays them. It sits above the roles it shows and listens to.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as AppMetrics from "./AppMetrics.js"
/** @since 0.1.0 */
export * as AppPages from "./AppPages.js"
/** @since 0.1.0 */
export * as AppStatus from "./AppStatus.js"
/** @since 0.1.0 */
export * as AppUi from "./AppUi.js"
/** @since 0.1.0 */
export * as ConsoleProgress from "./ConsoleProgress.js"
/** @since 0.1.0 */
export * as DagSvg from "./DagSvg.js"
/** @since 0.1.0 */
export * as DriverListeners from "./DriverListeners.js"
/** @since 0.1.0 */
export * as EventLogCodec from "./EventLogCodec.js"
/** @since 0.1.0 */
export * as EventLogReader from "./EventLogReader.js"
/** @since 0.1.0 */
export * as EventLogWriter from "./EventLogWriter.js"
/** @since 0.1.0 */
export * as HistoryConf from "./HistoryConf.js"
/** @since 0.1.0 */
export * as HistoryServer from "./HistoryServer.js"
/** @since 0.1.0 */
export * as MasterUi from "./MasterUi.js"
/** @since 0.1.0 */
export * as MonitoringApi from "./MonitoringApi.js"
/** @since 0.1.0 */
export * as SparkEvents from "./SparkEvents.js"
/** @since 0.1.0 */
export * as WorkerUi from "./WorkerUi.js"
