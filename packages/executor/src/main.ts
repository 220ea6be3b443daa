/**
 * `kindling executor`: the process a worker starts for each executor of an app, from the command of the app's
 * description (Spark's `CoarseGrainedExecutorBackend` main):
 *
 *     --driver-url kindling://CoarseGrainedScheduler@host:port --executor-id ID --hostname HOST --cores N
 *     --app-id APP --app ARTIFACT_URL [--worker-url URL]
 *
 * It listens on HOST, runs N task threads that import the app's artifact, registers with the driver and runs
 * what it is given until the driver tells it to stop or goes away (`ExecutorProcess`). Its exit code says why it
 * ended: 0 when told to stop, 1 otherwise.
 *
 * Running this module is the point of importing it, so the package barrel does not re-export it.
 *
 * @since 0.1.0
 */
import { Registry } from "@kindling/conf"
import { NodeLoader } from "@kindling/conf/node"
import { NodeLogging } from "@kindling/kernel"
import { ProtocolConf, RpcEnv } from "@kindling/rpc"
import { NodeTransport } from "@kindling/rpc/node"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ExecutorProcess from "./role/ExecutorProcess.js"
import * as TaskThreads from "./tasks/TaskThreads.js"

// The network settings (the cluster's secret and whether to encrypt above all) come from the environment the worker gives executors.
const main = Effect.gen(function*() {
  const conf = yield* NodeLoader.load(Registry.make(ProtocolConf.group), { unknownKeys: "ignore" })
  const rpc = yield* ProtocolConf.rpcOptions(conf)
  return yield* ExecutorProcess.run(process.argv.slice(2), {
    tasks: (size, appUrl) => TaskThreads.make({ size, appUrl }),
    network: (host) => RpcEnv.layer({ ...rpc, host, port: 0 }).pipe(Layer.provide(NodeTransport.layerFrom(conf)))
  })
})

Effect.runPromiseExit(Effect.scoped(main).pipe(Effect.provide(NodeLogging.layer))).then((exit) => {
  if (exit._tag === "Success") process.exit(exit.value)
  process.stderr.write(`The executor failed: ${Cause.pretty(exit.cause)}\n`)
  process.exit(1)
})
