/**
 * @kindling/conf: Kindling's configuration — typed keys, declared by each package next to the code that reads
 * them, put together in registries and resolved from their sources into a `Conf` read with `conf.get(key)`. This
 * entry imports no `node:` module; the loader that reads files and the process's environment is
 * `@kindling/conf/node`.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as Conf from "./Conf.js"
/** @since 0.1.0 */
export * as Key from "./Key.js"
/** @since 0.1.0 */
export * as Problem from "./Problem.js"
/** @since 0.1.0 */
export * as Reference from "./Reference.js"
/** @since 0.1.0 */
export * as Registry from "./Registry.js"
/** @since 0.1.0 */
export * as Source from "./Source.js"
/** @since 0.1.0 */
export * as Spelling from "./Spelling.js"
/** @since 0.1.0 */
export * as ValueType from "./ValueType.js"
