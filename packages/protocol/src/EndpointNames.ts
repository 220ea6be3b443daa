/**
 * The names under which each role registers its endpoint, as in Spark.
 *
 * @since 0.1.0
 */

/**
 * @since 0.1.0
 * @category constants
 */
export const master = "Master"

/**
 * @since 0.1.0
 * @category constants
 */
export const worker = "Worker"

/**
 * The driver-side endpoint that talks to masters on behalf of an application.
 *
 * @since 0.1.0
 * @category constants
 */
export const appClient = "AppClient"

/**
 * The driver's scheduler backend, which executors register with.
 *
 * @since 0.1.0
 * @category constants
 */
export const scheduler = "CoarseGrainedScheduler"

/**
 * @since 0.1.0
 * @category constants
 */
export const executor = "Executor"
