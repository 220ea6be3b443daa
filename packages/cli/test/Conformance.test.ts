// `kindling conformance` against Kindling's own master and worker, real processes on 127.0.0.1, with and without a
// shared secret: every check passes. And against a peer that never answers, the kit fails and says so.
import { assert, describe, it } from "@effect/vitest"
import { Deadlines } from "@kindling/protocol/testing"
import { Conformance } from "@kindling/rpc/testing"
import { Effect } from "effect"
import * as Net from "node:net"
import * as Path from "node:path"
import {
  authenticated,
  effectiveSecret,
  plaintextOnly,
  run,
  startMaster,
  startWorker,
  temporaryDirectory
} from "./fixtures/cluster.js"

const conformance = (target: string, role: Conformance.Role, extra: ReadonlyArray<string> = []) =>
  run(["conformance", "--target", target, "--role", role, ...extra])

// Every check of the role passed, each on a line of its own.
const expectAllPassed = (
  outcome: { readonly code: number | null; readonly stdout: string; readonly stderr: string },
  role: Conformance.Role,
  secret?: string
) => {
  const names = Conformance.checks({ role, secret: effectiveSecret(secret) }).map((check) => check.name)
  const lines = outcome.stdout.trim().split("\n")
  assert.deepStrictEqual(lines.slice(0, -1), names.map((name) => `pass  ${name}`), outcome.stdout + outcome.stderr)
  assert.match(lines.at(-1)!, new RegExp(`^${names.length} of ${names.length} checks passed against the ${role} at `))
  assert.strictEqual(outcome.code, 0)
}

const playBoth = (secret?: string) =>
  Effect.gen(function*() {
    const dir = yield* temporaryDirectory
    const auth = secret === undefined ? [] : authenticated(secret)
    const master = yield* startMaster(auth)
    const worker = yield* startWorker(master.url, Path.join(dir, "worker"), auth)
    const flags = secret === undefined ? [] : ["--secret", secret]
    expectAllPassed(yield* conformance(master.url, "master", flags), "master", secret)
    expectAllPassed(yield* conformance(`kindling://127.0.0.1:${worker.port}`, "worker", flags), "worker", secret)
    // The node went on running through all of it.
    assert.isNull(yield* Effect.sync(() => master.node.output().match(/Defect|Unhandled/)))
  })

describe("kindling conformance", () => {
  it.scopedLive("our master and worker pass every check", () => playBoth(), 120_000)

  it.scopedLive("our master and worker pass every check with a shared secret", () => playBoth("conformance"), 120_000)

  it.scopedLive.skipIf(plaintextOnly)(
    "against a peer that accepts connections and never answers, every check fails and it exits 1",
    () =>
      Effect.gen(function*() {
        // Holds every connection open, reading nothing, until the test ends.
        const sockets = new Set<Net.Socket>()
        const silent = yield* Effect.acquireRelease(
          Effect.async<Net.Server>((resume) => {
            const server = Net.createServer((socket) => sockets.add(socket))
            server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
          }),
          (server) =>
            Effect.async<void>((resume) => {
              for (const socket of sockets) socket.destroy()
              server.close(() => resume(Effect.void))
            })
        )
        const port = (silent.address() as Net.AddressInfo).port
        const outcome = yield* conformance(`kindling://127.0.0.1:${port}`, "master", ["--timeout", "1"])
        const lines = outcome.stdout.trim().split("\n")
        assert.strictEqual(outcome.code, 1)
        assert.match(lines[0]!, /^FAIL {2}handshake: .+: nothing came within 1s, waiting for a welcome$/)
        const total = Conformance.checks({ role: "master" }).length
        assert.strictEqual(lines.length, total + 1)
        for (const line of lines.slice(1, -1)) assert.match(line, /^FAIL {2}.+: not run: the node did not complete/)
        assert.strictEqual(
          lines.at(-1),
          `0 of ${total} checks passed against the master at kindling://127.0.0.1:${port}`
        )
      }),
    Deadlines.scaled(60_000)
  )
})
