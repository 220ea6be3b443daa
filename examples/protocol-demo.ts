// `pnpm demo`: two Kindling nodes on 127.0.0.1 — a master and a worker — and a submission client walk through
// the first steps of Spark's submission flow over real TCP, and every message is printed as it is received.
// The worker here only reports what a real one would; running drivers comes with the control plane.
import {
  Codec,
  Descriptions,
  EndpointNames,
  Endpoints,
  Ids,
  RpcEnv,
  SubmissionMessages,
  WorkerMessages
} from "@kindling/protocol"
import { NodeTransport } from "@kindling/protocol/node"
import { Deferred, Effect, Either, Logger, LogLevel, Option, Schema } from "effect"

const started = performance.now()

const summary = (message: Codec.Message): string => {
  const encoded = Either.getOrElse(Codec.encodeMessage(message), () => ({})) as Record<string, unknown>
  const { _tag, ...fields } = encoded
  const text = JSON.stringify(fields)
  return `${String(_tag)} ${text.length > 110 ? `${text.slice(0, 107)}...` : text}`
}

const trace = (from: string, to: string, message: Codec.Message) =>
  Effect.sync(() => {
    const at = (performance.now() - started).toFixed(1).padStart(7)
    console.log(`${at} ms  ${from.padEnd(7)} → ${to.padEnd(7)} ${summary(message)}`)
  })

const program = Effect.gen(function*() {
  const masterRpc = yield* RpcEnv.make({ host: "127.0.0.1", port: 0 })
  const workerRpc = yield* RpcEnv.make({ host: "127.0.0.1", port: 0 })
  const client = yield* RpcEnv.make({})
  const master = Endpoints.ref(masterRpc.address!, Endpoints.master)
  const worker = Endpoints.ref(workerRpc.address!, Endpoints.worker)
  const workerId = Ids.makeWorkerId(new Date(), worker.address.host, worker.address.port)
  const finished = yield* Deferred.make<void>()
  let driverCounter = 0
  console.log(`master listening at ${masterRpc.address!.url}, worker at ${workerRpc.address!.url}\n`)

  yield* masterRpc.register(EndpointNames.master, {
    inbound: Schema.Union(WorkerMessages.WorkerToMaster, SubmissionMessages.RequestSubmitDriver),
    handlers: {
      RegisterWorker: (message) =>
        trace("worker", "master", message).pipe(
          Effect.zipRight(masterRpc.send(
            message.worker,
            new WorkerMessages.RegisteredWorker({
              master,
              masterWebUiUrl: "http://127.0.0.1:8080",
              masterAddress: message.masterAddress,
              duplicate: false
            })
          )),
          Effect.orDie
        ),
      Heartbeat: (message) => trace("worker", "master", message),
      ExecutorStateChanged: (message) => trace("worker", "master", message).pipe(Effect.as(true)),
      DriverStateChanged: (message) =>
        trace("worker", "master", message).pipe(Effect.zipRight(Deferred.succeed(finished, undefined))),
      WorkerSchedulerStateResponse: (message) => trace("worker", "master", message),
      WorkerLatestState: (message) => trace("worker", "master", message),
      WorkerDecommissioning: (message) => trace("worker", "master", message),
      RequestSubmitDriver: (message) =>
        Effect.gen(function*() {
          yield* trace("client", "master", message)
          const driverId = Ids.makeDriverId(new Date(), driverCounter++)
          yield* masterRpc.send(
            worker,
            new WorkerMessages.LaunchDriver({ driverId, driverDesc: message.driverDescription, resources: {} })
          ).pipe(Effect.orDie)
          return new SubmissionMessages.SubmitDriverResponse({
            master,
            success: true,
            driverId: Option.some(driverId),
            message: `Driver successfully submitted as ${driverId}`
          })
        })
    }
  })
  yield* workerRpc.register(EndpointNames.worker, {
    inbound: WorkerMessages.MasterToWorker,
    handlers: {
      RegisteredWorker: (message) =>
        trace("master", "worker", message).pipe(
          Effect.zipRight(workerRpc.send(master, new WorkerMessages.Heartbeat({ workerId, worker }))),
          Effect.zipRight(
            workerRpc.send(master, new WorkerMessages.WorkerLatestState({ id: workerId, executors: [], driverIds: [] }))
          ),
          Effect.orDie
        ),
      LaunchDriver: (message) =>
        trace("master", "worker", message).pipe(
          Effect.zipRight(workerRpc.send(
            master,
            new WorkerMessages.DriverStateChanged({
              driverId: message.driverId,
              state: "FINISHED",
              exception: Option.none()
            })
          )),
          Effect.orDie
        ),
      RegisterWorkerFailed: (message) => trace("master", "worker", message),
      MasterInStandby: (message) => trace("master", "worker", message),
      ReconnectWorker: (message) => trace("master", "worker", message),
      KillExecutor: (message) => trace("master", "worker", message),
      LaunchExecutor: (message) => trace("master", "worker", message),
      KillDriver: (message) => trace("master", "worker", message),
      ApplicationFinished: (message) => trace("master", "worker", message),
      DecommissionWorker: (message) => trace("master", "worker", message),
      MasterChanged: (message) => trace("master", "worker", message)
    }
  })

  yield* workerRpc.send(
    master,
    new WorkerMessages.RegisterWorker({
      id: workerId,
      host: worker.address.host,
      port: worker.address.port,
      worker,
      cores: 4,
      memory: 2048,
      workerWebUiUrl: "http://127.0.0.1:8081",
      masterAddress: master.address,
      resources: {}
    })
  )
  yield* Effect.sleep("50 millis")
  const reply = yield* client.ask(
    master,
    new SubmissionMessages.RequestSubmitDriver({
      driverDescription: new Descriptions.DriverDescription({
        appUrl: "file:///apps/wordcount.js",
        mem: 1024,
        cores: 1,
        supervise: false,
        command: new Descriptions.Command({
          mainModule: "@kindling/worker/driver-wrapper",
          arguments: ["{{WORKER_URL}}", "{{USER_JAR}}"],
          environment: {},
          nodeOptions: []
        }),
        resourceReqs: []
      })
    })
  )
  yield* trace("master", "client", reply)
  yield* Deferred.await(finished).pipe(Effect.timeout("5 seconds"))
  console.log(`\n${reply.message}; the worker reported it FINISHED.`)
}).pipe(
  Effect.scoped,
  Effect.provide(NodeTransport.layer),
  Logger.withMinimumLogLevel(LogLevel.Warning)
)

Effect.runPromise(program).catch((error) => {
  console.error(error)
  process.exitCode = 1
})
