/**
 * The conformance kit: checks a node of any implementation against Kindling's protocol over a real connection.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as Conformance from "./Conformance.js"
