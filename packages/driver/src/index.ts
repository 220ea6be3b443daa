/**
 * @kindling/driver. The driver role is built by the control-plane and app-runtime issues; this package exists so
 * the workspace, its build and its dependency rules are in place before them.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as DriverConf from "./DriverConf.js"
