/**
 * @kindling/simulation: whole Kindling clusters in one process on the kernel's simulated network and clock,
 * checked seed by seed (a test package; not published).
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as Cluster from "./Cluster.js"
/** @since 0.1.0 */
export * as ComputingApps from "./ComputingApps.js"
/** @since 0.1.0 */
export * as EventChecks from "./EventChecks.js"
/** @since 0.1.0 */
export * as Lineages from "./Lineages.js"
/** @since 0.1.0 */
export * as SimDisk from "./SimDisk.js"
/** @since 0.1.0 */
export * as SimProcesses from "./SimProcesses.js"
