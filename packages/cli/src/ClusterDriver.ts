/**
 * The driver of cluster deploy mode, however it is submitted: the app bundled into an artifact (`Artifact`) that
 * the master stores, run by a worker with `@kindling/driver/main` and the submission's configuration, with the
 * driver's memory, cores and supervision from that configuration. `kindling submit` builds it from its command
 * line (and uploads the artifact), the master's REST server from a `CreateSubmissionRequest` (and stores the
 * artifact itself), so both run the same driver.
 *
 * @since 0.1.0
 */
import type { Conf } from "@kindling/conf"
import { DriverConf } from "@kindling/driver"
import { TemporaryDirectory } from "@kindling/kernel"
import { Descriptions } from "@kindling/protocol"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Path from "node:path"
import * as Artifact from "./Artifact.js"

/**
 * The module a worker runs for a cluster-mode driver: `<workerUrl> <artifact> <masterUrl> <settings JSON> [args…]`.
 *
 * @since 0.1.0
 * @category constants
 */
export const mainModule = Descriptions.mainModules.driver[0]

/**
 * Bundles the app at `path` into a temporary directory of the scope; answers the artifact's path and the name
 * it is stored under (`<app>.mjs`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const bundle = (
  path: string
): Effect.Effect<{ readonly artifact: string; readonly name: string }, Artifact.AppBuildFailed, Scope.Scope> =>
  Effect.gen(function*() {
    const artifact = yield* Artifact.build(path, yield* TemporaryDirectory.make("kindling-submit-"))
    return { artifact, name: `${Path.parse(path).name}.mjs` }
  })

/**
 * The keys a driver reads, as the submission set them. Defaults are left to the driver, and secrets are never
 * put on a command line: the driver has them from its worker's environment.
 *
 * @since 0.1.0
 * @category constructors
 */
export const settings = (conf: Conf.Conf<DriverConf.AppKeys>): Record<string, string> =>
  Object.fromEntries(
    conf.entries
      .filter((entry) => entry.source !== "default" && DriverConf.appRegistry.byName.has(entry.key))
      .filter((entry) => DriverConf.appRegistry.byName.get(entry.key)?.secret !== true)
      .map((entry) => [entry.key, entry.value])
  )

/**
 * The description of the driver that runs the stored artifact `appUrl` with `args`, registering with `master`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const description = (options: {
  readonly appUrl: string
  readonly master: string
  readonly conf: Conf.Conf<DriverConf.AppKeys>
  readonly args: ReadonlyArray<string>
  /** Variables the driver's process gets besides its worker's. */
  readonly environment?: Readonly<Record<string, string>>
}): Descriptions.DriverDescription => {
  const { conf } = options
  const appName = conf.get(DriverConf.keys.appName)
  return new Descriptions.DriverDescription({
    appUrl: options.appUrl,
    mem: conf.get(DriverConf.keys.driverMemory),
    cores: conf.get(DriverConf.keys.driverCores),
    supervise: conf.get(DriverConf.keys.driverSupervise),
    command: new Descriptions.Command({
      mainModule,
      arguments: ["{{WORKER_URL}}", "{{USER_JAR}}", options.master, JSON.stringify(settings(conf)), ...options.args],
      environment: { ...options.environment, ...(appName === undefined ? {} : { KINDLING_APP_NAME: appName }) },
      nodeOptions: []
    }),
    resourceReqs: []
  })
}
