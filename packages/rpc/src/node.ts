/**
 * Node-specific parts of the RPC runtime: the TCP transport and its encryption, zlib's CRC-32 and file-backed blocks for the data plane.
 *
 * @since 0.1.0
 */

/**
 * @since 0.1.0
 */
export * as NodeDataPlane from "./NodeDataPlane.js"

/**
 * @since 0.1.0
 */
export * as NodeTransport from "./NodeTransport.js"

/**
 * @since 0.1.0
 */
export * as NodeEncryption from "./NodeEncryption.js"

/**
 * @since 0.1.0
 */
export * as NodeArtifacts from "./NodeArtifacts.js"

/**
 * @since 0.1.0
 */
export * as NodeExposure from "./NodeExposure.js"
