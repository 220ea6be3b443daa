/**
 * Test kit for Kindling and third-party nodes.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as Arbitraries from "./Arbitraries.js"
/** @since 0.1.0 */
export * as Conformance from "./Conformance.js"
/** @since 0.1.0 */
export * as Polling from "./Polling.js"
