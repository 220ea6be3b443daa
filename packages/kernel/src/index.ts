/**
 * @kindling/kernel: the role kernel — the contract every role's core follows (`Core`) and the one Effect shell
 * that hosts any core on an RpcEnv (`Shell`).
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as Core from "./Core.js"
/** @since 0.1.0 */
export * as DiskError from "./DiskError.js"
/** @since 0.1.0 */
export * as DiskOperations from "./DiskOperations.js"
/** @since 0.1.0 */
export * as KernelConf from "./KernelConf.js"
/** @since 0.1.0 */
export * as TlsConf from "./TlsConf.js"
/** @since 0.1.0 */
export * as KernelInputs from "./KernelInputs.js"
/** @since 0.1.0 */
export * as ModuleLoading from "./ModuleLoading.js"
/** @since 0.1.0 */
export * as NodeLogging from "./NodeLogging.js"
/** @since 0.1.0 */
export * as Retention from "./Retention.js"
/** @since 0.1.0 */
export * as Shell from "./Shell.js"

/**
 * @since 0.1.0
 */
export * as TemporaryDirectory from "./TemporaryDirectory.js"
