/**
 * A whole Kindling cluster in the simulated world: a master (with recovery from a store that outlives it), N
 * workers running simulated processes, and a client that submits and kills drivers — all real nodes (RpcEnv,
 * shells, cores) — under a seeded schedule of faults: workers killed and restarted, nodes paused, the master
 * killed and recovered, leadership revoked and won back (as a ZooKeeper session lost and a new one elected),
 * partitions, broken connections, duplicated and delayed frames. After the faults heal,
 * the cluster is checked:
 *
 * - no node stopped on a violated invariant (every master and worker validates its state after every step);
 * - every driver the master accepted reached a final state exactly once: its chain of relaunches ends in one
 *   FINISHED, FAILED, KILLED or ERROR record, and nothing of it is still active;
 * - no driver ran in two processes at once, and every process (driver or executor) ended;
 * - a healthy worker — never killed, paused, partitioned or cut off — is never taken for dead: its processes are
 *   only stopped when their driver was killed or their app ended, its drivers end in the state their processes
 *   ended in, and a driver that succeeded is never run again;
 * - every application ended, none of its executors is left, and every worker's cores and memory are free;
 * - every job of a computing app (`ComputingApps`) — a real driver whose executors are real executors
 *   (`ExecutorProcess`) started by the workers, running a random program (`Lineages`) with its shuffles, spills,
 *   persisted blocks, broadcasts, accumulators, input and output on the simulated disks (`SimDisk`) — ended
 *   exactly once, with the oracle's answer, cancelled, or with a typed failure whose cause the run injected; the
 *   driver's event stream is whole; no executor broke an invariant;
 * - no file of an executor (shuffle output, spill, block, fetched block) is left on a worker once its apps ended.
 *
 * Besides the cluster's faults, the engine's: a worker's disk full for a while, a map output rotten or gone, an
 * executor crashing at random or at the moment it writes a map output, serves one or fetches one into a file;
 * the programs add functions that throw on a record (once or always), stragglers (with speculation on for some
 * apps), cancelled jobs and jobs run at once on the same shuffle.
 *
 * @since 0.1.0
 */
import { ExecutorProcess, InlineTasks } from "@kindling/executor"
import { Installation } from "@kindling/installation"
import { Shell } from "@kindling/kernel"
import { Simulation } from "@kindling/kernel/testing"
import { ArtifactStore, LeaderElection, Master, Persistence } from "@kindling/master"
import {
  AppClientMessages,
  Codec,
  Descriptions,
  Endpoints,
  Envelope,
  Ids,
  MasterClient,
  type QueryMessages,
  RpcAddress,
  RpcEnv,
  States,
  Transport
} from "@kindling/protocol"
import { ProcessLauncher, Runners, Worker } from "@kindling/worker"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import * as ComputingApps from "./ComputingApps.js"
import * as SimDisk from "./SimDisk.js"
import * as SimProcesses from "./SimProcesses.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly seed: number
  readonly workers?: number
  readonly submissions?: number
  /** Apps that only hold executors for a while. */
  readonly apps?: number
  /** Apps that run jobs on their executors. */
  readonly computing?: number
  /** Faults besides delays: kills, pauses, partitions, broken and duplicated frames. */
  readonly faults?: boolean
  /** Master settings to run with instead of the simulation's own (to explore a setting, or to break the master). */
  readonly master?: Partial<Master.Options>
  /** How every role's core runs (a test makes one of them throw, to see the role end as a defect must end it). */
  readonly coreWrapper?: Context.Tag.Service<typeof Shell.CoreWrapper>
  readonly onTrace?: (line: string) => void
}

/**
 * What a run found.
 *
 * @since 0.1.0
 * @category models
 */
export interface Outcome {
  readonly seed: number
  /** Events the simulation took. */
  readonly steps: number
  readonly simulatedMillis: number
  /**
   * The faults injected, in order: the simulation's own (kills, pauses, partitions, broken connections; the
   * spoofer's visit is no fault of the network's and is not listed), and the engine's (`disk full`, `rot`,
   * `vanish`, `crash`, `crash <moment>`).
   */
  readonly faults: ReadonlyArray<Fault>
  /** Times the master lost its leadership and won it back. */
  readonly leaderChanges: number
  /** Jobs the computing apps ran, and how many of those that should have succeeded failed (typed) instead. */
  readonly jobs: number
  readonly jobsFailed: number
  /** What the engine did for those jobs: bytes spilled and shuffled, partitions persisted, fetch failures, … */
  readonly work: Readonly<Record<string, number>>
  readonly problems: ReadonlyArray<string>
  readonly trace: ReadonlyArray<string>
}

/**
 * A fault and the nodes (or paths) it touched.
 *
 * @since 0.1.0
 * @category models
 */
export interface Fault {
  readonly at: number
  readonly kind: string
  readonly nodes: ReadonlyArray<string>
}

const masterAddress = RpcAddress.make("master", 7077)
const workerPort = 7078
const workerTimeoutMillis = 10_000

// The workers' processes are simulated programs, named by their entry modules as they are; the packages linked
// into an executor's work dir (on the simulated disk) are this installation's.
const simulatedInstallation: Installation.Installation = {
  packages: Installation.make(import.meta).packages,
  resolveModule: (specifier) => specifier
}

const tokenOf = (driver: QueryMessages.DriverInfo): string | undefined =>
  driver.desc.command.arguments.find((a) => a.startsWith("sim:"))?.split("token=")[1]

/**
 * Runs one seed.
 *
 * @since 0.1.0
 * @category running
 */
export const run = (options: Options): Outcome => {
  const { coreWrapper } = options
  const sim = Simulation.make({
    seed: options.seed,
    network: { latencyMillis: [1, 20] },
    ...withTrace(options),
    ...(coreWrapper === undefined ? {} : { around: Effect.provideService(Shell.CoreWrapper, coreWrapper) })
  })
  const start = sim.now()
  const random = sim.random
  const between = (min: number, max: number) => min + Math.floor(random() * (max - min + 1))
  const workerCount = options.workers ?? 3
  const ledger = new SimProcesses.Ledger()
  const store: Persistence.MemoryStore = new Map()
  const problems: Array<string> = []
  const exits: Array<string> = []
  const killRequested = new Set<string>()
  const appsEnded = new Map<string, number>()
  const disk = SimDisk.make()
  const engineFaults: Array<Fault> = []
  const engineFault = (kind: string, ...nodes: ReadonlyArray<string>) => {
    sim.note(`${sim.now()} ${kind}: ${nodes.join(", ")}`)
    engineFaults.push({ at: sim.now(), kind, nodes })
  }
  let masterGeneration = 0
  let master: Master.Master | undefined

  // The master's election. It leads from the start; a leader change revokes its leadership for a while (its
  // lease ends at once, whether or not the master hears of it: a paused master learns it when it wakes) and then
  // elects it again, when it recovers from its store as any newly elected master does.
  const election = { candidate: undefined as LeaderElection.Candidate | undefined, leads: false, changes: 0 }
  const electionLayer = Layer.succeed(LeaderElection.LeaderElection, {
    join: (candidate) =>
      Effect.suspend(() => {
        election.candidate = candidate
        election.leads = true
        return candidate.elected
      }),
    mayLead: () => election.leads
  })
  const onMaster = (effect: (candidate: LeaderElection.Candidate) => Effect.Effect<void>) => {
    const candidate = election.candidate
    if (candidate !== undefined) sim.node("master")?.evaluate(effect(candidate))
  }
  const revokeLeadership = () => {
    if (!election.leads) return
    election.leads = false
    election.changes++
    sim.note(`${sim.now()} the master's leadership is revoked`)
    onMaster((candidate) => candidate.revoked)
  }
  // A paused master is elected once it runs again; a killed one joins the election anew when it restarts.
  const electMaster = () => {
    const node = sim.node("master")
    if (election.leads || node?.status === "killed") return
    if (node?.status !== "running") return sim.at(500, electMaster)
    sim.note(`${sim.now()} the master is elected again`)
    election.leads = true
    onMaster((candidate) => candidate.elected)
  }

  // ---- nodes ---------------------------------------------------------------------------------------------

  const startMaster = () => {
    masterGeneration++
    sim.start(
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
          seed: options.seed + masterGeneration,
          validateState: true,
          onExit: (code) => Effect.sync(() => exits.push(`master exited with ${code}`)),
          ...options.master
        })
        return yield* Simulation.forever
      }).pipe(
        Effect.provide(
          Layer.mergeAll(
            RpcEnv.layer({ host: masterAddress.host, port: masterAddress.port }),
            Persistence.layerMemory(store),
            electionLayer,
            ArtifactStore.layerNone
          )
        )
      )
    )
  }

  const startWorker = (name: string) => {
    sim.start(
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
          fuzz: 0.5 + random(),
          cleanup: { enabled: false, intervalMillis: 1_800_000, appDataTtlMillis: 604_800_000 },
          retainedExecutors: 100,
          retainedDrivers: 100,
          // Timeouts are shortened here, and the window in which a worker keeps telling an executor's state
          // before it exits (Spark's behaviour) with them: by default it is 10 times the worker timeout (5 asks of
          // 120 s against 60 s), here 20 asks of 5 s against 10 s. A narrower one takes a master that is only
          // slow for a while (killed and restarted, then paused) for one that will never hear.
          executorStateSyncMaxAttempts: 20,
          askTimeoutMillis: 5_000,
          validateState: true,
          onExit: (code, reason) => Effect.sync(() => exits.push(`${name} exited with ${code}: ${reason}`))
        })
        return yield* Simulation.forever
      }).pipe(
        Effect.provide(
          Layer.provideMerge(
            Runners.layerProcesses({
              workDir: `/sim/${name}`,
              localDir: `/sim/${name}/local`,
              driverTerminateTimeoutMillis: 2_000,
              executorTerminateTimeoutMillis: 2_000,
              superviseInitialBackoffMillis: 200,
              installation: simulatedInstallation
            }).pipe(
              Layer.provide(
                Layer.succeed(ProcessLauncher.ProcessLauncher, SimProcesses.launcher(name, ledger, programs))
              ),
              Layer.provide(disk.fileSystem)
            ),
            RpcEnv.layer({ host: name, port: workerPort })
          )
        )
      )
    )
  }

  // ---- the client's plan -----------------------------------------------------------------------------------

  const submissions = Array.from({ length: options.submissions ?? 8 }, (_, i) => {
    const supervise = random() < 0.3
    const behaviour: SimProcesses.Behaviour = {
      runMillis: between(500, 15_000),
      exitCode: supervise || random() < 0.8 ? 0 : 1,
      failingRuns: supervise ? between(0, 2) : 0,
      obeysTerm: random() < 0.9,
      token: `t${i}`
    }
    return { at: between(500, 40_000), behaviour, supervise, kill: random() < 0.15 ? between(1_000, 10_000) : -1 }
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

  const client = Effect.gen(function*() {
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
                  killRequested.add(driverId)
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
  const apps = Array.from({ length: options.apps ?? 2 }, (_, i) => ({
    name: `app-${i + 1}`,
    at: between(1_000, 30_000),
    runs: between(10_000, 50_000),
    maxCores: between(2, 8),
    coresPerExecutor: random() < 0.5 ? Option.some(between(1, 2)) : Option.none<number>()
  }))

  const appProgram = (app: (typeof apps)[number]) =>
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
      appsEnded.set(app.name, yield* Effect.clockWith((clock) => clock.currentTimeMillis))
    }).pipe(Effect.provide(RpcEnv.layer({ host: app.name, port: 6000 })))

  // ---- computing apps: real drivers running jobs on real executors -------------------------------------------

  // The workers start the real executor program for them, on inline tasks that take a while on simulated time
  // (one in twenty is a straggler) and on the simulated disk, in their work dirs. Each executor run goes in the
  // ledger under its app's name, which is its driver's host.
  const taskDuration = Effect.flatMap(
    Random.next,
    (draw) => draw < 0.05 ? Random.nextIntBetween(2_000, 6_000) : Random.nextIntBetween(5, 400)
  )
  const programs: SimProcesses.Programs = {
    sim,
    programFor: (args, _host, workDir) => {
      // An executor command that carries a behaviour is one of the apps that only hold executors: simulated.
      const at = args.indexOf("@kindling/executor/main")
      if (at < 0 || SimProcesses.carriesBehaviour(args)) return undefined
      const argv = args.slice(at + 1)
      return {
        token: /@([^:/]+):/.exec(argv[argv.indexOf("--driver-url") + 1] ?? "")?.[1] ?? "?",
        program: Effect.scoped(ExecutorProcess.run(argv, {
          tasks: (size) => InlineTasks.make({ size, duration: taskDuration, files: disk.disk }),
          network: (host) => RpcEnv.layer({ host, port: 0 }),
          disk: disk.disk,
          workDir,
          validateState: true
        }))
      }
    }
  }

  const computing = ComputingApps.make(
    { sim, disk, master: masterAddress, seed: options.seed, random },
    options.computing ?? 1
  )

  // ---- faults ----------------------------------------------------------------------------------------------

  const workerNames = Array.from({ length: workerCount }, (_, i) => `worker-${i + 1}`)
  if (options.faults ?? true) {
    sim.setNetwork({ duplicateRate: 0.02, breakRate: 0.002 })
    const faults = between(2, 6)
    for (let i = 0; i < faults; i++) {
      const at = between(3_000, 80_000)
      const kind = random()
      const worker = workerNames[between(0, workerNames.length - 1)]!
      const length = between(1_000, 20_000)
      if (kind < 0.25) {
        sim.at(at, () => {
          sim.node(worker)?.kill()
          for (const node of ledger.workerDied(worker, sim.now())) sim.node(node)?.kill()
          sim.at(length, () => sim.node(worker)?.status === "killed" && startWorker(worker))
        })
      } else if (kind < 0.45) {
        sim.at(at, () => {
          sim.node(worker)?.pause()
          sim.at(length, () => sim.node(worker)?.resume())
        })
      } else if (kind < 0.65) {
        sim.at(at, () => {
          sim.partition("master", worker)
          sim.at(length, () => sim.heal("master", worker))
        })
      } else if (kind < 0.75) {
        sim.at(at, () => {
          sim.node("master")?.pause()
          sim.at(length, () => sim.node("master")?.resume())
        })
      } else if (kind < 0.85) {
        sim.at(at, () => {
          sim.node("master")?.kill()
          sim.at(length, () => sim.node("master")?.status === "killed" && startMaster())
        })
      } else if (kind < 0.93) {
        sim.at(at, () => {
          revokeLeadership()
          sim.at(length, electMaster)
        })
      } else {
        sim.at(at, () => sim.start(`spoofer-${i}`, spoof(worker)))
      }
    }
    // The engine's faults strike while the computing apps run (their jobs take seconds, not the whole run).
    const engine = between(1, 4)
    for (let i = 0; i < engine; i++) {
      const at = computing.starts.length === 0
        ? between(3_000, 80_000)
        : computing.starts[between(0, computing.starts.length - 1)]! + between(0, 15_000)
      sim.at(at, engineFaultAt(workerNames[between(0, workerCount - 1)]!))
    }
  }

  // A fault of the engine's on `worker`'s disk or executors: its disk full for a while, a map output there rotten
  // or gone, an executor there crashing now or at a moment of its work.
  function engineFaultAt(worker: string) {
    const kind = random()
    const length = between(1_000, 15_000)
    const under = `/sim/${worker}`
    const pick = (count: number) => Math.floor(random() * count)
    return () => {
      if (kind < 0.2) {
        engineFault("disk full", worker)
        disk.fill(under)
        sim.at(length, () => disk.free(under))
      } else if (kind < 0.35) {
        const path = disk.rot(under, pick)
        if (path !== undefined) engineFault("rot", path)
      } else if (kind < 0.5) {
        const path = disk.vanish(under, pick)
        if (path !== undefined) engineFault("vanish", path)
      } else if (kind < 0.65) {
        const victims = ledger.running().filter((run) => run.worker === worker && run.crash !== undefined)
        if (victims.length === 0) return
        const victim = victims[pick(victims.length)]!
        engineFault("crash", victim.node!)
        victim.crash!()
      } else {
        const moment = (["writing map output", "serving map output", "fetching a block"] as const)[pick(3)]!
        disk.arm(moment, under, (path) => {
          const victim = ledger.running().find((run) => run.crash !== undefined && path.startsWith(`${run.dir}/`))
          if (victim === undefined) return
          engineFault(`crash ${moment}`, victim.node!)
          victim.crash!()
        })
      }
    }
  }

  // Someone else connects to the master claiming to be a worker, then hangs up: that must not cost the worker
  // anything (it is not a fault of the worker's, so the healthy-worker checks cover it).
  const spoof = (worker: string) =>
    Effect.gen(function*() {
      const transport = yield* Transport.Transport
      const connection = yield* transport.connect(masterAddress.host, masterAddress.port, () => ({
        onData: () => {},
        onClose: () => {}
      }))
      const hello = Codec.encodeFrame(
        {
          _tag: "hello",
          version: Envelope.protocolVersion,
          address: RpcAddress.make(worker, workerPort),
          nonce: null
        },
        Envelope.defaultMaxFrameSize
      )
      connection.write(Either.getOrThrow(hello))
      yield* Effect.sleep(100)
      connection.close()
    })

  // ---- the run ---------------------------------------------------------------------------------------------

  startMaster()
  for (const name of workerNames) startWorker(name)
  sim.start("client", client)
  for (const app of apps) sim.start(app.name, appProgram(app))
  computing.start()

  // Faults stop by 100 s; then everything heals and gets time to settle.
  sim.runFor(100_000)
  sim.setNetwork({ duplicateRate: 0, breakRate: 0 })
  sim.healAll()
  for (const name of ["master", ...workerNames]) {
    const node = sim.node(name)
    if (node?.status === "paused") node.resume()
    if (node?.status !== "killed") continue
    if (name === "master") startMaster()
    else startWorker(name)
  }
  electMaster()
  const masterState = () => {
    const read = master === undefined ? undefined : sim.node("master")?.evaluate(master.state)
    return read !== undefined && Exit.isSuccess(read) ? read.value : undefined
  }
  sim.runUntil(() => {
    const state = masterState()
    return state !== undefined && state.status === "ALIVE" && state.activeDrivers.length === 0 &&
      state.activeApps.length === 0 && ledger.running().length === 0 &&
      computing.names.every((name) => computing.ended.has(name))
  }, 200_000)

  // ---- the checks ------------------------------------------------------------------------------------------

  problems.push(...exits)
  problems.push(...computing.problems())
  for (const run of ledger.runs) {
    if (run.node !== undefined && run.exitCode === 70) problems.push(`executor ${run.dir} stopped on an internal error`)
  }
  const state = masterState()
  if (state === undefined) problems.push("the master cannot be read at the end")
  else {
    if (state.status !== "ALIVE") problems.push(`the master ends ${state.status}`)
    for (const driver of state.activeDrivers) problems.push(`driver ${driver.id} is still ${driver.state}`)
    const chains = new Map<string, Array<QueryMessages.DriverInfo>>()
    for (const driver of [...state.completedDrivers, ...state.activeDrivers]) {
      const token = tokenOf(driver) ?? "?"
      chains.set(token, [...(chains.get(token) ?? []), driver])
    }
    for (const [token, chain] of chains) {
      const finals = chain.filter((d) => States.isDriverReportable(d.state))
      if (finals.length !== 1) {
        problems.push(`${token} ended ${finals.length} times: ${chain.map((d) => `${d.id} ${d.state}`).join(", ")}`)
      }
    }
  }
  for (const run of ledger.running()) problems.push(`${run.dir} (pid ${run.pid}) on ${run.worker} never ended`)
  if (state !== undefined) {
    for (const app of state.activeApps) problems.push(`app ${app.id} (${app.desc.name}) never ended`)
    for (const worker of state.workers) {
      if (worker.state !== "DEAD" && (worker.coresUsed !== 0 || worker.memoryUsed !== 0)) {
        problems.push(`${worker.host} still has ${worker.coresUsed} cores and ${worker.memoryUsed} MB in use`)
      }
    }
    checkHealthyWorkers(state)
  }
  // An executor's files go with it (its worker removes them when it ends), unless its worker was killed too.
  const killedWorkers = new Set(sim.faults.filter((fault) => fault.kind === "kill").flatMap((fault) => fault.nodes))
  for (const path of disk.paths()) {
    const worker = /^\/sim\/([^/]+)\//.exec(path)?.[1]
    if (worker !== undefined && !killedWorkers.has(worker)) problems.push(`${path} is left on ${worker}`)
  }
  const byDriver = new Map<string, Array<SimProcesses.Run>>()
  for (const run of ledger.runs) {
    const driver = driverOf(run)
    if (driver !== undefined) byDriver.set(driver, [...(byDriver.get(driver) ?? []), run])
  }
  for (const [driver, runs] of byDriver) {
    const sorted = [...runs].sort((a, b) => a.startedAt - b.startedAt)
    for (let i = 1; i < sorted.length; i++) {
      const previous = sorted[i - 1]!
      if (previous.endedAt === undefined || previous.endedAt > sorted[i]!.startedAt) {
        problems.push(
          `${driver} ran twice at once: pid ${previous.pid} on ${previous.worker} and pid ${sorted[i]!.pid}`
        )
      }
    }
  }

  const outcome: Outcome = {
    seed: options.seed,
    steps: sim.steps(),
    simulatedMillis: sim.now() - start,
    // An executor killed with its worker, or by its worker, is no fault of the schedule's.
    faults: [...sim.faults.filter((fault) => !fault.nodes.every((node) => node.includes(".pid"))), ...engineFaults]
      .sort((a, b) => a.at - b.at),
    leaderChanges: election.changes,
    jobs: computing.jobs,
    jobsFailed: computing.jobsFailed(),
    work: computing.work,
    problems,
    trace: [...sim.trace]
  }
  sim.dispose()
  return outcome

  // A worker no fault touched must never have been taken for dead by the master.
  function checkHealthyWorkers(state: QueryMessages.MasterStateResponse) {
    // A fault of the master alone (paused, killed) touches no worker; any other fault touches its nodes.
    const touched = new Set(sim.faults.flatMap((fault) => fault.nodes).filter((node) => node !== "master"))
    const records = new Map([...state.completedDrivers, ...state.activeDrivers].map((d) => [d.id as string, d]))
    // Each driver's first run: a supervised driver's runner may start the same driver again, which is no relaunch.
    const firstRuns = ledger.runs.filter((run, i) => ledger.runs.findIndex((r) => r.dir === run.dir) === i)
    for (const run of ledger.runs) {
      if (touched.has(run.worker)) continue
      const id = driverOf(run)
      if (id !== undefined) {
        if (run.signalled && !killRequested.has(id)) problems.push(`healthy ${run.worker} had driver ${id} killed`)
        const record = records.get(id)
        // As Spark's: a driver that exits 0 finished, even if it was being killed (it ignored the SIGTERM, say).
        const expected = run.exitCode === 0 ? "FINISHED" : run.signalled ? "KILLED" : undefined
        const last = ledger.runs.filter((r) => r.dir === run.dir).at(-1) === run
        if (last && expected !== undefined && record !== undefined && record.state !== expected) {
          problems.push(`driver ${id} on healthy ${run.worker} ended ${run.exitCode}, recorded ${record.state}`)
        }
        // A driver that succeeded is not launched anew (a relaunch under a new id) after that. Its other copies,
        // started earlier behind a fault, may still run a while: the master kills them when it hears of them.
        if (run.exitCode === 0) {
          const again = firstRuns.find((r) =>
            r.token === run.token && r.dir !== run.dir && r.startedAt > (run.endedAt ?? Infinity)
          )
          if (again !== undefined) {
            problems.push(`${run.token} succeeded at ${run.endedAt} and was launched again in ${again.dir}`)
          }
        }
      } else if (run.signalled && !touched.has(run.token)) {
        // An app that lost its connection to the master is finished by it, as Spark does; one that did not keeps
        // its executors until it ends.
        const ended = appsEnded.get(run.token) ?? computing.ended.get(run.token)
        if (ended === undefined || ended > (run.endedAt ?? Infinity)) {
          problems.push(`healthy ${run.worker} had executor ${run.dir} killed while ${run.token} ran`)
        }
      }
    }
  }
}

// A driver runs in `<workDir>/<driverId>`, an executor in `<workDir>/<appId>/<execId>`.
const driverOf = (run: SimProcesses.Run): string | undefined => {
  const id = run.dir.split("/").pop()!
  return id.startsWith("driver-") ? id : undefined
}

const withTrace = (options: Options) => (options.onTrace === undefined ? {} : { onTrace: options.onTrace })
