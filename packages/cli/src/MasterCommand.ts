/**
 * `kindling master`: starts a master and runs it until the process is stopped.
 *
 * @since 0.1.0
 */
import type { Conf } from "@kindling/conf"
import { KernelConf, TlsConf } from "@kindling/kernel"
import { WebServer } from "@kindling/kernel/web"
import {
  ArtifactStore,
  LeaderElection,
  Master,
  MasterConf,
  Persistence,
  RestServer,
  ZooKeeperRecovery
} from "@kindling/master"
import { MasterUi } from "@kindling/monitoring"
import { ProtocolConf, RpcEnv } from "@kindling/rpc"
import { NodeExposure, NodeTransport } from "@kindling/rpc/node"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Os from "node:os"
import packageJson from "../package.json" with { type: "json" }
import * as RestSubmissions from "./RestSubmissions.js"
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
 * Starts a master on `host:port` with the configuration given, in the current scope; `onExit` is called when the
 * master must stop (a failed write to its recovery store, a violated invariant).
 *
 * @since 0.1.0
 * @category running
 */
export const start = (options: {
  readonly conf: Conf.Conf<Settings.Keys>
  readonly host: string
  readonly port: number
  /** The UI's port, over the configuration's (0: any free one, as a local cluster's master takes). */
  readonly uiPort?: number
  readonly onExit: (code: number) => Effect.Effect<void>
}): Effect.Effect<Master.Master, Settings.Failure, Scope.Scope> =>
  Effect.gen(function*() {
    const { conf, host } = options
    const recoveryMode = conf.get(MasterConf.keys.recoveryMode)
    const recovery = recoveryLayers(yield* MasterConf.recovery(conf))
    const rpcOptions = yield* ProtocolConf.rpcOptions(conf)
    yield* Settings.checkRpcExposure(conf, "The master", host, rpcOptions.secret)
    const rpc = RpcEnv.layer({ ...rpcOptions, host, port: options.port }).pipe(
      Layer.provide(NodeTransport.layerFrom(conf))
    )
    const artifacts = ArtifactStore.layer(MasterConf.artifactOptions(conf))
    // The UI's port is bound first: the master tells workers and tools where its pages are.
    const tls = yield* TlsConf.serverTls(conf, "standalone")
    const ui = yield* WebServer.bind({
      name: "master UI",
      host,
      port: options.uiPort ?? conf.get(MasterConf.keys.uiPort),
      maxRetries: conf.get(KernelConf.keys.portMaxRetries),
      tls
    })
    const rest = conf.get(MasterConf.keys.restEnabled) ? yield* restServer(conf, host, tls) : undefined
    // Built in the caller's scope: the master's network and store live as long as it does (providing the layer
    // to `make` alone would close them as soon as it returned).
    const network = yield* Layer.build(rpc)
    const context = yield* Layer.build(
      Layer.merge(recovery(Context.get(network, RpcEnv.RpcEnv).address!.url), artifacts).pipe(
        Layer.provideMerge(Layer.succeedContext(network))
      )
    )
    const master = yield* Master.make({
      webUiUrl: ui.url,
      webUiPort: ui.port,
      restPort: rest?.port,
      ...MasterConf.coreConfig(conf),
      seed: Math.floor(Math.random() * 2 ** 31),
      validateState: conf.get(KernelConf.keys.validateState),
      onExit: options.onExit
    }).pipe(Effect.provide(context))
    if (rest !== undefined) {
      const artifactStore = Context.get(context, ArtifactStore.ArtifactStore)
      yield* rest.serve(master, RestSubmissions.make({ masterUrl: master.url, artifacts: artifactStore })).pipe(
        Effect.provide(context)
      )
      yield* Effect.logInfo(`Started REST server for submitting applications at ${rest.url}`)
    }
    yield* ui.serve(MasterUi.routes({
      master,
      killEnabled: conf.get(KernelConf.keys.uiKillEnabled),
      decommissionAllowMode: conf.get(MasterConf.keys.uiDecommissionAllowMode),
      historyUrl: conf.get(MasterConf.keys.historyUiUrl)
    }))
    yield* Effect.logInfo(`Starting Kindling master at ${master.url} (recovery mode ${recoveryMode}), UI at ${ui.url}`)
    return master
  })

// Where the master keeps its records and how it learns that it leads, given the master's URL, which a ZooKeeper
// candidate writes into its node.
const recoveryLayers = (recovery: MasterConf.Recovery) => (candidate: string) => {
  switch (recovery._tag) {
    case "NONE":
      return Layer.merge(Persistence.layerNone, LeaderElection.layerSingle)
    case "FILESYSTEM":
      return Layer.merge(
        Persistence.layerFileSystem(recovery.directory, { secret: recovery.secret }),
        LeaderElection.layerSingle
      )
    case "ZOOKEEPER":
      return ZooKeeperRecovery.layer({ ...recovery, candidate })
  }
}

// The REST port, bound before the master starts so that the master advertises the port it got.
const restServer = (conf: Conf.Conf<Settings.Keys>, host: string, tls: WebServer.Tls | undefined) =>
  RestServer.make({
    host: conf.get(MasterConf.keys.restHost) ?? host,
    port: conf.get(MasterConf.keys.restPort),
    maxRetries: conf.get(KernelConf.keys.portMaxRetries),
    secret: conf.get(ProtocolConf.keys.authenticateSecret),
    allowUnauthenticated: NodeExposure.optedOut(conf),
    allowedAppResourcePatterns: conf.get(MasterConf.keys.restAllowedAppResourcePatterns),
    maxRequestBodySize: conf.get(MasterConf.keys.restMaxRequestBodySize) * 2 ** 20,
    serverVersion: packageJson.version,
    tls
  })

/**
 * Runs a master until it must stop; the exit code says why.
 *
 * @since 0.1.0
 * @category running
 */
export const run = (args: Args): Effect.Effect<number, Settings.Failure> =>
  Effect.gen(function*() {
    const conf = yield* Settings.load({
      propertiesFile: args.propertiesFile,
      conf: args.conf,
      flags: { [MasterConf.keys.uiPort.name]: Option.getOrUndefined(Option.map(args.webuiPort, String)) }
    })
    const exit = yield* Effect.makeLatch(false)
    let code = 0
    yield* Effect.gen(function*() {
      yield* start({
        conf,
        host: Option.getOrElse(args.host, () => Os.hostname()),
        port: args.port,
        onExit: (exitCode) =>
          Effect.sync(() => {
            code = exitCode
          }).pipe(Effect.zipRight(exit.open))
      })
      yield* exit.await
    }).pipe(Effect.scoped)
    return code
  })
