import { assert, describe, it } from "@effect/vitest"
import { Core, Shell } from "@kindling/kernel"
import { Simulation } from "@kindling/kernel/testing"
import { Endpoints, Errors, RpcAddress, SubmissionMessages } from "@kindling/protocol"
import { RpcEnv } from "@kindling/rpc"
import { Cause, Effect, Exit } from "effect"
import { submitDriver } from "./fixtures/submission.js"

// A toy role that exercises every part of the shell. Readyz asks are answered after a slow command of the role's
// own; kill-all makes the core throw; clear breaks the role's invariant; a status ask starts a timer that ticks
// three times and feeds back into the core; a kill's command fails, an upload's is abandoned; a submission's
// command is carried out in the interpreter's call (no effect) — and the second one throws there.
interface State {
  ticks: number
  broken: boolean
  readonly log: Array<string>
}
type Local = { readonly _tag: "Tick" } | { readonly _tag: "Echo"; readonly text: string }
type Command =
  | { readonly _tag: "Slow"; readonly millis: number }
  | { readonly _tag: "Fail" }
  | { readonly _tag: "Refused" }
  | { readonly _tag: "AtOnce" }
type Inbound = SubmissionMessages.SubmissionRequest

const kind = Endpoints.kind("Toy", SubmissionMessages.SubmissionRequest)

const receive = Core.dispatch<Inbound, Core.Out<Local, Command> & { readonly state: State }>({
  RequestReadyz: (out, _, ask) => {
    out.commands.push({ _tag: "Slow", millis: 100 })
    Core.reply(out, ask, Exit.succeed(true))
  },
  RequestKillAllDrivers: () => {
    throw new Error("a bug in the core")
  },
  RequestClearCompletedDriversAndApps: (out, _, ask) => {
    out.state.broken = true
    Core.reply(out, ask, Exit.succeed(true))
  },
  RequestDriverStatus: (out) => Core.startTimer(out, "tick", { _tag: "Tick" }, 1000, 1000),
  RequestKillDriver: (out, _, ask) => {
    out.commands.push({ _tag: "Fail" })
    Core.reply(out, ask, Exit.fail(new Errors.MasterNotAlive({ state: "STANDBY" })))
  },
  RequestSubmitDriver: (out, _, ask) => {
    out.commands.push({ _tag: "AtOnce" })
    Core.reply(out, ask, Exit.fail(new Errors.MasterNotAlive({ state: "STANDBY" })))
  },
  RequestUploadArtifact: (out, { name }, ask) => {
    out.commands.push({ _tag: "Refused" })
    Core.reply(out, ask, Exit.fail(new Errors.ArtifactRejected({ name, reason: "the step's own answer" })))
  }
})

const core: Core.Core<State, Inbound, Local, Command> = {
  endpoint: kind,
  step: (state, input) => {
    const out = { now: input.now, commands: [] as Array<Core.Command<Local, Command>>, state }
    state.log.push(input._tag === "Receive" ? input.message._tag : input._tag)
    switch (input._tag) {
      case "Receive":
        receive(out, input.message, input.ask)
        break
      case "Tick":
        if (++state.ticks === 3) Core.cancelTimer(out, "tick")
        break
      case "Echo":
        state.log.push(input.text)
        break
    }
    return out.commands
  },
  validate: (state) => (state.broken ? ["broken"] : [])
}

const world = (
  wrap?: (core: Core.Core<State, Inbound, Local, Command>) => Core.Core<State, Inbound, Local, Command>
) => {
  const sim = Simulation.make({ seed: 1 })
  const state: State = { ticks: 0, broken: false, log: [] }
  const exits: Array<string> = []
  const done: Array<string> = []
  // Carried out in the call: the first time it feeds the core, the second time it throws (a defect of the shell's
  // interpreter, as one in an effect would be).
  let atOnceCalls = 0
  const atOnce = (host: Shell.Host<Local>) => {
    if (++atOnceCalls === 2) throw new Error("a bug in the interpreter")
    host.feed({ _tag: "Echo", text: "fed at once" })
    return undefined
  }
  sim.start(
    "toy",
    Effect.gen(function*() {
      yield* Shell.make({
        core,
        state,
        validateState: true,
        onExit: (code, reason) => Effect.sync(() => exits.push(`${code} ${reason}`)),
        interpret: (command, host) =>
          command._tag === "AtOnce"
            ? atOnce(host)
            : command._tag === "Fail"
            ? Effect.dieMessage("the disk is full")
            : command._tag === "Refused"
            ? new Shell.Abandoned({ reason: "the store refused" })
            : Effect.sleep(command.millis).pipe(
              Effect.zipRight(Effect.sync(() => {
                done.push(`slow done at ${sim.now()}`)
                // Feeding from inside a command: queued, never waited for.
                host.feed({ _tag: "Echo", text: "fed back" })
              }))
            )
      })
      return yield* Simulation.forever
    }).pipe(
      Effect.provide(RpcEnv.layer({ host: "toy", port: 1 })),
      Effect.provideService(Shell.CoreWrapper, (inner) => (wrap === undefined ? inner : wrap(inner as never)) as never)
    )
  )
  const ask = (message: Inbound) => {
    let outcome: Exit.Exit<unknown, unknown> | undefined
    sim.start(
      `client-${sim.trace.length}`,
      Effect.gen(function*() {
        const rpc = yield* RpcEnv.RpcEnv
        outcome = yield* Effect.exit(
          rpc.ask(Endpoints.ref(RpcAddress.make("toy", 1), kind), message, { timeout: "5 seconds" })
        )
      }).pipe(Effect.provide(RpcEnv.layer({})))
    )
    sim.runUntil(() => outcome !== undefined, 10_000)
    return { outcome, at: sim.now() }
  }
  return { sim, state, exits, done, ask }
}

describe("Shell", () => {
  it("answers an ask only once its step's commands are carried out, and takes inputs fed from a command", () => {
    const { ask, done, state } = world()
    const { at, outcome } = ask(new SubmissionMessages.RequestReadyz())
    assert.deepStrictEqual(outcome, Exit.succeed(true))
    assert.strictEqual(done.length, 1)
    assert.isAtLeast(at, Number(done[0]!.split(" at ")[1]))
    assert.deepStrictEqual(state.log, ["Start", "Connected", "RequestReadyz", "Echo", "fed back"])
  })

  it("runs timers until the core cancels them", () => {
    const { ask, sim, state } = world()
    ask(new SubmissionMessages.RequestDriverStatus({ driverId: "d" as never }))
    sim.runFor(10_000)
    assert.strictEqual(state.ticks, 3)
  })

  it("a core that throws stops the node with code 70 and the stack in the log; its asks get one line", () => {
    const { ask, exits, sim, state } = world()
    const { outcome } = ask(new SubmissionMessages.RequestKillAllDrivers())
    assert.isTrue(Exit.isFailure(outcome!))
    const error = Cause.failureOption((outcome as Exit.Failure<unknown, unknown>).cause)
    assert.strictEqual(error._tag === "Some" && (error.value as Errors.RemoteHandlerError)._tag, "RemoteHandlerError")
    assert.include((error as { value: Errors.RemoteHandlerError }).value.reason, "a bug in the core")
    assert.notInclude((error as { value: Errors.RemoteHandlerError }).value.reason, "\n")
    assert.deepStrictEqual(exits, [
      "70 internal error: failed to handle Receive RequestKillAllDrivers: a bug in the core"
    ])
    assert.isTrue(sim.trace.some((line) => line.includes("ERROR Toy failed to handle Receive RequestKillAllDrivers")))
    // A stopped node handles nothing more: the next ask is refused, and its timers are gone.
    const after = ask(new SubmissionMessages.RequestReadyz()).outcome
    assert.isFalse(after !== undefined && Exit.isSuccess(after))
    assert.notInclude(state.log, "RequestReadyz")
  })

  it("a core wrapped by a test seam runs as wrapped: a throwing timer handler stops the node the same way", () => {
    const { ask, exits, sim, state } = world((inner) => ({
      ...inner,
      step: (state, input) => {
        if (input._tag === "Tick") throw new Error("injected at a tick")
        return inner.step(state, input)
      }
    }))
    ask(new SubmissionMessages.RequestDriverStatus({ driverId: "d" as never }))
    sim.runFor(10_000)
    assert.deepStrictEqual(exits, ["70 internal error: failed to handle Tick: injected at a tick"])
    assert.strictEqual(state.ticks, 0)
  })

  it("a failed command stops the node: exit 1, and the step's ask is not answered with success", () => {
    const { ask, exits } = world()
    const { outcome } = ask(new SubmissionMessages.RequestKillDriver({ driverId: "d" as never }))
    const error = Exit.isFailure(outcome!) ? Cause.failureOption(outcome.cause) : undefined
    assert.strictEqual(error?._tag === "Some" && (error.value as { _tag: string })._tag, "RemoteHandlerError")
    assert.deepStrictEqual(exits, ["1 Fail failed: the disk is full"])
  })

  it("an abandoned step refuses its asks and the node goes on", () => {
    const { ask, exits, sim } = world()
    const { outcome } = ask(new SubmissionMessages.RequestUploadArtifact({ name: "a.js", sha256: "00", size: 1 }))
    const error = Exit.isFailure(outcome!) ? Cause.failureOption(outcome.cause) : undefined
    assert.strictEqual(error?._tag === "Some" && (error.value as { _tag: string })._tag, "RemoteHandlerError")
    assert.include((error as { value: Errors.RemoteHandlerError }).value.reason, "could not carry out Refused")
    assert.isTrue(sim.trace.some((line) => line.includes("Toy abandoned a step: Refused failed: the store refused")))
    assert.deepStrictEqual(ask(new SubmissionMessages.RequestReadyz()).outcome, Exit.succeed(true))
    assert.deepStrictEqual(exits, [])
  })

  it("with validateState, a step that breaks an invariant stops the node with code 70", () => {
    const { ask, exits, state } = world()
    ask(new SubmissionMessages.RequestClearCompletedDriversAndApps())
    assert.deepStrictEqual(exits, [
      "70 state invariant violated after Receive RequestClearCompletedDriversAndApps: broken"
    ])
    const after = ask(new SubmissionMessages.RequestReadyz()).outcome
    assert.isFalse(after !== undefined && Exit.isSuccess(after))
    assert.notInclude(state.log, "RequestReadyz")
  })

  it("a command carried out in the interpreter's call is done: the step's ask is answered, its feed taken next", () => {
    const { ask, exits, state } = world()
    const { outcome } = ask(submitDriver)
    const error = Exit.isFailure(outcome!) ? Cause.failureOption(outcome.cause) : undefined
    assert.strictEqual(error?._tag === "Some" && (error.value as { _tag: string })._tag, "MasterNotAlive")
    assert.deepStrictEqual(state.log, ["Start", "Connected", "RequestSubmitDriver", "Echo", "fed at once"])
    assert.deepStrictEqual(exits, [])
  })

  it("an interpreter that throws in its call stops the node with code 70, as a core that throws does", () => {
    const { ask, exits } = world()
    ask(submitDriver)
    const { outcome } = ask(submitDriver)
    assert.isFalse(outcome !== undefined && Exit.isSuccess(outcome))
    assert.deepStrictEqual(exits, ["70 internal error: failed to carry out a step: a bug in the interpreter"])
  })
})
