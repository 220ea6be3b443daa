/**
 * The processes of a simulated cluster. Workers run their real runners (supervision, kills, final states) over a
 * launcher whose "processes" live on the simulated clock: each one runs for as long as its behaviour says and
 * exits with the code it says, obeys or ignores SIGTERM, and dies with its worker. A behaviour travels in the
 * command's arguments as `sim:run=<ms>,exit=<code>,fails=<n>,term=<obey|ignore>,token=<t>`; `fails` makes the
 * first n runs of a token exit with 1, so a supervised driver eventually succeeds.
 *
 * A command that is a real program — an executor — runs instead as a node of its own on the worker's host, with
 * its real code: `programFor` says which commands those are. SIGTERM stops that node cleanly, SIGKILL kills it.
 *
 * Every run is written in a ledger, which the properties read: what ran where, when, and how it ended.
 *
 * @since 0.1.0
 */
import type { Simulation } from "@kindling/kernel/testing"
import type { Transport } from "@kindling/rpc"
import { ProcessLauncher } from "@kindling/worker"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"

/**
 * What a simulated process does.
 *
 * @since 0.1.0
 * @category models
 */
export interface Behaviour {
  readonly runMillis: number
  readonly exitCode: number
  readonly failingRuns: number
  readonly obeysTerm: boolean
  /** Names the work across relaunches (a relaunched driver gets a new id, not a new token). */
  readonly token: string
}

/**
 * The command-line form of a behaviour.
 *
 * @since 0.1.0
 * @category constructors
 */
export const behaviourArg = (behaviour: Behaviour): string =>
  `sim:run=${behaviour.runMillis},exit=${behaviour.exitCode},fails=${behaviour.failingRuns},` +
  `term=${behaviour.obeysTerm ? "obey" : "ignore"},token=${behaviour.token}`

const isBehaviourArg = (arg: string) => arg.startsWith("sim:run=")

/**
 * Whether a command carries a behaviour, and so runs as a simulated process rather than a program of its own.
 *
 * @since 0.1.0
 * @category predicates
 */
export const carriesBehaviour = (args: ReadonlyArray<string>): boolean => args.some(isBehaviourArg)

const parse = (args: ReadonlyArray<string>): Behaviour => {
  const arg = args.find(isBehaviourArg)
  const fields = new Map(
    (arg ?? "sim:").slice(4).split(",").filter(Boolean).map((kv) => kv.split("=") as [string, string])
  )
  return {
    runMillis: Number(fields.get("run") ?? "1000"),
    exitCode: Number(fields.get("exit") ?? "0"),
    failingRuns: Number(fields.get("fails") ?? "0"),
    obeysTerm: fields.get("term") !== "ignore",
    token: fields.get("token") ?? "none"
  }
}

/**
 * One run of a process.
 *
 * @since 0.1.0
 * @category models
 */
export interface Run {
  readonly pid: number
  readonly worker: string
  /** The runner's directory: `<workDir>/<driverId>` or `<workDir>/<appId>/<execId>`. */
  readonly dir: string
  readonly token: string
  readonly startedAt: number
  endedAt: number | undefined
  /** The exit code, 128 + signal number after a signal, or undefined while it runs or if its worker died. */
  exitCode: number | undefined
  /** Whether it was ever sent a signal (a kill). */
  signalled: boolean
  /** The simulation node a program runs as (an executor), if it is one. */
  node: string | undefined
  /** Crashes a program's process (SIGKILL from outside, as the kernel's OOM killer would): its worker sees it end. */
  crash: (() => void) | undefined
}

/**
 * Every run of the cluster, in start order.
 *
 * @since 0.1.0
 * @category models
 */
export class Ledger {
  readonly runs: Array<Run> = []
  private nextPid = 1000

  start(worker: string, dir: string, token: string, now: number): Run {
    const run: Run = {
      pid: this.nextPid++,
      worker,
      dir,
      token,
      startedAt: now,
      endedAt: undefined,
      exitCode: undefined,
      signalled: false,
      node: undefined,
      crash: undefined
    }
    this.runs.push(run)
    return run
  }

  /** Runs of `token` started before, whatever their outcome. */
  previousRuns(token: string): number {
    return this.runs.filter((r) => r.token === token).length - 1
  }

  /**
   * A killed worker's processes die with it (the parent watch takes their group down); those that are nodes of
   * their own are returned, to be killed.
   */
  workerDied(worker: string, now: number): ReadonlyArray<string> {
    const nodes: Array<string> = []
    for (const run of this.runs) {
      if (run.worker !== worker || run.endedAt !== undefined) continue
      run.endedAt = now
      if (run.node !== undefined) nodes.push(run.node)
    }
    return nodes
  }

  running(): ReadonlyArray<Run> {
    return this.runs.filter((r) => r.endedAt === undefined)
  }
}

const signalNumbers: Record<string, number> = { SIGTERM: 15, SIGKILL: 9 }

/**
 * The commands that run real programs, and the world they run in.
 *
 * @since 0.1.0
 * @category models
 */
export interface Programs {
  readonly sim: Simulation.Simulation
  /**
   * The program a command's arguments run on `host` in `workDir` with the variables its worker gave it,
   * succeeding with its exit code, and the token its runs go by in the ledger; undefined for a scripted process.
   */
  readonly programFor: (
    args: ReadonlyArray<string>,
    host: string,
    workDir: string,
    variables: Readonly<Record<string, string>>
  ) =>
    | { readonly token: string; readonly program: Effect.Effect<number, unknown, Transport.Transport> }
    | undefined
}

/**
 * A launcher for the worker named `worker`, writing in `ledger`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const launcher = (
  worker: string,
  ledger: Ledger,
  programs?: Programs
): ProcessLauncher.ProcessLauncher["Type"] =>
  ProcessLauncher.ProcessLauncher.of({
    spawn: (spec) =>
      Effect.gen(function*() {
        const behaviour = parse(spec.args)
        const now = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
        const program = programs?.programFor(spec.args, worker, spec.cwd, spec.env)
        const run = ledger.start(worker, spec.cwd, program?.token ?? behaviour.token, now)
        const exited = yield* Deferred.make<ProcessLauncher.ProcessExit>()
        // The first end is the one the ledger keeps. (A process that died with its worker has ended already,
        // without a worker to hear of it: its worker's runner, ended with the simulation, still waits for it.)
        const end = (exit: ProcessLauncher.ProcessExit) =>
          Effect.gen(function*() {
            if (run.endedAt === undefined) {
              run.endedAt = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
              run.exitCode = exit.code ?? 128 + (signalNumbers[exit.signal ?? ""] ?? 0)
            }
            yield* Deferred.succeed(exited, exit)
          })
        // The handle the worker holds: `deliver` is what a signal does to this kind of process.
        const spawned = (deliver: (signal: string) => Effect.Effect<void>) => ({
          pid: run.pid,
          exited: Deferred.await(exited),
          signal: (signal: string) =>
            Effect.suspend(() => {
              if (run.endedAt === undefined) run.signalled = true
              return deliver(signal)
            })
        })
        if (program !== undefined && programs !== undefined) {
          const node = `${worker}.pid${run.pid}`
          run.node = node
          programs.sim.start(
            node,
            Effect.flatMap(
              Effect.exit(program.program),
              (exit) => end({ code: Exit.isSuccess(exit) ? exit.value : 1, signal: null })
            )
          )
          // Killed from outside the worker (this may run inside the program itself, at the moment of its death):
          // nothing more of it runs, and its worker hears of it as a parent does, after the fact — once it runs.
          run.crash = () => {
            if (run.endedAt !== undefined) return
            programs.sim.node(node)?.kill()
            const report = () => {
              const parent = programs.sim.node(worker)
              if (parent === undefined || parent.status === "killed" || parent.status === "ended") return
              if (parent.evaluate(end({ code: null, signal: "SIGKILL" })) === undefined) programs.sim.at(100, report)
            }
            programs.sim.at(0, report)
          }
          return spawned((signal) =>
            Effect.suspend(() => {
              if (signal === "SIGKILL") programs.sim.node(node)?.kill()
              else programs.sim.node(node)?.stop()
              return end({ code: null, signal })
            })
          )
        }
        const code = ledger.previousRuns(behaviour.token) < behaviour.failingRuns ? 1 : behaviour.exitCode
        yield* Effect.forkDaemon(Effect.zipRight(Effect.sleep(behaviour.runMillis), end({ code, signal: null })))
        return spawned((signal) =>
          signal === "SIGKILL" || behaviour.obeysTerm
            ? Effect.asVoid(Effect.forkDaemon(Effect.zipRight(Effect.sleep(5), end({ code: null, signal }))))
            : Effect.void
        )
      })
  })
