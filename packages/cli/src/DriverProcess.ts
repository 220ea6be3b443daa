/**
 * The driver process of cluster deploy mode, started by a worker from the command `kindling submit --deploy-mode
 * cluster` put in the driver's description (Spark's `DriverWrapper` for an app):
 *
 *     <workerUrl> <artifact> <masterUrl> <configuration as JSON> [app args…]
 *
 * The artifact is the app bundled by `kindling submit`, fetched by the worker into the driver's directory; the
 * configuration is the submission's (`--conf`, `--executor-memory`, …). The app runs with its driver here and
 * its executors on the cluster; the exit code is 0 when it succeeded and 1 when it failed, the summary of its failure
 * (`AppModule.summary`) on stderr and in `WorkDirs.driverFailureFileName`, which its worker reports.
 *
 * It is this package's, not the driver's, because it composes the driver with what watches it: the app's UI and
 * event log (`ListenerConf`), which sit above the driver. The protocol still names it `@kindling/driver/main`
 * (`Descriptions.mainModules`); this installation resolves that name to this module (`ThisInstallation`).
 *
 * Running this module is the point of importing it, so the package barrel does not re-export it.
 *
 * @since 0.1.0
 */
import { NodeLoader } from "@kindling/conf/node"
import { AppModule, Cluster, DriverConf } from "@kindling/driver"
import { Installation, WorkDirs } from "@kindling/installation"
import { DiskOperations, NodeLogging } from "@kindling/kernel"
import { MasterUrl } from "@kindling/protocol"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import * as ListenerConf from "./ListenerConf.js"
import { installation } from "./ThisInstallation.js"

const usage = "usage: DriverProcess <workerUrl> <artifact> <masterUrl> <configuration JSON> [app args...]"

const [_workerUrl, artifact, masterUrl, settings, ...args] = process.argv.slice(2)
const artifactUrl = pathToFileURL(Path.resolve(artifact ?? "")).href

const main = Effect.gen(function*() {
  if (artifact === undefined || masterUrl === undefined || settings === undefined) {
    return yield* Effect.fail(usage)
  }
  const conf = yield* NodeLoader.load(DriverConf.appRegistry, {
    flags: JSON.parse(settings) as Record<string, string>
  })
  const masters = yield* MasterUrl.parse(masterUrl)
  yield* Effect.provide(
    Installation.link(installation, Path.dirname(Path.resolve(artifact))),
    DiskOperations.nodeFileSystem
  )
  const host = conf.get(DriverConf.keys.driverHost) ?? Os.hostname()
  // No progress bar: nobody watches a cluster-mode driver's stderr, which its worker writes to a file.
  const listeners = yield* ListenerConf.fromConf(conf, host, false)
  const runtime = yield* Cluster.fromConf(conf, {
    appName: conf.get(DriverConf.keys.appName) ?? Path.basename(artifact),
    masters,
    masterUrl,
    host,
    listeners,
    // The driver's reads and writes of s3:// paths go where the conf says, else where this process's environment does.
    objectStore: DriverConf.objectStore(conf, process.env)
  })
  return yield* AppModule.run({ url: artifactUrl, args, runtime })
})

// Why the driver failed, on stderr and where its worker reads it (`WorkDirs.driverFailureFileName`).
const failed = (summary: string) => {
  process.stderr.write(`${summary}\n`)
  try {
    Fs.writeFileSync(WorkDirs.driverFailureFileName, summary)
  } catch {
    // Its worker reports the end of its stderr instead.
  }
  process.exit(1)
}

// The exit is explicit: the app's result decides the driver's final state, whatever timers it left behind.
Effect.runPromise(Effect.either(main).pipe(Effect.provide(NodeLogging.layer))).then((outcome) => {
  if (outcome._tag === "Left") {
    const error = outcome.left
    return failed(typeof error === "string" ? error : `${error._tag}: ${error.message}`)
  }
  if (Exit.isSuccess(outcome.right)) return process.exit(0)
  failed(AppModule.summary(outcome.right.cause, artifactUrl, false))
})
