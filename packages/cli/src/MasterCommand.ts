/**
 * `kindling master`: starts a master and runs it until the process is stopped.
 *
 * @since 0.1.0
 */
import { LeaderElection, Master, Persistence } from "@kindling/master"
import { RpcEnv } from "@kindling/protocol"
import { NodeTransport } from "@kindling/protocol/node"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import * as Os from "node:os"
import * as Settings from "./Settings.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Args {
  readonly host: Option.Option<string>
  readonly port: number
  readonly webuiPort: Option.Option<number>
  readonly propertiesFile: Option.Option<string>
  readonly conf: ReadonlyArray<string>
}

/**
 * @since 0.1.0
 * @category running
 */
export const run = (args: Args): Effect.Effect<number, Settings.Failure> =>
  Effect.gen(function*() {
    const conf = yield* Settings.load({
      propertiesFile: args.propertiesFile,
      conf: args.conf,
      flags: { "kindling.master.ui.port": args.webuiPort._tag === "Some" ? String(args.webuiPort.value) : undefined }
    })
    const host = args.host._tag === "Some" ? args.host.value : Os.hostname()
    if (conf.recoveryMode === "FILESYSTEM" && conf.recoveryDirectory === "") {
      return yield* new Settings.UsageError({
        message: "kindling.deploy.recoveryMode is FILESYSTEM but kindling.deploy.recoveryDirectory is not set"
      })
    }
    const persistence = conf.recoveryMode === "FILESYSTEM"
      ? Persistence.layerFileSystem(conf.recoveryDirectory)
      : Persistence.layerNone
    const rpc = RpcEnv.layer({ ...(yield* Settings.rpcOptions(conf)), host, port: args.port }).pipe(
      Layer.provide(NodeTransport.layer)
    )
    const exit = yield* Effect.makeLatch(false)
    let code = 0
    yield* Effect.gen(function*() {
      const master = yield* Master.make({
        webUiUrl: `http://${host}:${conf.masterUiPort}`,
        webUiPort: conf.masterUiPort,
        restPort: conf.restEnabled ? conf.restPort : undefined,
        workerTimeoutMillis: conf.workerTimeoutMillis,
        deadWorkerPersistence: conf.deadWorkerPersistence,
        recoveryTimeoutMillis: conf.recoveryTimeoutMillis,
        retainedApplications: conf.retainedApplications,
        retainedDrivers: conf.retainedDrivers,
        spreadOut: conf.spreadOut,
        defaultCores: conf.defaultCores,
        maxExecutorRetries: conf.maxExecutorRetries,
        seed: Math.floor(Math.random() * 2 ** 31),
        onExit: (exitCode) =>
          Effect.sync(() => {
            code = exitCode
          }).pipe(Effect.zipRight(exit.open))
      })
      yield* Effect.logInfo(`Starting Kindling master at ${master.url} (recovery mode ${conf.recoveryMode})`)
      yield* exit.await
    }).pipe(
      Effect.scoped,
      Effect.provide(Layer.mergeAll(rpc, persistence, LeaderElection.layerSingle))
    )
    return code
  })
