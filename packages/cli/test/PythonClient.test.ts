// The Python client in examples/python, written from the protocol docs, against a real master and worker with a
// shared secret: it must query the master, run a driver to FINISHED and register a fake worker. A client built
// from the docs alone that works is what shows the docs are enough.
import { assert, describe, it } from "@effect/vitest"
import { Deadlines } from "@kindling/protocol/testing"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import {
  authenticated,
  execute,
  plaintextOnly,
  root,
  startMaster,
  startWorker,
  temporaryDirectory
} from "./fixtures/cluster.js"

// Debian's python3-msgpack (which .ci/run installs) is Debian's python's: a python3 earlier on the PATH, such as
// pyenv's, does not see it.
const python = Fs.existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3"
const client = Path.join(root, "examples", "python", "kindling_client.py")
const secret = "from-the-docs"

const py = (args: ReadonlyArray<string>, key = secret) => execute(python, [client, "--secret", key, ...args], 90_000)

describe.skipIf(plaintextOnly)("examples/python/kindling_client.py", () => {
  it.scopedLive(
    "queries the master, runs a driver to FINISHED and registers a fake worker that heartbeats",
    () =>
      Effect.gen(function*() {
        const dir = yield* temporaryDirectory
        const auth = authenticated(secret)
        const master = yield* startMaster(auth)
        const worker = yield* startWorker(master.url, Path.join(dir, "worker"), auth)

        const state = yield* py(["state", master.url])
        assert.strictEqual(state.code, 0, state.stderr)
        assert.match(state.stdout, /^master 127\.0\.0\.1:\d+ ALIVE: 1 workers \(1 ALIVE\)/)
        assert.include(state.stdout, `-127.0.0.1-${worker.port} ALIVE: 0/2 cores, 0/2048 MB`)

        const out = Path.join(dir, "hello.txt")
        const app = Path.join(root, "examples", "hello-driver.mjs")
        const submit = yield* py(["submit", master.url, app, out, "from", "py"])
        assert.strictEqual(submit.code, 0, submit.stdout + submit.stderr)
        assert.match(
          submit.stdout,
          new RegExp(`^(driver-\\d{14}-\\d{4}) FINISHED on 127\\.0\\.0\\.1:${worker.port}$`, "m")
        )
        assert.match(Fs.readFileSync(out, "utf8"), /^Hello from a Kindling driver on .+: from py\n$/)

        const fake = yield* py(["fake-worker", master.url, "--heartbeats", "2", "--interval", "0.5"])
        assert.strictEqual(fake.code, 0, fake.stdout + fake.stderr)
        const lines = fake.stdout.trim().split("\n")
        assert.match(lines[0]!, /^registered (worker-\d{14}-127\.0\.0\.1-\d+) with 127\.0\.0\.1:\d+$/)
        assert.match(lines[1]!, /^heartbeat 1: the master sees worker-\S+ ALIVE, last heartbeat at \d{13} ms$/)
        assert.match(lines[2]!, /^heartbeat 2: the master sees worker-\S+ ALIVE/)
        // Its connection was the one it registered on: closing it is the worker's going.
        assert.match(lines[3]!, /^after disconnecting: worker-\S+ DEAD$/)

        // A wrong secret gets nowhere, and says why.
        const refused = yield* py(["state", master.url], "wrong")
        assert.strictEqual(refused.code, 1)
        assert.include(refused.stderr, "the node does not know our secret")
      }),
    Deadlines.scaled(120_000)
  )
})
