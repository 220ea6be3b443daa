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
import { Shell } from "@kindling/kernel"
import { Simulation } from "@kindling/kernel/testing"
import type { Master } from "@kindling/master"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as ComputingApps from "./ComputingApps.js"
import { checkers, filesLeft } from "./internal/clusterChecks.js"
import * as Election from "./internal/clusterElection.js"
import * as Faults from "./internal/clusterFaults.js"
import * as Nodes from "./internal/clusterNodes.js"
import * as Workload from "./internal/clusterWorkload.js"
import * as World from "./internal/clusterWorld.js"

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

/**
 * Runs one seed: the plan is drawn (submissions, apps, computing apps, faults, in that order), the cluster runs
 * under its faults for 100 s, heals and settles, and the checkers read what happened.
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
  const world = World.make(options, sim)
  const election = Election.make(sim)
  const submissions = Workload.drawSubmissions(world)
  const apps = Workload.drawApps(world)
  const nodes = Nodes.make(world, election, Workload.executorPrograms(world))
  const computing = ComputingApps.make(
    { sim, disk: world.disk, master: Nodes.masterAddress, seed: options.seed, random: world.random },
    options.computing ?? 1
  )
  Faults.schedule(world, nodes, election, computing.starts)

  nodes.startMaster()
  for (const name of world.workerNames) nodes.startWorker(name)
  sim.start("client", Workload.client(world, submissions))
  for (const app of apps) sim.start(app.name, Workload.appProgram(world, app))
  computing.start()

  // Faults stop by 100 s; then everything heals and gets time to settle.
  sim.runFor(100_000)
  sim.setNetwork({ duplicateRate: 0, breakRate: 0 })
  sim.healAll()
  for (const name of ["master", ...world.workerNames]) {
    const node = sim.node(name)
    if (node?.status === "paused") node.resume()
    if (node?.status !== "killed") continue
    if (name === "master") nodes.startMaster()
    else nodes.startWorker(name)
  }
  election.elect()
  sim.runUntil(() => {
    const state = nodes.masterState()
    // The files the workers' shuffle services served go once their workers hear that the apps have finished.
    return state !== undefined && state.status === "ALIVE" && state.activeDrivers.length === 0 &&
      state.activeApps.length === 0 && world.ledger.running().length === 0 &&
      computing.names.every((name) => computing.ended.has(name)) &&
      filesLeft(world).length === 0
  }, 200_000)

  const end = { world, state: nodes.masterState(), computing }
  const outcome: Outcome = {
    seed: options.seed,
    steps: sim.steps(),
    simulatedMillis: sim.now() - start,
    // An executor killed with its worker, or by its worker, is no fault of the schedule's.
    faults: [
      ...sim.faults.filter((fault) => !fault.nodes.every((node) => node.includes(".pid"))),
      ...world.engineFaults
    ]
      .sort((a, b) => a.at - b.at),
    leaderChanges: election.changes(),
    jobs: computing.jobs,
    jobsFailed: computing.jobsFailed(),
    work: computing.work,
    problems: checkers.flatMap((checker) => checker.check(end)),
    trace: [...sim.trace]
  }
  sim.dispose()
  return outcome
}

const withTrace = (options: Options) => (options.onTrace === undefined ? {} : { onTrace: options.onTrace })
