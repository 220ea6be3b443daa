// The run's faults, drawn from the seed and scheduled on the simulation: the cluster's (workers killed and
// restarted, nodes paused, partitions, the master killed or its leadership revoked, a spoofer posing as a worker,
// duplicated and broken frames), the engine's (a disk full for a while, a map output rotten or gone, an
// executor crashing now or at a moment of its work), and workers decommissioned while the computing apps shuffle.
import { Codec, Envelope, RpcAddress } from "@kindling/protocol"
import { Transport } from "@kindling/rpc"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type { Election } from "./clusterElection.js"
import { masterAddress, type Nodes, workerPort } from "./clusterNodes.js"
import type { World } from "./clusterWorld.js"
import { sideDraws } from "./sideDraws.js"

/** How long a fault of the cluster's lasts at most (a node down or paused, a link cut, no leader). */
export const longestFault = 20_000

/** Schedules the faults, if the run has any; the engine's strike while the computing apps run (`computingStarts`). */
export const schedule = (
  world: World,
  nodes: Nodes,
  election: Election,
  computingStarts: ReadonlyArray<number>
) => {
  if (world.options.faults ?? true) {
    world.sim.setNetwork({ duplicateRate: 0.02, breakRate: 0.002 })
    const faults = world.between(2, 6)
    for (let i = 0; i < faults; i++) {
      const at = world.between(3_000, 80_000)
      const kind = world.random()
      const worker = world.workerNames[world.between(0, world.workerNames.length - 1)]!
      const length = world.between(1_000, longestFault)
      if (kind < 0.25) {
        world.sim.at(at, () => {
          world.sim.node(worker)?.kill()
          for (const node of world.ledger.workerDied(worker, world.sim.now())) world.sim.node(node)?.kill()
          world.sim.at(length, () => world.sim.node(worker)?.status === "killed" && nodes.startWorker(worker))
        })
      } else if (kind < 0.45) {
        world.sim.at(at, () => {
          world.sim.node(worker)?.pause()
          world.sim.at(length, () => world.sim.node(worker)?.resume())
        })
      } else if (kind < 0.65) {
        world.sim.at(at, () => {
          world.sim.partition("master", worker)
          world.sim.at(length, () => world.sim.heal("master", worker))
        })
      } else if (kind < 0.75) {
        world.sim.at(at, () => {
          world.masterAway.push(world.sim.now())
          world.sim.node("master")?.pause()
          world.sim.at(length, () => world.sim.node("master")?.resume())
        })
      } else if (kind < 0.85) {
        world.sim.at(at, () => {
          world.masterAway.push(world.sim.now())
          world.sim.node("master")?.kill()
          world.sim.at(length, () => world.sim.node("master")?.status === "killed" && nodes.startMaster())
        })
      } else if (kind < 0.93) {
        world.sim.at(at, () => {
          world.masterAway.push(world.sim.now())
          election.revoke()
          world.sim.at(length, election.elect)
        })
      } else {
        world.sim.at(at, () => world.sim.start(`spoofer-${i}`, spoof(worker)))
      }
    }
    decommissions(world, nodes, computingStarts)
    // The engine's faults strike while the computing apps run (their jobs take seconds, not the whole run).
    const engine = world.between(1, 4)
    for (let i = 0; i < engine; i++) {
      const at = computingStarts.length === 0
        ? world.between(3_000, 80_000)
        : computingStarts[world.between(0, computingStarts.length - 1)]! + world.between(0, 15_000)
      world.sim.at(at, engineFaultAt(world, world.workerNames[world.between(0, world.workerNames.length - 1)]!))
    }
  }
}

// Workers decommissioned while the computing apps run — during their shuffles — by their signal or through the
// master; each exits once drained and a new worker of its name starts a few seconds later. Drawn apart from
// `random`, so that the rest of a seed's run stays as it was: in half of the runs, one or two.
const decommissions = (world: World, nodes: Nodes, computingStarts: ReadonlyArray<number>) => {
  const next = sideDraws(world.options.seed, 2000)
  const between = (min: number, max: number) => min + Math.floor(next() * (max - min + 1))
  if (computingStarts.length === 0 || next() >= 0.5) return
  const count = between(1, 2)
  for (let i = 0; i < count; i++) {
    const at = computingStarts[between(0, computingStarts.length - 1)]! + between(500, 12_000)
    const worker = world.workerNames[between(0, world.workerNames.length - 1)]!
    const via = next() < 0.5 ? "signal" : "master"
    const restart = between(1_000, 10_000)
    world.sim.at(at, () => {
      if (nodes.decommission(worker, via, restart)) world.engineFault(`decommission (${via})`, worker)
    })
  }
}

// A fault of the engine's on `worker`'s disk or executors: its disk full for a while, a map output there rotten
// or gone, an executor there crashing now or at a moment of its work.
function engineFaultAt(world: World, worker: string) {
  const kind = world.random()
  const length = world.between(1_000, 15_000)
  const under = `/sim/${worker}`
  const pick = (count: number) => Math.floor(world.random() * count)
  return () => {
    if (kind < 0.2) {
      world.engineFault("disk full", worker)
      world.disk.fill(under)
      world.sim.at(length, () => world.disk.free(under))
    } else if (kind < 0.35) {
      const path = world.disk.rot(under, pick)
      if (path !== undefined) world.engineFault("rot", path)
    } else if (kind < 0.5) {
      const path = world.disk.vanish(under, pick)
      if (path !== undefined) world.engineFault("vanish", path)
    } else if (kind < 0.65) {
      const victims = world.ledger.running().filter((run) => run.worker === worker && run.crash !== undefined)
      if (victims.length === 0) return
      const victim = victims[pick(victims.length)]!
      world.engineFault("crash", victim.node!)
      victim.crash!()
    } else {
      const moment = (["writing map output", "serving map output", "fetching a block"] as const)[pick(3)]!
      world.disk.arm(moment, under, (path) => {
        const victim = world.ledger.running().find((run) => run.crash !== undefined && path.startsWith(`${run.dir}/`))
        if (victim === undefined) return
        world.engineFault(`crash ${moment}`, victim.node!)
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
