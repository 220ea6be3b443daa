/**
 * @kindling/kernel/testing: the simulated cluster — a deterministic scheduler, clock and network for running
 * whole clusters of real nodes in one process, seed by seed — and defects injected into a role's core.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as Defects from "./Defects.js"
/** @since 0.1.0 */
export * as Simulation from "./Simulation.js"
