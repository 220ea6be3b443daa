/**
 * The Kindling installation this command belongs to, as the package composing every node sees it: the one that
 * depends on the driver, executor and worker packages whose entry modules a worker starts, and on the packages an
 * app artifact imports.
 *
 * @since 0.1.0
 */
import { Installation } from "@kindling/installation"

/**
 * @since 0.1.0
 */
export const installation: Installation.Installation = Installation.make(import.meta)
