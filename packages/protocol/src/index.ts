/**
 * @kindling/protocol: the wire protocol of Kindling's standalone cluster — every message, state and error as a
 * schema, the codec, ids, descriptions, task plans, the REST messages and client. It imports no `node:` module, so
 * a third-party tool or a browser can use it; the runtime that carries the protocol is `@kindling/rpc`.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as AppClientMessages from "./AppClientMessages.js"
/** @since 0.1.0 */
export * as Catalogue from "./Catalogue.js"
/** @since 0.1.0 */
export * as ClusterMessages from "./ClusterMessages.js"
/** @since 0.1.0 */
export * as Codec from "./Codec.js"
/** @since 0.1.0 */
export * as DataFormats from "./DataFormats.js"
/** @since 0.1.0 */
export * as Descriptions from "./Descriptions.js"
/** @since 0.1.0 */
export * as EndpointNames from "./EndpointNames.js"
/** @since 0.1.0 */
export * as Endpoints from "./Endpoints.js"
/** @since 0.1.0 */
export * as Envelope from "./Envelope.js"
/** @since 0.1.0 */
export * as Errors from "./Errors.js"
/** @since 0.1.0 */
export * as Ids from "./Ids.js"
/** @since 0.1.0 */
export * as MasterUrl from "./MasterUrl.js"
/** @since 0.1.0 */
export * as PlanNodes from "./PlanNodes.js"
/** @since 0.1.0 */
export * as QueryMessages from "./QueryMessages.js"
/** @since 0.1.0 */
export * as Records from "./Records.js"
/** @since 0.1.0 */
export * as RestAuth from "./RestAuth.js"
/** @since 0.1.0 */
export * as RestClient from "./RestClient.js"
/** @since 0.1.0 */
export * as RestMessages from "./RestMessages.js"
/** @since 0.1.0 */
export * as RpcAddress from "./RpcAddress.js"
/** @since 0.1.0 */
export * as SharedVariables from "./SharedVariables.js"
/** @since 0.1.0 */
export * as SparkJson from "./SparkJson.js"
/** @since 0.1.0 */
export * as States from "./States.js"
/** @since 0.1.0 */
export * as SubmissionMessages from "./SubmissionMessages.js"
/** @since 0.1.0 */
export * as TaskPlan from "./TaskPlan.js"
/** @since 0.1.0 */
export * as WorkerMessages from "./WorkerMessages.js"
