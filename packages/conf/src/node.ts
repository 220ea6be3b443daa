/**
 * Node-specific parts of the configuration: the loader that reads the properties file and the environment.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as NodeLoader from "./NodeLoader.js"
