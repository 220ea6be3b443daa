// The cluster's nodes as the simulation starts (and restarts) them: the master, with its store outliving it and
// its election, and the workers, each running its processes through the simulated process launcher and disk.
import { Installation } from "@kindling/installation"
import { Simulation } from "@kindling/kernel/testing"
import { ArtifactStore, Master, Persistence } from "@kindling/master"
import { Ids, type QueryMessages, RpcAddress } from "@kindling/protocol"
import { RpcEnv } from "@kindling/rpc"
import { ProcessLauncher, Runners, Worker } from "@kindling/worker"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as SimProcesses from "../SimProcesses.js"
import type { Election } from "./clusterElection.js"
import type { World } from "./clusterWorld.js"

export const masterAddress = RpcAddress.make("master", 7077)
export const workerPort = 7078
export const workerTimeoutMillis = 10_000
export const driverTerminateTimeoutMillis = 2_000
/** The workers' lease, as `kindling worker` sets it by default: twice the worker timeout. */
export const driverLeaseMillis = 2 * workerTimeoutMillis

// The workers' processes are simulated programs, named by their entry modules as they are; the packages linked
// into an executor's work dir (on the simulated disk) are this installation's.
const simulatedInstallation: Installation.Installation = {
  packages: Installation.make(import.meta).packages,
  resolveModule: (specifier) => specifier
}

export interface Nodes {
  readonly startMaster: () => void
  readonly startWorker: (name: string) => void
  /** The master's state, when it runs and answers. */
  readonly masterState: () => QueryMessages.MasterStateResponse | undefined
}

export const make = (world: World, election: Election, programs: SimProcesses.Programs): Nodes => {
  const store: Persistence.MemoryStore = new Map()
  let masterGeneration = 0
  let master: Master.Master | undefined

  const startMaster = () => {
    masterGeneration++
    world.sim.start(
      "master",
      Effect.gen(function*() {
        master = yield* Master.make({
          webUiUrl: "http://master:8080",
          webUiPort: 8080,
          restPort: undefined,
          workerTimeoutMillis,
          deadWorkerPersistence: 15,
          recoveryTimeoutMillis: workerTimeoutMillis,
          retainedApplications: 200,
          retainedDrivers: 200,
          spreadOut: true,
          defaultCores: Infinity,
          maxExecutorRetries: 10,
          seed: world.options.seed + masterGeneration,
          validateState: true,
          onExit: (code) => Effect.sync(() => world.exits.push(`master exited with ${code}`)),
          ...world.options.master
        })
        return yield* Simulation.forever
      }).pipe(
        Effect.provide(
          Layer.mergeAll(
            RpcEnv.layer({ host: masterAddress.host, port: masterAddress.port }),
            Persistence.layerMemory(store),
            election.layer,
            ArtifactStore.layerNone
          )
        )
      )
    )
  }

  const startWorker = (name: string) => {
    world.sim.start(
      name,
      Effect.gen(function*() {
        const now = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
        yield* Worker.make({
          workerId: Ids.makeWorkerId(new Date(now), name, workerPort),
          cores: 4,
          memory: 8192,
          masters: [masterAddress],
          webUiUrl: `http://${name}:8081`,
          workDir: `/sim/${name}`,
          workerTimeoutMillis,
          registration: {
            initialIntervalMillis: 1000,
            initialAttempts: 6,
            prolongedIntervalMillis: 5000,
            maxAttempts: 1000
          },
          fuzz: 0.5 + world.random(),
          cleanup: { enabled: false, intervalMillis: 1_800_000, appDataTtlMillis: 604_800_000 },
          retainedExecutors: 100,
          retainedDrivers: 100,
          // Timeouts are shortened here, and the window in which a worker keeps telling an executor's state
          // before it exits (Spark's behaviour) with them: by default it is 10 times the worker timeout (5 asks of
          // 120 s against 60 s), here 20 asks of 5 s against 10 s. A narrower one takes a master that is only
          // slow for a while (killed and restarted, then paused) for one that will never hear.
          executorStateSyncMaxAttempts: 20,
          askTimeoutMillis: 5_000,
          driverFencing: { leaseMillis: driverLeaseMillis, terminateMillis: driverTerminateTimeoutMillis },
          validateState: true,
          onExit: (code, reason) => Effect.sync(() => world.exits.push(`${name} exited with ${code}: ${reason}`))
        })
        return yield* Simulation.forever
      }).pipe(
        Effect.provide(
          Layer.provideMerge(
            Runners.layerProcesses({
              workDir: `/sim/${name}`,
              localDir: `/sim/${name}/local`,
              driverTerminateTimeoutMillis,
              executorTerminateTimeoutMillis: 2_000,
              superviseInitialBackoffMillis: 200,
              installation: simulatedInstallation
            }).pipe(
              Layer.provide(
                Layer.succeed(ProcessLauncher.ProcessLauncher, SimProcesses.launcher(name, world.ledger, programs))
              ),
              Layer.provide(world.disk.fileSystem)
            ),
            RpcEnv.layer({ host: name, port: workerPort })
          )
        )
      )
    )
  }

  const masterState = () => {
    const read = master === undefined ? undefined : world.sim.node("master")?.evaluate(master.state)
    return read !== undefined && Exit.isSuccess(read) ? read.value : undefined
  }

  return { startMaster, startWorker, masterState }
}
