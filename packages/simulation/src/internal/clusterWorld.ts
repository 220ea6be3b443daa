// What every part of a simulated cluster run shares: the simulation, its seeded draws, the processes the workers
// ran (the ledger), the disks, and the record of what happened that the checks read at the end.
import type { Simulation } from "@kindling/kernel/testing"
import type { Fault, Options } from "../Cluster.js"
import * as SimDisk from "../SimDisk.js"
import * as SimProcesses from "../SimProcesses.js"

export interface World {
  readonly options: Options
  readonly sim: Simulation.Simulation
  /** The run's seeded draws, in [0, 1); every decision of the run's plan is one, in a fixed order. */
  readonly random: () => number
  /** A seeded integer in [min, max]. */
  readonly between: (min: number, max: number) => number
  readonly ledger: SimProcesses.Ledger
  readonly disk: SimDisk.SimDisk
  readonly workerNames: ReadonlyArray<string>
  /** Nodes that exited on their own, with their code: each is a problem. */
  readonly exits: Array<string>
  /**
   * Workers decommissioned: when, and how that worker ended — it exited once drained, or was replaced by a new
   * worker of its name after a fault killed it — and when.
   */
  readonly decommissioned: Array<{
    readonly worker: string
    readonly at: number
    end: { readonly kind: "exited" | "replaced"; readonly at: number } | undefined
  }>
  /** Drivers the client asked to kill. */
  readonly killRequested: Set<string>
  /** When the master went away (killed, paused, its leadership revoked), each for up to `longestFault`. */
  readonly masterAway: Array<number>
  /** When each app that only holds executors ended. */
  readonly appsEnded: Map<string, number>
  /** The engine's faults, which the simulation itself does not record. */
  readonly engineFaults: Array<Fault>
  readonly engineFault: (kind: string, ...nodes: ReadonlyArray<string>) => void
}

export const make = (options: Options, sim: Simulation.Simulation): World => {
  const random = sim.random
  const engineFaults: Array<Fault> = []
  return {
    options,
    sim,
    random,
    between: (min, max) => min + Math.floor(random() * (max - min + 1)),
    ledger: new SimProcesses.Ledger(),
    disk: SimDisk.make(),
    workerNames: Array.from({ length: options.workers ?? 3 }, (_, i) => `worker-${i + 1}`),
    exits: [],
    decommissioned: [],
    killRequested: new Set(),
    masterAway: [],
    appsEnded: new Map(),
    engineFaults,
    engineFault: (kind, ...nodes) => {
      sim.note(`${sim.now()} ${kind}: ${nodes.join(", ")}`)
      engineFaults.push({ at: sim.now(), kind, nodes })
    }
  }
}
