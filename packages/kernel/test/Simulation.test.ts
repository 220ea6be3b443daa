import { assert, describe, it } from "@effect/vitest"
import { Simulation } from "@kindling/kernel/testing"
import { Endpoints, RpcAddress, SubmissionMessages } from "@kindling/protocol"
import { RpcEnv } from "@kindling/rpc"
import { Effect, Exit } from "effect"

const readyz = Endpoints.kind("Readyz", SubmissionMessages.RequestReadyz)

// A server that answers readyz, and a client that asks it every second and notes each answer or failure.
const world = (seed: number, network: Partial<Simulation.NetworkOptions> = {}) => {
  const sim = Simulation.make({ seed, network })
  const answers: Array<string> = []
  sim.start(
    "server",
    Effect.gen(function*() {
      const rpc = yield* RpcEnv.make({ host: "server", port: 7077 })
      yield* rpc.register(readyz.name, {
        inbound: readyz.inbound,
        handlers: { RequestReadyz: () => Effect.succeed(true) }
      })
      yield* Simulation.forever
    })
  )
  sim.start(
    "client",
    Effect.gen(function*() {
      const rpc = yield* RpcEnv.make({ askTimeout: "3 seconds" })
      const server = Endpoints.ref(RpcAddress.make("server", 7077), readyz)
      for (let i = 0; i < 20; i++) {
        const answer = yield* Effect.exit(rpc.ask(server, new SubmissionMessages.RequestReadyz()))
        answers.push(Exit.isSuccess(answer) ? "ok" : Exit.isFailure(answer) ? String(answer.cause).slice(0, 40) : "")
        yield* Effect.sleep("1 second")
      }
    })
  )
  return { sim, answers }
}

describe("Simulation", () => {
  it("runs real RpcEnvs over the simulated network on simulated time", () => {
    const { answers, sim } = world(1)
    const start = sim.now()
    sim.runUntil(() => sim.node("client")?.status === "ended", 60_000)
    assert.deepStrictEqual(answers, Array.from({ length: 20 }, () => "ok"))
    // Twenty answers a second apart, each a few ms of latency: about 20 s of simulated time.
    assert.isAtLeast(sim.now() - start, 19_000)
    assert.isAtMost(sim.now() - start, 21_000)
  })

  it("a run is a pure function of its seed", () => {
    const faults = { latencyMillis: [1, 400] as const, breakRate: 0.05, duplicateRate: 0.1 }
    const run = (seed: number) => {
      const { answers, sim } = world(seed, faults)
      sim.runFor(60_000)
      return { answers, trace: [...sim.trace], steps: sim.steps() }
    }
    const first = run(7)
    assert.deepStrictEqual(run(7), first)
    assert.notDeepEqual(run(8).trace, first.trace)
  })

  it("a partition fails asks until it heals; a paused server answers once it resumes", () => {
    const { answers, sim } = world(3)
    sim.runFor(2_500)
    sim.partition("client", "server")
    sim.runFor(5_000)
    sim.heal("client", "server")
    sim.runFor(3_000)
    const server = sim.node("server")!
    server.pause()
    sim.runFor(2_000)
    server.resume()
    sim.runFor(20_000)
    const failed = answers.filter((a) => a !== "ok")
    assert.isAbove(failed.length, 0)
    assert.isTrue(answers.slice(-5).every((a) => a === "ok"), answers.join(", "))
    assert.strictEqual(answers.length, 20)
  })

  it("dispose ends every node, killed ones and their daemons included, finalizers and all", () => {
    const sim = Simulation.make({ seed: 1 })
    const ended: Array<string> = []
    const node = (name: string) =>
      Effect.gen(function*() {
        yield* Effect.addFinalizer(() => Effect.sync(() => ended.push(name)))
        // A daemon of its own that waits for ever, as a process watcher does.
        yield* Effect.forkDaemon(
          Effect.onInterrupt(Simulation.forever, () => Effect.sync(() => ended.push(`${name}'s daemon`)))
        )
        return yield* Simulation.forever
      })
    sim.start("alive", node("alive"))
    sim.start("killed", node("killed"))
    sim.runFor(1_000)
    sim.node("killed")!.kill()
    sim.runFor(1_000)
    assert.deepStrictEqual(ended, [])
    sim.dispose()
    assert.sameMembers(ended, ["alive", "alive's daemon", "killed", "killed's daemon"])
  })
})
