// The master's election in the simulated cluster. It leads from the start; a leader change revokes its leadership
// for a while (its lease ends at once, whether or not the master hears of it: a paused master learns it when it
// wakes) and then elects it again, when it recovers from its store as any newly elected master does.
import type { Simulation } from "@kindling/kernel/testing"
import { LeaderElection } from "@kindling/master"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

export interface Election {
  /** What the master joins the election through. */
  readonly layer: Layer.Layer<LeaderElection.LeaderElection>
  readonly revoke: () => void
  /** Elects the master again once it runs (a paused one when it resumes; a killed one joins anew at restart). */
  readonly elect: () => void
  /** Times the leadership was revoked. */
  readonly changes: () => number
}

export const make = (sim: Simulation.Simulation): Election => {
  const election = { candidate: undefined as LeaderElection.Candidate | undefined, leads: false, changes: 0 }
  const layer = Layer.succeed(LeaderElection.LeaderElection, {
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
  const revoke = () => {
    if (!election.leads) return
    election.leads = false
    election.changes++
    sim.note(`${sim.now()} the master's leadership is revoked`)
    onMaster((candidate) => candidate.revoked)
  }
  const elect = () => {
    const node = sim.node("master")
    if (election.leads || node?.status === "killed") return
    if (node?.status !== "running") return sim.at(500, elect)
    sim.note(`${sim.now()} the master is elected again`)
    election.leads = true
    onMaster((candidate) => candidate.elected)
  }
  return { layer, revoke, elect, changes: () => election.changes }
}
