/**
 * A deterministic world for whole clusters in one process: every node runs its real Effect program (RpcEnv,
 * shell, core) on a scheduler of its own that only this harness drives, all nodes share a simulated clock, and
 * their bytes travel over a simulated network that delays, duplicates, breaks and partitions connections. The
 * harness runs the nodes' fibers until none can move, then takes the next event (a delivery, a timer, a fault)
 * in time order. Nothing waits on real time or real I/O, so a run is a pure function of its seed: the same seed
 * gives the same trace, and a failing seed replays exactly.
 *
 * The network keeps each connection in order, as TCP does; a "broken" connection loses what was in flight and
 * both ends see it close. Duplication — a frame delivered twice — is harsher than TCP, and stands for what
 * retries and reconnects do to a protocol. A paused node holds its deliveries and runs its timers first when it
 * resumes, as a Node process does after SIGSTOP and SIGCONT.
 *
 * Programs must not use promises or real timers (file systems and processes go through ports the simulation
 * replaces), or the run stalls at that point.
 *
 * @since 0.1.0
 */
import { Transport } from "@kindling/rpc"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as Logger from "effect/Logger"
import * as Random from "effect/Random"
import * as Scheduler from "effect/Scheduler"
import type * as Scope from "effect/Scope"
import { Agenda } from "./internal/simAgenda.js"
import * as Network from "./internal/simNetwork.js"
import type { NodeState } from "./internal/simNodeState.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface NetworkOptions {
  /** One-way delay of a frame, drawn uniformly in [min, max] ms. */
  readonly latencyMillis: readonly [number, number]
  /** The chance that a frame is delivered twice (never a connection's first two frames: the handshake). */
  readonly duplicateRate: number
  /** The chance, per frame, that the connection breaks instead: both ends see it close, in-flight frames are lost. */
  readonly breakRate: number
  /** How long a connection attempt to an unreachable node takes to fail. */
  readonly connectTimeoutMillis: number
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly seed: number
  /** The simulated time at the start, in epoch milliseconds. */
  readonly startTime?: number
  readonly network?: Partial<NetworkOptions>
  /** Also hands every trace line here as it is written (to watch a run). */
  readonly onTrace?: (line: string) => void
  /** Wraps every node's program (to give all nodes a service: a test seam, say). */
  readonly around?: <A, E, R>(program: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

/**
 * A node's life: running, paused (SIGSTOP), killed (SIGKILL: nothing more runs, no finalizer), or its program
 * ended (a clean stop, or an exit of its own).
 *
 * @since 0.1.0
 * @category models
 */
export type NodeStatus = "running" | "paused" | "killed" | "ended"

/**
 * @since 0.1.0
 * @category models
 */
export interface Node {
  readonly name: string
  readonly status: NodeStatus
  /** How the program ended, once it has. */
  readonly exit: Exit.Exit<unknown, unknown> | undefined
  /** SIGKILL: the node stops at once; its connections reset, its listeners close, nothing of it runs again. */
  readonly kill: () => void
  /** A clean stop: the program is interrupted and its finalizers run. */
  readonly stop: () => void
  /** SIGSTOP: nothing of the node runs and its deliveries wait, until `resume`. */
  readonly pause: () => void
  /** SIGCONT: the node's due timers run first, then what arrived meanwhile is delivered. */
  readonly resume: () => void
  /**
   * Runs `effect` on the node, without letting time pass, and gives its outcome (to read a node's state between
   * events). An effect that needs time or a paused node to move gives undefined.
   */
  readonly evaluate: <A, E>(effect: Effect.Effect<A, E>) => Exit.Exit<A, E> | undefined
}

/**
 * A fault that happened, and the nodes it touched.
 *
 * @since 0.1.0
 * @category models
 */
export interface Fault {
  readonly at: number
  readonly kind: "kill" | "pause" | "partition" | "break"
  readonly nodes: ReadonlyArray<string>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Simulation {
  readonly seed: number
  /** The simulated time, in epoch milliseconds. */
  readonly now: () => number
  /** The world's own random numbers in [0, 1), for scenarios (nodes get generators of their own). */
  readonly random: () => number
  readonly trace: ReadonlyArray<string>
  /** Every fault so far, in order. */
  readonly faults: ReadonlyArray<Fault>
  /** Events taken so far (deliveries, timers, faults). */
  readonly steps: () => number
  /** Starts a node: `program` runs with the node's transport and a scope closed when it ends. */
  readonly start: (
    name: string,
    program: Effect.Effect<unknown, unknown, Transport.Transport | Scope.Scope>
  ) => Node
  readonly node: (name: string) => Node | undefined
  /** Runs `action` at `delayMillis` from now, in the harness (to kill, pause or partition). */
  readonly at: (delayMillis: number, action: () => void) => void
  /** Cuts every connection between two nodes and refuses new ones, until `heal`. */
  readonly partition: (a: string, b: string) => void
  readonly heal: (a: string, b: string) => void
  readonly healAll: () => void
  readonly setNetwork: (options: Partial<NetworkOptions>) => void
  /** Writes a line into the trace. */
  readonly note: (line: string) => void
  /** Runs for `millis` of simulated time. */
  readonly runFor: (millis: number) => void
  /** Runs until `done` holds (checked whenever nothing can move) or `maxMillis` pass; whether it held. */
  readonly runUntil: (done: () => boolean, maxMillis: number) => boolean
  /**
   * Ends the world: every fiber of every node — killed and paused ones too — is interrupted and run, on the
   * network healed, until it has ended (its finalizers included). Effect keeps every fiber forked at the root
   * (`runFork`, `forkDaemon`) until it ends, so a world left with nodes waiting for ever would stay in memory.
   */
  readonly dispose: () => void
}

/**
 * A fiber that keeps scheduling work without ever letting time pass.
 *
 * @since 0.1.0
 * @category errors
 */
export class Livelock extends Error {
  constructor(readonly at: number) {
    super(`the simulation made no progress in time at ${at}: some fiber never waits`)
  }
}

/**
 * Waits forever, as `Effect.never` does, but without a real timer: a simulated node that has nothing more to do
 * must not keep the process alive once the simulation is over.
 *
 * @since 0.1.0
 * @category constructors
 */
export const forever: Effect.Effect<never> = Effect.async<never>(() => {})

const defaultNetwork: NetworkOptions = {
  latencyMillis: [1, 5],
  duplicateRate: 0,
  breakRate: 0,
  connectTimeoutMillis: 2000
}

/**
 * Seeded random numbers in [0, 1) (mulberry32: small, fast and good enough to draw faults and workloads from), as
 * the world draws its own.
 *
 * @since 0.1.0
 * @category constructors
 */
export const generator = (seed: number): () => number => {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6D2B79F5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const levelName = (level: string) => level.toUpperCase().padEnd(5)

/**
 * A new, empty world at `startTime`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options): Simulation => {
  let now = options.startTime ?? 1_700_000_000_000
  let network: NetworkOptions = { ...defaultNetwork, ...options.network }
  const agenda = new Agenda()
  const random = generator(options.seed)
  const trace: Array<string> = []
  const faults: Array<Fault> = []
  const fault = (kind: Fault["kind"], ...names: ReadonlyArray<string>) => faults.push({ at: now, kind, nodes: names })
  const nodes = new Map<string, NodeState>()
  // Every node ever started, those a restart replaced included: all of them are ended by `dispose`.
  const everyNode: Array<NodeState> = []
  let disposing = false
  let steps = 0

  const note = (line: string) => {
    trace.push(line)
    options.onTrace?.(line)
  }
  const schedule = (time: number, run: () => void) => agenda.push(Math.max(time, now), run)

  // Runs `action` on the node now, or when it resumes; never on a killed node.
  const onNode = (node: NodeState, action: () => void) => {
    if (node.status === "killed") return
    if (node.status === "paused") node.held.push(action)
    else action()
  }

  const clock: Clock.Clock = {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: () => now,
    currentTimeMillis: Effect.sync(() => now),
    unsafeCurrentTimeNanos: () => BigInt(now) * 1_000_000n,
    currentTimeNanos: Effect.sync(() => BigInt(now) * 1_000_000n),
    sleep: (duration: Duration.Duration) =>
      Effect.async<void>((resume) => {
        const event = schedule(now + Duration.toMillis(duration), () => resume(Effect.void))
        return Effect.sync(() => {
          event.cancelled = true
        })
      })
  }

  // ---- the network ---------------------------------------------------------------------------------------

  const net = Network.make({
    now: () => now,
    schedule,
    random,
    network: () => network,
    note,
    fault,
    onNode
  })
  const { breakConnection, closeEnd, latency, listeners, severed } = net

  // ---- nodes ---------------------------------------------------------------------------------------------

  const handle = (state: NodeState): Node => ({
    name: state.name,
    get status() {
      return state.status
    },
    get exit() {
      return state.exit
    },
    kill: () => {
      if (state.status === "killed" || state.status === "ended") return
      note(`${now} ${state.name} killed`)
      fault("kill", state.name)
      state.status = "killed"
      state.held.length = 0
      for (const key of state.listeners) listeners.delete(key)
      state.listeners.clear()
      for (const end of [...state.ends]) {
        end.closed = true
        const peer = end.peer
        schedule(now + latency(), () => closeEnd(peer, "connection reset by peer"))
      }
      state.ends.clear()
    },
    stop: () => {
      if (state.fiber === undefined || state.status === "killed" || state.status === "ended") return
      note(`${now} ${state.name} stopped`)
      Effect.runFork(Fiber.interrupt(state.fiber), { scheduler: state.scheduler })
    },
    pause: () => {
      if (state.status !== "running") return
      note(`${now} ${state.name} paused`)
      fault("pause", state.name)
      state.status = "paused"
    },
    evaluate: <A, E>(effect: Effect.Effect<A, E>) => {
      if (state.status !== "running") return undefined
      let outcome: Exit.Exit<A, E> | undefined
      const fiber = Effect.runFork(effect.pipe(Effect.withClock(clock), Effect.withScheduler(state.scheduler)), {
        scheduler: state.scheduler
      })
      fiber.addObserver((exit) => {
        outcome = exit
      })
      settle()
      return outcome
    },
    resume: () => {
      if (state.status !== "paused") return
      note(`${now} ${state.name} resumed`)
      state.status = "running"
      // The node's own due work (its timers) runs before what waited in its sockets.
      schedule(now, () => {
        for (const action of state.held.splice(0)) onNode(state, action)
      })
    }
  })

  const start: Simulation["start"] = (name, program) => {
    const existing = nodes.get(name)
    if (existing !== undefined && (existing.status === "running" || existing.status === "paused")) {
      throw new Error(`node ${name} is already running`)
    }
    const state: NodeState = {
      name,
      scheduler: new Scheduler.ControlledScheduler(),
      status: "running",
      exit: undefined,
      fiber: undefined,
      held: [],
      ends: new Set(),
      listeners: new Set()
    }
    nodes.set(name, state)
    everyNode.push(state)
    note(`${now} ${name} started`)
    const logger = Logger.make(({ cause, logLevel, message }) => {
      const text = Array.isArray(message) ? message.map(String).join(" ") : String(message)
      const detail = cause._tag === "Empty" ? "" : ` (${String(cause).split("\n")[0]})`
      note(`${now} ${name} ${levelName(logLevel.label)} ${text}${detail}`)
    })
    const fiber = Effect.runFork(
      (options.around === undefined ? program : options.around(program)).pipe(
        Effect.scoped,
        Effect.provideService(Transport.Transport, net.transportFor(state)),
        Effect.provide(Logger.replace(Logger.defaultLogger, logger)),
        Effect.withClock(clock),
        Effect.withRandom(Random.make(`${options.seed}/${name}/${trace.length}`)),
        Effect.withScheduler(state.scheduler)
      ),
      { scheduler: state.scheduler }
    )
    state.fiber = fiber
    fiber.addObserver((exit) => {
      if (state.status === "killed") return
      state.status = "ended"
      state.exit = exit
      note(`${now} ${name} ended: ${Exit.isSuccess(exit) ? "success" : String(Exit.causeOption(exit)).split("\n")[0]}`)
    })
    return handle(state)
  }

  // ---- running ---------------------------------------------------------------------------------------------

  // Runs every node's ready fibers until none is left; nodes take turns in the order they were started.
  const settle = () => {
    let rounds = 0
    for (let moved = true; moved;) {
      moved = false
      for (const node of disposing ? everyNode : nodes.values()) {
        if (node.status !== "running" && node.status !== "ended") continue
        if (node.scheduler.tasks.buckets.length === 0) continue
        node.scheduler.step()
        moved = true
      }
      if (++rounds > 1_000_000) throw new Livelock(now)
    }
  }

  const advance = (deadline: number, done: () => boolean): boolean => {
    for (;;) {
      settle()
      if (done()) return true
      const next = agenda.peek()
      if (next === undefined || next.time > deadline) {
        now = Math.max(now, deadline)
        settle()
        return done()
      }
      agenda.pop()
      now = Math.max(now, next.time)
      steps++
      next.run()
    }
  }

  return {
    seed: options.seed,
    now: () => now,
    random,
    trace,
    faults,
    steps: () => steps,
    start,
    node: (name) => {
      const state = nodes.get(name)
      return state === undefined ? undefined : handle(state)
    },
    at: (delayMillis, action) => {
      schedule(now + delayMillis, action)
    },
    partition: (a, b) => {
      note(`${now} network partitions ${a} | ${b}`)
      fault("partition", a, b)
      net.partition(a, b)
      for (const node of nodes.values()) {
        for (const end of [...node.ends]) {
          if (severed(end.node, end.peer.node)) breakConnection(end, "network partition")
        }
      }
    },
    heal: (a, b) => {
      note(`${now} network heals ${a} | ${b}`)
      net.heal(a, b)
    },
    healAll: () => {
      if (net.healAll()) note(`${now} network heals all`)
    },
    setNetwork: (next) => {
      network = { ...network, ...next }
    },
    note: (line) => note(`${now} ${line}`),
    runFor: (millis) => {
      advance(now + millis, () => false)
    },
    runUntil: (done, maxMillis) => advance(now + maxMillis, done),
    dispose: () => {
      disposing = true
      net.healAll()
      for (const node of everyNode) {
        node.held.length = 0
        node.status = "running"
      }
      const schedulers = new Set<Scheduler.Scheduler>(everyNode.map((node) => node.scheduler))
      const ours = () => Fiber.unsafeRoots().filter((fiber) => schedulers.has(fiber.currentScheduler))
      // Finalizers may fork fibers of their own, and wait on timers: a few rounds, each with time to move.
      for (let round = 0; round < 20 && ours().length > 0; round++) {
        for (const fiber of ours()) fiber.unsafeInterruptAsFork(FiberId.none)
        advance(now + 5_000, () => ours().length === 0)
      }
    }
  }
}
