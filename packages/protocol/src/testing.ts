/**
 * Test helpers for the protocol: arbitraries of every message, state and error, and bounded polling.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as Arbitraries from "./Arbitraries.js"
/** @since 0.1.0 */
export * as Polling from "./Polling.js"
