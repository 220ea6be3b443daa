// What a run must have kept, checked once it has settled: each checker names what it checks and lists what it
// found wrong. They run in this order, which is the order of an outcome's problems.
import type { QueryMessages } from "@kindling/protocol"
import { States } from "@kindling/protocol"
import type { ComputingApps } from "../ComputingApps.js"
import type * as SimProcesses from "../SimProcesses.js"
import { longestFault } from "./clusterFaults.js"
import { driverLeaseMillis, driverTerminateTimeoutMillis, workerTimeoutMillis } from "./clusterNodes.js"
import type { World } from "./clusterWorld.js"

/** What the checkers read: the run, the master's final state (when it can be read) and the computing apps. */
export interface RunEnd {
  readonly world: World
  readonly state: QueryMessages.MasterStateResponse | undefined
  readonly computing: ComputingApps
}

export interface Checker {
  readonly name: string
  readonly check: (end: RunEnd) => ReadonlyArray<string>
}

const tokenOf = (driver: QueryMessages.DriverInfo): string | undefined =>
  driver.desc.command.arguments.find((a) => a.startsWith("sim:"))?.split("token=")[1]

// A driver runs in `<workDir>/<driverId>`, an executor in `<workDir>/<appId>/<execId>`.
const driverOf = (run: SimProcesses.Run): string | undefined => {
  const id = run.dir.split("/").pop()!
  return id.startsWith("driver-") ? id : undefined
}

// Every driver the master accepted reached a final state exactly once: its chain of relaunches ends in one
// FINISHED, FAILED, KILLED or ERROR record.
const driversEndOnce = ({ state }: RunEnd): ReadonlyArray<string> => {
  if (state === undefined) return []
  const problems: Array<string> = []
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
  return problems
}

// The drivers the workers' fencing stopped, as their log says.
const fencedDrivers = (world: World) =>
  new Set(
    world.sim.trace.flatMap((line) => /stopping its supervised drivers (.+), which/.exec(line)?.[1].split(", ") ?? [])
  )

// The executors apps asked the master to kill (dynamic allocation gives idle ones back), as `app/exec`, from the
// master's log.
const killedByApps = (world: World) =>
  new Set(
    world.sim.trace.flatMap((line) => {
      const match = /Application (\S+) requests to kill executors: (.+)/.exec(line)
      return match === null ? [] : match[2]!.split(", ").map((id) => `${match[1]}/${id}`)
    })
  )

// Whether the master went away (for up to the longest fault, and the recovery after it) within the lease before
// `at`: long enough, no master acknowledges any worker for a lease.
const masterAwayBefore = (world: World, at: number) =>
  world.masterAway.some((away) => away <= at && at - away <= driverLeaseMillis + longestFault + workerTimeoutMillis)

// A worker no fault touched must never have been taken for dead by the master.
const healthyWorkers = ({ computing, state, world }: RunEnd): ReadonlyArray<string> => {
  if (state === undefined) return []
  const problems: Array<string> = []
  // A fault of the master alone (paused, killed) touches no worker; any other fault touches its nodes.
  const touched = new Set(world.sim.faults.flatMap((fault) => fault.nodes).filter((node) => node !== "master"))
  const records = new Map([...state.completedDrivers, ...state.activeDrivers].map((d) => [d.id as string, d]))
  const fenced = fencedDrivers(world)
  const givenBack = killedByApps(world)
  // Each driver's first run: a supervised driver's runner may start the same driver again, which is no relaunch.
  const firstRuns = world.ledger.runs.filter((run, i) => world.ledger.runs.findIndex((r) => r.dir === run.dir) === i)
  for (const run of world.ledger.runs) {
    if (touched.has(run.worker)) continue
    const id = driverOf(run)
    if (id !== undefined) {
      const record = records.get(id)
      // Its worker's fencing stops it once no master has acknowledged the worker for the lease: the master was away.
      if (fenced.has(id) && masterAwayBefore(world, run.endedAt ?? Infinity)) continue
      if (run.signalled && !world.killRequested.has(id)) problems.push(`healthy ${run.worker} had driver ${id} killed`)
      // As Spark's: a driver that exits 0 finished, even if it was being killed (it ignored the SIGTERM, say).
      const expected = run.exitCode === 0 ? "FINISHED" : run.signalled ? "KILLED" : undefined
      const last = world.ledger.runs.filter((r) => r.dir === run.dir).at(-1) === run
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
    } else if (run.signalled && !touched.has(run.token) && !givenBack.has(run.dir.split("/").slice(-2).join("/"))) {
      // An app that lost its connection to the master is finished by it, as Spark does; one that did not keeps
      // its executors until it ends.
      const ended = world.appsEnded.get(run.token) ?? computing.ended.get(run.token)
      if (ended === undefined || ended > (run.endedAt ?? Infinity)) {
        problems.push(`healthy ${run.worker} had executor ${run.dir} killed while ${run.token} ran`)
      }
    }
  }
  return problems
}

// An executor's files go with it (its worker removes them when it ends) — those a worker's shuffle service serves,
// when its app has finished — unless its worker was killed too.
export const filesLeft = (world: World): ReadonlyArray<string> => {
  const killedWorkers = new Set(
    world.sim.faults.filter((fault) => fault.kind === "kill").flatMap((fault) => fault.nodes)
  )
  return world.disk.paths().flatMap((path) => {
    const worker = /^\/sim\/([^/]+)\//.exec(path)?.[1]
    return worker !== undefined && !killedWorkers.has(worker) ? [`${path} is left on ${worker}`] : []
  })
}

// When each node was paused, and until when (the end of the run if it never resumed), from the trace.
const pauses = (world: World) => {
  const found: Array<{ readonly node: string; readonly from: number; to: number }> = []
  for (const line of world.sim.trace) {
    const match = /^(\d+) (\S+) (paused|resumed)$/.exec(line)
    if (match === null) continue
    const [, at, node, what] = match
    if (what === "paused") found.push({ node: node!, from: Number(at), to: Infinity })
    else {
      const open = [...found].reverse().find((pause) => pause.node === node && pause.to === Infinity)
      if (open !== undefined) open.to = Number(at)
    }
  }
  return found
}

// No two copies of a submitted driver at once: neither a restart in place beside the run it replaces, nor a relaunch
// under a new id beside its predecessor — which the workers' fencing rules out even when the predecessor's worker
// was cut off, or paused for less than its lease, when its master relaunched it. The one overlap it cannot rule out
// (a known gap, in the README): a worker frozen through its lease's end cannot stop its drivers until it runs
// again; the relaunch then starts while it is frozen, and the old copy is stopped as soon as it resumes.
const noDriverTwiceAtOnce = ({ world }: RunEnd): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const frozen = pauses(world)
  const frozenThrough = (old: SimProcesses.Run, relaunch: SimProcesses.Run) =>
    frozen.some((pause) =>
      pause.node === old.worker && pause.from <= relaunch.startedAt && relaunch.startedAt <= pause.to &&
      (old.endedAt ?? Infinity) <= pause.to + driverTerminateTimeoutMillis
    )
  const bySubmission = new Map<string, Array<SimProcesses.Run>>()
  for (const run of world.ledger.runs) {
    if (driverOf(run) !== undefined) bySubmission.set(run.token, [...(bySubmission.get(run.token) ?? []), run])
  }
  for (const [token, runs] of bySubmission) {
    const sorted = [...runs].sort((a, b) => a.startedAt - b.startedAt)
    let last = sorted[0]!
    for (const run of sorted.slice(1)) {
      if ((last.endedAt === undefined || last.endedAt > run.startedAt) && !frozenThrough(last, run)) {
        problems.push(
          `${token} ran twice at once: ${driverOf(last)} (pid ${last.pid}) on ${last.worker} until ` +
            `${last.endedAt ?? "the end"}, ${driverOf(run)} (pid ${run.pid}) on ${run.worker} from ${run.startedAt}`
        )
      }
      if ((run.endedAt ?? Infinity) > (last.endedAt ?? Infinity)) last = run
    }
  }
  return problems
}

// A decommissioned worker starts no executor once it knows (launches sent before are refused, and the master
// hears so), and exits once drained — unless a fault killed it first, and a new worker of its name replaced it. It
// knows when it logs so: at once when signalled, when the master's word reaches it otherwise (a cut link delays it
// until the master tells it again, at a heartbeat; a master restarted before that never heard of it).
const decommissionedWorkers = ({ world }: RunEnd): ReadonlyArray<string> =>
  world.decommissioned.flatMap((decommission) => {
    const until = decommission.end?.at ?? Infinity
    const knew = world.sim.trace.flatMap((line) => {
      const heard = /^(\d+) (\S+) INFO +Decommissioning this worker/.exec(line)
      return heard === null || heard[2] !== decommission.worker ? [] : [Number(heard[1])]
    }).find((at) => at >= decommission.at && at < until)
    if (knew === undefined) return []
    const started = world.ledger.runs.filter((run) =>
      run.worker === decommission.worker && driverOf(run) === undefined && run.startedAt > knew &&
      run.startedAt < until
    )
    return [
      ...(decommission.end === undefined
        ? [`${decommission.worker}, decommissioned at ${knew}, never exited`]
        : []),
      ...started.map((run) =>
        `executor ${run.dir} started on ${decommission.worker} ${run.startedAt - knew} ms after its decommission`
      )
    ]
  })

export const checkers: ReadonlyArray<Checker> = [
  { name: "no node exited on its own", check: ({ world }) => world.exits },
  { name: "every job ended with its answer or a typed failure", check: ({ computing }) => computing.problems() },
  {
    name: "no executor stopped on an internal error",
    check: ({ world }) =>
      world.ledger.runs.flatMap((run) =>
        run.node !== undefined && run.exitCode === 70 ? [`executor ${run.dir} stopped on an internal error`] : []
      )
  },
  {
    name: "the master ends alive",
    check: ({ state }) =>
      state === undefined
        ? ["the master cannot be read at the end"]
        : state.status !== "ALIVE"
        ? [`the master ends ${state.status}`]
        : []
  },
  {
    name: "no driver is left active",
    check: ({ state }) => (state?.activeDrivers ?? []).map((driver) => `driver ${driver.id} is still ${driver.state}`)
  },
  { name: "every driver ends exactly once", check: driversEndOnce },
  {
    name: "every process ended",
    check: ({ world }) =>
      world.ledger.running().map((run) => `${run.dir} (pid ${run.pid}) on ${run.worker} never ended`)
  },
  {
    name: "every app ended",
    check: ({ state }) => (state?.activeApps ?? []).map((app) => `app ${app.id} (${app.desc.name}) never ended`)
  },
  {
    name: "every worker's cores and memory are free",
    check: ({ state }) =>
      (state?.workers ?? []).flatMap((worker) =>
        worker.state !== "DEAD" && (worker.coresUsed !== 0 || worker.memoryUsed !== 0)
          ? [`${worker.host} still has ${worker.coresUsed} cores and ${worker.memoryUsed} MB in use`]
          : []
      )
  },
  { name: "no healthy worker is taken for dead", check: healthyWorkers },
  { name: "no executor's file is left", check: ({ world }) => filesLeft(world) },
  { name: "no driver runs twice at once", check: noDriverTwiceAtOnce },
  { name: "a decommissioned worker takes no new executor and exits once drained", check: decommissionedWorkers }
]
