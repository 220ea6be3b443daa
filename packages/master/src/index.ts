/**
 * @kindling/master: the master role of a Kindling cluster — its state machine, scheduling, persistence and
 * recovery, and the Effect shell that runs it on an RpcEnv.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as ArtifactStore from "./ArtifactStore.js"
/** @since 0.1.0 */
export * as LeaderElection from "./LeaderElection.js"
/** @since 0.1.0 */
export * as LeadershipLease from "./LeadershipLease.js"
/** @since 0.1.0 */
export * as Master from "./Master.js"
/** @since 0.1.0 */
export * as MasterConf from "./MasterConf.js"
/** @since 0.1.0 */
export * as MasterCore from "./MasterCore.js"
/** @since 0.1.0 */
export * as MasterInputs from "./MasterInputs.js"
/** @since 0.1.0 */
export * as Persistence from "./Persistence.js"
/** @since 0.1.0 */
export * as RestServer from "./RestServer.js"
/** @since 0.1.0 */
export * as Scheduling from "./Scheduling.js"
/** @since 0.1.0 */
export * as StoreTrust from "./StoreTrust.js"
/** @since 0.1.0 */
export * as ZooKeeper from "./ZooKeeper.js"
/** @since 0.1.0 */
export * as ZooKeeperRecovery from "./ZooKeeperRecovery.js"
