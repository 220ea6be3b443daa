// What the simulated cluster runs: a client submitting drivers (and killing some), apps that only hold executors
// for a while, and the executor program the workers start for computing apps. Everything a run draws for its
// plan is drawn here, in a fixed order, so that a seed always makes the same plan.
import { ExecutorProcess, InlineTasks } from "@kindling/executor"
import { Simulation } from "@kindling/kernel/testing"
import { AppClientMessages, Descriptions, Endpoints, type Ids } from "@kindling/protocol"
import { MasterClient, RpcEnv, type Transport } from "@kindling/rpc"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import type * as Scope from "effect/Scope"
import * as SimProcesses from "../SimProcesses.js"
import { masterAddress } from "./clusterNodes.js"
import type { World } from "./clusterWorld.js"

/** What a node of the simulation runs. */
type Program = Effect.Effect<unknown, unknown, Transport.Transport | Scope.Scope>

export interface Submission {
  readonly at: number
  readonly behaviour: SimProcesses.Behaviour
  readonly supervise: boolean
  /** When after its submission the client kills it, or -1. */
  readonly kill: number
}

/** The drivers the client submits, in the order it submits them. */
export const drawSubmissions = (world: World): ReadonlyArray<Submission> =>
  Array.from({ length: world.options.submissions ?? 8 }, (_, i) => {
    const supervise = world.random() < 0.3
    const behaviour: SimProcesses.Behaviour = {
      runMillis: world.between(500, 15_000),
      exitCode: supervise || world.random() < 0.8 ? 0 : 1,
      failingRuns: supervise ? world.between(0, 2) : 0,
      obeysTerm: world.random() < 0.9,
      token: `t${i}`
    }
    return {
      at: world.between(500, 40_000),
      behaviour,
      supervise,
      kill: world.random() < 0.15 ? world.between(1_000, 10_000) : -1
    }
  }).sort((a, b) => a.at - b.at)

const description = (behaviour: SimProcesses.Behaviour, supervise: boolean) =>
  new Descriptions.DriverDescription({
    appUrl: "file:///sim/app.mjs",
    mem: 512,
    cores: 1,
    supervise,
    command: new Descriptions.Command({
      mainModule: "@kindling/worker/DriverWrapper",
      arguments: ["{{WORKER_URL}}", "{{USER_JAR}}", SimProcesses.behaviourArg(behaviour)],
      environment: {},
      nodeOptions: []
    }),
    resourceReqs: []
  })

/** The client: submits each driver when its time comes (again until the master takes it), and kills some. */
export const client = (world: World, submissions: ReadonlyArray<Submission>): Program =>
  Effect.gen(function*() {
    const masters = yield* MasterClient.make([masterAddress], { timeout: "5 seconds" })
    let elapsed = 0
    for (const submission of submissions) {
      yield* Effect.sleep(Math.max(0, submission.at - elapsed))
      elapsed = submission.at
      // Until the master takes it: a master that is down, recovering or unreachable is asked again. An attempt
      // whose answer was lost may still have been taken, so each attempt is work of its own (its own token).
      for (let attempt = 0; attempt < 20; attempt++) {
        const behaviour = { ...submission.behaviour, token: `${submission.behaviour.token}.${attempt}` }
        const answer = yield* Effect.exit(masters.submitDriver(description(behaviour, submission.supervise)))
        if (Exit.isSuccess(answer)) {
          const driverId = Option.getOrThrow(answer.value.driverId)
          if (submission.kill >= 0) {
            yield* Effect.fork(
              Effect.zipRight(
                Effect.sleep(submission.kill),
                Effect.suspend(() => {
                  world.killRequested.add(driverId)
                  return Effect.exit(masters.killDriver(driverId))
                })
              )
            )
          }
          break
        }
        yield* Effect.sleep(2_000)
      }
    }
    return yield* Simulation.forever
  }).pipe(Effect.provide(RpcEnv.layer({})))

// An application that holds executors for a while: it registers (again every few seconds until registered),
// answers master changes, and unregisters when it is done. Its executors run until they are killed.
export interface HoldingApp {
  readonly name: string
  readonly at: number
  readonly runs: number
  readonly maxCores: number
  readonly coresPerExecutor: Option.Option<number>
}

export const drawApps = (world: World): ReadonlyArray<HoldingApp> =>
  Array.from({ length: world.options.apps ?? 2 }, (_, i) => ({
    name: `app-${i + 1}`,
    at: world.between(1_000, 30_000),
    runs: world.between(10_000, 50_000),
    maxCores: world.between(2, 8),
    coresPerExecutor: world.random() < 0.5 ? Option.some(world.between(1, 2)) : Option.none<number>()
  }))

export const appProgram = (world: World, app: HoldingApp): Program =>
  Effect.gen(function*() {
    const rpc = yield* RpcEnv.RpcEnv
    const self = Endpoints.ref(rpc.address!, Endpoints.appClient)
    const masterRef = Endpoints.ref(masterAddress, Endpoints.master)
    let appId: Ids.AppId | undefined
    yield* rpc.register(Endpoints.appClient.name, {
      inbound: Endpoints.appClient.inbound,
      handlers: {
        RegisteredApplication: (message) =>
          Effect.sync(() => {
            appId = message.appId
          }),
        ExecutorAdded: () => Effect.void,
        ExecutorUpdated: () => Effect.void,
        WorkerRemoved: () => Effect.void,
        ApplicationRemoved: (message) => Effect.logWarning(`${app.name} removed by the master: ${message.message}`),
        MasterChanged: (message) =>
          appId === undefined
            ? Effect.void
            : Effect.ignore(rpc.send(message.master, new AppClientMessages.MasterChangeAcknowledged({ appId })))
      }
    })
    const description = new Descriptions.ApplicationDescription({
      name: app.name,
      maxCores: Option.some(app.maxCores),
      memoryPerExecutorMB: 1024,
      command: new Descriptions.Command({
        mainModule: "@kindling/executor/main",
        arguments: [
          "{{EXECUTOR_ID}}",
          SimProcesses.behaviourArg({
            runMillis: 10_000_000,
            exitCode: 0,
            failingRuns: 0,
            obeysTerm: true,
            token: app.name
          })
        ],
        environment: {},
        nodeOptions: []
      }),
      appUiUrl: "",
      eventLogDir: Option.none(),
      eventLogCodec: Option.none(),
      coresPerExecutor: app.coresPerExecutor,
      initialExecutorLimit: Option.none(),
      user: "sim",
      resourceReqsPerExecutor: []
    })
    yield* Effect.sleep(app.at)
    for (let attempt = 0; attempt < 10 && appId === undefined; attempt++) {
      yield* Effect.ignore(
        rpc.send(masterRef, new AppClientMessages.RegisterApplication({ appDescription: description, driver: self }))
      )
      yield* Effect.sleep(3_000)
    }
    yield* Effect.sleep(app.runs)
    if (appId !== undefined) {
      yield* Effect.ignore(rpc.send(masterRef, new AppClientMessages.UnregisterApplication({ appId })))
    }
    // Then it stops, as a driver process does: its connections close, which ends the app even for a master
    // that missed the unregistration (it was down, say).
    world.appsEnded.set(app.name, yield* Effect.clockWith((clock) => clock.currentTimeMillis))
  }).pipe(Effect.provide(RpcEnv.layer({ host: app.name, port: 6000 })))

// The workers start the real executor program for them, on inline tasks that take a while on simulated time
// (one in twenty is a straggler) and on the simulated disk, in their work dirs. Each executor run goes in the
// ledger under its app's name, which is its driver's host.
export const executorPrograms = (world: World): SimProcesses.Programs => {
  const taskDuration = Effect.flatMap(
    Random.next,
    (draw) => draw < 0.05 ? Random.nextIntBetween(2_000, 6_000) : Random.nextIntBetween(5, 400)
  )
  return {
    sim: world.sim,
    programFor: (args, _host, workDir, variables) => {
      // An executor command that carries a behaviour is one of the apps that only hold executors: simulated.
      const at = args.indexOf("@kindling/executor/main")
      if (at < 0 || SimProcesses.carriesBehaviour(args)) return undefined
      const argv = args.slice(at + 1)
      return {
        token: /@([^:/]+):/.exec(argv[argv.indexOf("--driver-url") + 1] ?? "")?.[1] ?? "?",
        program: Effect.scoped(ExecutorProcess.run(argv, {
          tasks: (size) => InlineTasks.make({ size, duration: taskDuration, files: world.disk.disk }),
          network: (host) => RpcEnv.layer({ host, port: 0 }),
          disk: world.disk.disk,
          workDir,
          variables,
          validateState: true
        }))
      }
    }
  }
}
