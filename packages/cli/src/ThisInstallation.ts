/**
 * The Kindling installation this command belongs to, as the package composing every node sees it: the one that
 * depends on the driver, executor and worker packages whose entry modules a worker starts, and on the packages an
 * app artifact imports.
 *
 * @since 0.1.0
 */
import { Installation } from "@kindling/installation"
import { Descriptions } from "@kindling/protocol"

// The protocol names the cluster-mode driver's entry `@kindling/driver/main` (`Descriptions.mainModules`), the name
// clients send and masters store. Its process is this package's (`DriverProcess`): it runs the driver with what
// watches it (its UI and event log, `@kindling/monitoring`), which sit above the driver package and which only the
// package composing the nodes may put together with it.
const entries: Readonly<Record<string, string>> = {
  [Descriptions.mainModules.driver[0]]: "@kindling/cli/DriverProcess"
}

/**
 * @since 0.1.0
 */
export const installation: Installation.Installation = Installation.make({
  url: import.meta.url,
  resolve: (specifier) => import.meta.resolve(entries[specifier] ?? specifier)
})
