// What the simulation knows of a node: its scheduler (which only the simulation drives), its life, what waits for
// it while it is paused, its connections' ends and its listeners.
import type * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import type * as Scheduler from "effect/Scheduler"
import type { NodeStatus } from "../Simulation.js"
import type { End } from "./simNetwork.js"

export interface NodeState {
  readonly name: string
  readonly scheduler: Scheduler.ControlledScheduler
  status: NodeStatus
  exit: Exit.Exit<unknown, unknown> | undefined
  fiber: Fiber.RuntimeFiber<unknown, unknown> | undefined
  /** What arrived while the node was paused, in order. */
  readonly held: Array<() => void>
  readonly ends: Set<End>
  readonly listeners: Set<string>
}
