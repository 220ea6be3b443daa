/**
 * `kindling executor`: the process a worker starts for each executor of an app, from the command of the app's
 * description (Spark's `CoarseGrainedExecutorBackend` main):
 *
 *     --driver-url kindling://CoarseGrainedScheduler@host:port --executor-id ID --hostname HOST --cores N
 *     --app-id APP --app ARTIFACT_URL [--worker-url URL]
 *
 * It listens on HOST, runs N task threads that import the app's artifact, registers with the driver and runs
 * what it is given until the driver tells it to stop or goes away. Its exit code says why it ended: 0 when told
 * to stop, 1 otherwise.
 *
 * Running this module is the point of importing it, so the package barrel does not re-export it.
 *
 * @since 0.1.0
 */
import { NodeLogging } from "@kindling/kernel"
import { ClusterMessages, Endpoints, Ids, RpcAddress, RpcEnv } from "@kindling/protocol"
import { NodeTransport } from "@kindling/protocol/node"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Executor from "./Executor.js"
import * as TaskThreads from "./TaskThreads.js"

const usage = "usage: executor --driver-url URL --executor-id ID --hostname HOST --cores N --app-id APP --app URL"

const options = (argv: ReadonlyArray<string>): Map<string, string> => {
  const found = new Map<string, string>()
  for (let i = 0; i + 1 < argv.length; i += 2) found.set(argv[i]!.replace(/^--/, ""), argv[i + 1]!)
  return found
}

const main = Effect.gen(function*() {
  const given = options(process.argv.slice(2))
  const required = (name: string) => {
    const value = given.get(name)
    if (value === undefined) throw new Error(`missing --${name}; ${usage}`)
    return value
  }
  const driverUrl = /^kindling:\/\/(?:[^@/]+@)?([^:/]+):(\d+)$/.exec(required("driver-url"))
  if (driverUrl === null) throw new Error(`not a driver URL: ${given.get("driver-url")}; ${usage}`)
  const cores = Number(required("cores"))
  const hostname = required("hostname")
  const exit = yield* Deferred.make<number>()
  yield* Effect.logInfo(`Started executor ${required("executor-id")} of ${required("app-id")} with ${cores} cores`)
  const threads = yield* TaskThreads.make({ size: cores, appUrl: required("app") })
  const driver = RpcAddress.make(driverUrl[1]!, Number(driverUrl[2]))
  yield* Effect.gen(function*() {
    // The app's settings for its executors, as Spark's executors fetch them before registering.
    const rpc = yield* RpcEnv.RpcEnv
    const config = yield* rpc.ask(
      Endpoints.ref(driver, Endpoints.scheduler),
      new ClusterMessages.RetrieveAppConfig({ resourceProfileId: 0 }),
      { timeout: 120_000 }
    )
    const setting = (key: string, fallback: number) => {
      const value = Number(config.properties.find(([name]) => name === key)?.[1])
      return Number.isFinite(value) && value > 0 ? value : fallback
    }
    yield* Executor.make({
      executorId: Ids.ExecutorId.make(required("executor-id")),
      driver,
      hostname,
      threads,
      heartbeatIntervalMillis: setting("kindling.executor.heartbeatInterval", 10_000),
      askTimeoutMillis: setting("kindling.rpc.askTimeout", 120_000),
      onExit: (code, reason) =>
        Effect.zipRight(
          code === 0 ? Effect.logInfo(reason) : Effect.logError(reason),
          Deferred.succeed(exit, code)
        )
    })
  }).pipe(
    // Built in the process's scope: the executor's network lives as long as the executor.
    Effect.provide(
      yield* Layer.build(RpcEnv.layer({ host: hostname, port: 0 }).pipe(Layer.provide(NodeTransport.layer)))
    )
  )
  return yield* Deferred.await(exit)
})

Effect.runPromiseExit(Effect.scoped(main).pipe(Effect.provide(NodeLogging.layer))).then((exit) => {
  if (exit._tag === "Success") process.exit(exit.value)
  process.stderr.write(`The executor failed: ${Cause.pretty(exit.cause)}\n`)
  process.exit(1)
})
