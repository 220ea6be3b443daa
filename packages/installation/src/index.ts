/**
 * @kindling/installation: the Kindling installation a node runs from — which of its packages an app artifact
 * imports (linked beside the artifact, so that there is one copy of `effect` at run time), the files of the entry
 * modules a worker starts drivers and executors with, and the layout of the work directories the roles share.
 * It sits below every role and imports none of them: the installation's packages are resolved by the package
 * that composes a node, which is the one that depends on them. `@kindling/installation/WorkDirs` is the layout
 * alone, for a process that needs nothing else of this package (an executor), and
 * `@kindling/installation/Directories` how every node makes directories, for a task thread.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as Directories from "./Directories.js"
/** @since 0.1.0 */
export * as Installation from "./Installation.js"
/** @since 0.1.0 */
export * as WorkDirs from "./WorkDirs.js"
