// The commands against a master URL whose first master is blackholed (its host drops connection attempts, as
// one behind a cut link): they dial every master at once, use the leader, never wait on the dead one beyond the
// lookup timeout, exit as soon as their work is done, and stop at once on SIGTERM.
import { assert, describe, it } from "@effect/vitest"
import { Deadlines } from "@kindling/protocol/testing"
import { Effect } from "effect"
import { app, cluster, run, start } from "./fixtures/cluster.js"
import { blackholedPort } from "./fixtures/peers.js"

// Prints its answer with the moment it had it, so that the test can tell how long the command took to exit after.
const counts = `import { App, Kindling } from "@kindling/app"
import { Console, Effect } from "effect"
export default App.make(() =>
  Effect.gen(function*() {
    const kc = yield* Kindling
    const n = yield* kc.range(0, 1000, 1, 4).map((x) => x * 2).filter((x) => x % 3 === 0).count()
    yield* Console.log(\`answer \${n} at \${Date.now()}\`)
  }))
`

const timed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const started = Date.now()
    const result = yield* effect
    return { result, millis: Date.now() - started }
  })

// Without the lookup timeout, a dial to the blackholed master waits for the kernel to give up: over two minutes.
// A command is prompt when it ends within this deadline (scaled with the machine's load, as every deadline).
const promptly = Deadlines.scaled(8_000)
// A lookup timeout no command may wait out: whatever still waits on the dead master when its work is done shows.
const patient = ["--conf", "kindling.rpc.lookupTimeout=120s"]

describe("a master URL whose first master is blackholed", () => {
  it.scopedLive(
    "status, submit, kill and a client-mode job use the leader and never wait on the dead master",
    () =>
      Effect.gen(function*() {
        const { dir, master } = yield* cluster(1)
        const dead = `127.0.0.1:${yield* blackholedPort}`
        const url = `kindling://${dead},${master.url.slice("kindling://".length)}`

        const listed = yield* timed(run(["status", "--master", url]))
        assert.strictEqual(listed.result.code, 0, listed.result.stderr)
        const states = JSON.parse(listed.result.stdout) as Array<{ master: string; status?: string; error?: string }>
        assert.strictEqual(states[0]!.master, `kindling://${dead}`)
        assert.include(states[0]!.error, "no answer within 2s (kindling.rpc.lookupTimeout)")
        assert.strictEqual(states[1]!.status, "ALIVE")
        assert.isBelow(listed.millis, promptly)

        const path = app(dir, "counts.ts", counts)
        const submitted = yield* timed(run(["submit", "--master", url, "--deploy-mode", "cluster", "--wait", path]))
        assert.strictEqual(submitted.result.code, 0, submitted.result.stdout + submitted.result.stderr)
        const driverId = submitted.result.stdout.trim().split("\n")[0]!
        assert.include(submitted.result.stdout, `${driverId} FINISHED`)
        assert.isBelow(submitted.millis, 2 * promptly)
        const status = yield* timed(run(["status", "--master", url, driverId]))
        assert.strictEqual(JSON.parse(status.result.stdout).state, "FINISHED", status.result.stderr)
        assert.isBelow(status.millis, promptly)
        const kill = yield* timed(run(["kill", "--master", url, driverId]))
        assert.include(kill.result.stdout + kill.result.stderr, driverId)
        assert.isBelow(kill.millis, promptly)

        // Client mode: the driver runs in the command, which registers its app with every master of the URL.
        const client = yield* start(["submit", "--master", url, ...patient, path])
        const [, answer, at] = yield* client.waitFor(/answer (\d+) at (\d+)/, 60_000)
        const code = yield* client.exited
        const exitedAfter = Date.now() - Number(at)
        assert.strictEqual(answer, "334")
        assert.strictEqual(code, 0, client.output())
        assert.isBelow(exitedAfter, Deadlines.scaled(1_000), client.output())
      }),
    Deadlines.scaled(120_000)
  )

  it.scopedLive(
    "every command stops at once on SIGTERM, with 143, even while it dials a dead master",
    () =>
      Effect.gen(function*() {
        const dead = `kindling://127.0.0.1:${yield* blackholedPort}`
        const commands = [
          ["status", "--master", dead, ...patient],
          ["status", "--master", dead, "driver-20261205000000-0000", ...patient],
          ["submit", "--master", dead, "--deploy-mode", "cluster", "--wait", ...patient, "https://example.invalid/a.js"]
        ]
        for (const args of commands) {
          const command = yield* start(args)
          // Long enough to be past start-up and dialling (a command from sources starts in about a second).
          yield* Effect.sleep(3_000)
          assert.isNull(yield* command.exited.pipe(Effect.timeout(1), Effect.orElseSucceed(() => null)))
          const signalled = Date.now()
          yield* command.kill("SIGTERM")
          const code = yield* command.exited
          assert.strictEqual(code, 143, `${args.join(" ")}: ${command.output()}`)
          assert.isBelow(Date.now() - signalled, Deadlines.scaled(1_000), args.join(" "))
        }
      }),
    Deadlines.scaled(60_000)
  )
})
