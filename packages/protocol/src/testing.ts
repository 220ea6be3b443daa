/**
 * Test helpers for the protocol: arbitraries of every message, state and error, bounded polling, and deadlines that scale with the machine's load.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as Arbitraries from "./Arbitraries.js"
/** @since 0.1.0 */
export * as Deadlines from "./Deadlines.js"
/** @since 0.1.0 */
export * as Polling from "./Polling.js"
