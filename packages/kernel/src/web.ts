/**
 * @kindling/kernel/web: the HTTP port every node serves its web UI, JSON and metrics on (`WebServer`), the markup
 * of its pages (`Html`, `WebAssets`) and its Prometheus metrics (`NodeMetrics`). An entry of its own, so that
 * processes without a web UI (executors) do not load an HTTP server and a metrics exporter.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as Html from "./Html.js"
/** @since 0.1.0 */
export * as NodeMetrics from "./NodeMetrics.js"
/** @since 0.1.0 */
export * as WebAssets from "./WebAssets.js"
/** @since 0.1.0 */
export * as WebServer from "./WebServer.js"
/** @since 0.1.0 */
export * as TrustedFetch from "./TrustedFetch.js"
