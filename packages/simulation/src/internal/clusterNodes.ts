// The cluster's nodes as the simulation starts (and restarts) them: the master, with its store outliving it and
// its election, and the workers, each running its processes through the simulated process launcher and disk.
import { ExternalShuffleService } from "@kindling/executor"
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
  /**
   * Decommissions a running worker, by its signal or through the master (which must lead); once drained it exits,
   * and a new worker of its name starts `restartMillis` later. Whether it was asked.
   */
  readonly decommission: (name: string, via: "signal" | "master", restartMillis: number) => boolean
  /** The master's state, when it runs and answers. */
  readonly masterState: () => QueryMessages.MasterStateResponse | undefined
}

export const make = (world: World, election: Election, programs: SimProcesses.Programs): Nodes => {
  const store: Persistence.MemoryStore = new Map()
  let masterGeneration = 0
  let master: Master.Master | undefined
  const workers = new Map<string, Worker.Worker>()
  const restartAfter = new Map<string, number>()

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
    // A worker killed while it was being decommissioned is replaced by a new one, which is not.
    for (const decommission of world.decommissioned) {
      if (decommission.worker === name && decommission.end === undefined) {
        decommission.end = { kind: "replaced", at: world.sim.now() }
      }
    }
    world.sim.start(
      name,
      Effect.gen(function*() {
        const now = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
        const worker = yield* Worker.make({
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
          superviseInitialBackoffMillis: 200,
          validateState: true,
          onExit: (code, reason) => Effect.sync(() => exited(name, code, reason))
        })
        workers.set(name, worker)
        // Every worker runs a shuffle service; the apps that ask for it have it serve their map outputs.
        yield* ExternalShuffleService.serve({ disk: world.disk.disk, localDir: `/sim/${name}/local` })
        return yield* Simulation.forever
      }).pipe(
        Effect.provide(
          Layer.provideMerge(
            Runners.layerProcesses({
              workDir: `/sim/${name}`,
              localDir: `/sim/${name}/local`,
              shuffleService: {
                removeUnserved: (dir) => ExternalShuffleService.removeUnserved(world.disk.disk, dir)
              },
              driverTerminateTimeoutMillis,
              executorTerminateTimeoutMillis: 2_000,
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

  // A decommissioned worker that drained exits 0, as `kindling worker` does: its node stops, and a new worker of its
  // name starts later. Any other exit is a problem.
  const exited = (name: string, code: number, reason: string) => {
    const decommission = world.decommissioned.find((d) => d.worker === name && d.end === undefined)
    if (decommission === undefined || code !== 0) return void world.exits.push(`${name} exited with ${code}: ${reason}`)
    decommission.end = { kind: "exited", at: world.sim.now() }
    world.sim.at(0, () => {
      world.sim.node(name)?.kill()
      world.sim.at(restartAfter.get(name) ?? 0, () => world.sim.node(name)?.status === "killed" && startWorker(name))
    })
  }

  const decommission = (name: string, via: "signal" | "master", restartMillis: number) => {
    const node = world.sim.node(name)
    const worker = workers.get(name)
    if (node?.status !== "running" || worker === undefined) return false
    if (world.decommissioned.some((d) => d.worker === name && d.end === undefined)) return false
    if (via === "master") {
      // Through a leading master that has the worker alive, as `kindling decommission` would find it.
      const state = masterState()
      const known = state?.status === "ALIVE" && world.sim.node("master")?.status === "running" &&
        state.workers.some((w) => w.host === name && w.state === "ALIVE")
      if (!known || master === undefined) return false
    }
    // Noted first: a worker with nothing running exits as it hears.
    restartAfter.set(name, restartMillis)
    world.decommissioned.push({ worker: name, at: world.sim.now(), end: undefined })
    if (via === "master") world.sim.node("master")!.evaluate(master!.decommissionHosts([name]))
    else node.evaluate(worker.decommission)
    return true
  }

  const masterState = () => {
    const read = master === undefined ? undefined : world.sim.node("master")?.evaluate(master.state)
    return read !== undefined && Exit.isSuccess(read) ? read.value : undefined
  }

  return { startMaster, startWorker, decommission, masterState }
}
