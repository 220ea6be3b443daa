/**
 * @kindling/cli: the `kindling` command.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as Cli from "./Cli.js"
/** @since 0.1.0 */
export * as Settings from "./Settings.js"

/** @since 0.1.0 */
export * as ClosureHoisting from "./ClosureHoisting.js"

/** @since 0.1.0 */
export * as EffectImports from "./EffectImports.js"
