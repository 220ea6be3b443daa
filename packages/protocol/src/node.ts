/**
 * Node-specific parts of the SDK: the TCP transport.
 *
 * @since 0.1.0
 */

/**
 * @since 0.1.0
 */
export * as NodeTransport from "./NodeTransport.js"
