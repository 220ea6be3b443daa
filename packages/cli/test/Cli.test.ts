// The kindling command on bad input: a clear message and a non-zero exit, never a stack trace.
import { assert, describe, it } from "@effect/vitest"
import { Deadlines } from "@kindling/protocol/testing"
import { Effect } from "effect"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Path from "node:path"
import {
  freePort,
  isRunning,
  kindling,
  plaintextOnly,
  root,
  run,
  start,
  startMaster,
  temporaryDirectory
} from "./fixtures/cluster.js"

interface Outcome {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** `kindling <args>` with extra environment variables; also returns the pid of the process. */
const runWith = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  Effect.async<Outcome & { readonly pid: number }>((resume) => {
    const child = ChildProcess.execFile(
      kindling[0],
      [...kindling.slice(1), ...args],
      { cwd: root, timeout: 60_000, env: { ...process.env, ...env } },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : (error.code as number | null) ?? null
        resume(Effect.succeed({ code, stdout, stderr, pid: child.pid! }))
      }
    )
  })

/** Asserts the exit code and the text, and that nothing looks like a stack trace. */
const expectRejected = (outcome: Outcome, code: number, ...texts: Array<string | RegExp>) => {
  const output = `${outcome.stdout}${outcome.stderr}`
  assert.strictEqual(outcome.code, code, output)
  for (const text of texts) {
    if (typeof text === "string") assert.include(output, text)
    else assert.match(output, text)
  }
  assert.notInclude(output, "    at ", output)
}

/** Resolves to whether something accepts connections on 127.0.0.1:port. */
const listening = (port: number) =>
  Effect.async<boolean>((resume) => {
    const socket = Net.connect(port, "127.0.0.1")
    socket.once("connect", () => {
      socket.destroy()
      resume(Effect.succeed(true))
    })
    socket.once("error", () => resume(Effect.succeed(false)))
  })

describe("kindling on bad input", () => {
  describe("the command line", () => {
    it.live("--version prints the version and the commit", () =>
      Effect.gen(function*() {
        const outcome = yield* run(["--version"])
        assert.strictEqual(outcome.code, 0, outcome.stderr)
        assert.match(outcome.stdout.trim(), /^0\.1\.0 \(commit [0-9a-f]{7}\)$/)
        assert.notInclude(outcome.stderr, "    at ")
      }))

    it.live("--help lists every command", () =>
      Effect.gen(function*() {
        const outcome = yield* run(["--help"])
        assert.strictEqual(outcome.code, 0, outcome.stderr)
        for (const name of ["master", "worker", "submit", "status", "kill"]) {
          assert.match(outcome.stdout, new RegExp(`- ${name} `), name)
        }
      }))

    it.live("an unknown flag exits 2 and names the flag", () =>
      Effect.gen(function*() {
        expectRejected(yield* run(["master", "--bogus"]), 2, "--bogus")
      }))

    it.live("an unknown option is named with the one it most likely meant, a Spark-only one with what to use", () =>
      Effect.gen(function*() {
        expectRejected(
          yield* run(["submit", "--deploy-mod", "cluster", "--master", "local[2]", "examples/pi.ts"]),
          2,
          "kindling submit has no option --deploy-mod (did you mean --deploy-mode?)"
        )
        expectRejected(
          yield* run(["status", "--mastr", "kindling://127.0.0.1:1", "driver-1"]),
          2,
          "kindling status has no option --mastr (did you mean --master?)"
        )
        expectRejected(
          yield* run(["submit", "--num-executors", "2", "--master", "local[2]", "examples/pi.ts"]),
          2,
          "Spark's --num-executors",
          "--total-executor-cores"
        )
      }))

    it.live("--conf without a value is said in one line", () =>
      Effect.gen(function*() {
        const outcome = yield* run(["submit", "--conf", "kindling.app.name", "--master", "local[2]", "examples/pi.ts"])
        expectRejected(outcome, 2, "--conf kindling.app.name has no value: give it as --conf kindling.app.name=VALUE")
        assert.lengthOf(`${outcome.stdout}${outcome.stderr}`.trim().split("\n"), 1)
      }))

    it.live("--log-level is taken after the command as before it", () =>
      Effect.gen(function*() {
        const quiet = yield* run(["submit", "--log-level", "warning", "--master", "local[1]", "examples/pi.ts", "1"])
        assert.strictEqual(quiet.code, 0, quiet.stderr)
        assert.notMatch(quiet.stderr, / INFO /)
        assert.include(quiet.stdout, "Pi is roughly")
        const chatty = yield* run(["submit", "--master", "local[1]", "--log-level=info", "examples/pi.ts", "1"])
        assert.strictEqual(chatty.code, 0, chatty.stderr)
        assert.match(chatty.stderr, / INFO /)
      }))

    it.live("help written to a pipe has no colour codes", () =>
      Effect.gen(function*() {
        const outcome = yield* run(["submit", "--help"])
        assert.strictEqual(outcome.code, 0, outcome.stderr)
        assert.include(outcome.stdout, "--deploy-mode")
        assert.notInclude(outcome.stdout, "\u001b[")
      }))

    it.live("submit --help says what submit does and every form of --master, without boilerplate", () =>
      Effect.gen(function*() {
        const outcome = yield* run(["submit", "--help"])
        assert.strictEqual(outcome.code, 0, outcome.stderr)
        const help = outcome.stdout
        assert.match(help, /^kindling 0\.1\.0 \(commit [0-9a-f]{7}\)\n/)
        assert.include(help, "\n$ kindling submit [--master text]")
        assert.include(help, "Run an app: in this process")
        for (const form of ["local[N]", "local[*]", "local[N,F]", "local-cluster[W,C,M]", "kindling://host:port"]) {
          assert.include(help, form)
        }
        for (const boilerplate of ["A user-defined piece of text", "This setting is optional", "An integer."]) {
          assert.notInclude(help, boilerplate)
        }
      }))

    it.scopedLive("a worker that no master answers gives up after its attempts and exits 1", () =>
      Effect.gen(function*() {
        const port = yield* freePort
        const dir = yield* temporaryDirectory
        const outcome = yield* run([
          "worker",
          `kindling://127.0.0.1:${port}`,
          "--host",
          "127.0.0.1",
          "--work-dir",
          Path.join(dir, "work"),
          "--conf",
          "kindling.worker.register.initialInterval=100ms",
          "--conf",
          "kindling.worker.register.initialAttempts=1",
          "--conf",
          "kindling.worker.register.prolongedInterval=100ms",
          "--conf",
          "kindling.worker.register.maxAttempts=2"
        ])
        expectRejected(outcome, 1, "All masters are unresponsive")
      }))
  })

  describe("configuration", () => {
    it.live("an unknown --conf key", () =>
      Effect.gen(function*() {
        expectRejected(
          yield* run(["master", "--conf", "kindling.bogus=1"]),
          1,
          "kindling.bogus is not a Kindling configuration key"
        )
      }))

    it.live("a --conf value of the wrong type names the key and the expected type", () =>
      Effect.gen(function*() {
        expectRejected(
          yield* run(["master", "--conf", "kindling.worker.timeout=abc"]),
          1,
          "kindling.worker.timeout",
          "duration"
        )
      }))

    it.live("--conf flags between other options are all read, as spark-submit reads them", () =>
      Effect.gen(function*() {
        expectRejected(
          yield* run(["master", "--conf", "kindling.bogus=1", "--port", "0", "--conf", "kindling.worker.timeout=abc"]),
          1,
          "kindling.bogus is not a Kindling configuration key",
          "kindling.worker.timeout"
        )
      }))

    it.live("a misspelt key suggests the right one", () =>
      Effect.gen(function*() {
        expectRejected(
          yield* run(["master", "--conf", "kindling.worker.timout=5s"]),
          1,
          "kindling.worker.timout",
          "did you mean kindling.worker.timeout?"
        )
      }))

    it.live("a bad value in the environment names the environment", () =>
      Effect.gen(function*() {
        expectRejected(
          yield* runWith(["master"], { KINDLING_WORKER_TIMEOUT: "abc" }),
          1,
          "environment",
          "kindling.worker.timeout",
          "duration"
        )
      }))

    it.scopedLive("a missing --properties-file", () =>
      Effect.gen(function*() {
        const dir = yield* temporaryDirectory
        const missing = Path.join(dir, "missing.conf")
        expectRejected(yield* run(["master", "--properties-file", missing]), 1, missing, "does not exist")
      }))

    it.scopedLive("a properties file with a bad line names the file and the line", () =>
      Effect.gen(function*() {
        const dir = yield* temporaryDirectory
        const file = Path.join(dir, "kindling.conf")
        Fs.writeFileSync(file, "# defaults\nkindling.worker.timeout 5s\n\n=novalue\n")
        expectRejected(yield* run(["master", "--properties-file", file]), 1, `${file} line 4`, "key=value")
      }))

    it.live("FILESYSTEM recovery without a directory is refused, and no process is left behind", () =>
      Effect.gen(function*() {
        const port = yield* freePort
        const outcome = yield* runWith([
          "master",
          "--host",
          "127.0.0.1",
          "--port",
          String(port),
          "--conf",
          "kindling.deploy.recoveryMode=FILESYSTEM"
        ], {})
        expectRejected(outcome, 1, "kindling.deploy.recoveryDirectory is not set")
        assert.isFalse(isRunning(outcome.pid))
        assert.isFalse(yield* listening(port))
      }))
  })

  describe("worker", () => {
    it.live("an invalid master URL", () =>
      Effect.gen(function*() {
        expectRejected(yield* run(["worker", "not-a-url"]), 1, "Invalid master URL", "not-a-url")
      }))

    it.live("a bad --memory", () =>
      Effect.gen(function*() {
        expectRejected(yield* run(["worker", "kindling://127.0.0.1:1", "--memory", "2x"]), 1, "--memory", "2x")
      }))
  })

  describe.skipIf(plaintextOnly)("secure by default", () => {
    const everywhere = ["--host", "0.0.0.0", "--port", "0", "--conf", "kindling.master.ui.port=0"]

    it.live("a master or worker on an address other than loopback without a secret refuses to start", () =>
      Effect.gen(function*() {
        expectRejected(
          yield* run(["master", ...everywhere]),
          1,
          "The master would listen on 0.0.0.0 (0.0.0.0), not a loopback address, without a secret",
          "kindling.authenticate=true with kindling.authenticate.secret"
        )
        expectRejected(
          yield* run(["worker", "kindling://127.0.0.1:1", "--host", "0.0.0.0", "--conf", "kindling.worker.ui.port=0"]),
          1,
          "The worker would listen on 0.0.0.0 (0.0.0.0), not a loopback address, without a secret"
        )
      }))

    it.scopedLive(
      "starts there with a secret, or with kindling.authenticate=false and a warning",
      () =>
        Effect.gen(function*() {
          const secured = yield* start([
            "master",
            ...everywhere,
            "--conf",
            "kindling.authenticate=true",
            "--conf",
            "kindling.authenticate.secret=a secret long enough"
          ])
          yield* secured.waitFor(/Starting Kindling master at kindling:\/\/0\.0\.0\.0:\d+/)
          assert.notInclude(secured.output(), "without authentication")
          const open = yield* start(["master", ...everywhere, "--conf", "kindling.authenticate=false"])
          yield* open.waitFor(
            /The master listens on 0\.0\.0\.0 without authentication \(kindling\.authenticate=false\)/
          )
          yield* open.waitFor(/Starting Kindling master at kindling:\/\/0\.0\.0\.0:\d+/)
        }),
      Deadlines.scaled(60_000)
    )
  })

  describe("submit, status, kill", () => {
    it.live("submit of an app that does not exist says so, whichever the master and deploy mode", () =>
      Effect.gen(function*() {
        for (const master of ["kindling://127.0.0.1:1", "local[2]", "local-cluster[1,1,512]"]) {
          expectRejected(
            yield* run(["submit", "--master", master, "/no/such/app.mjs"]),
            1,
            "The app /no/such/app.mjs does not exist"
          )
        }
      }))

    it.live("status against a master nobody runs is a connection error", () =>
      Effect.gen(function*() {
        const port = yield* freePort
        expectRejected(
          yield* run(["status", "--master", `kindling://127.0.0.1:${port}`, "driver-x"]),
          1,
          /connect|connection/i,
          `127.0.0.1:${port}`
        )
      }))

    it.scopedLive("submit of a missing app, and kill of an unknown driver, against a running master", () =>
      Effect.gen(function*() {
        const master = yield* startMaster()
        expectRejected(
          yield* run(["submit", "--master", master.url, "--deploy-mode", "cluster", "/no/such/app.mjs"]),
          1,
          "/no/such/app.mjs",
          "does not exist"
        )
        expectRejected(
          yield* run(["kill", "--master", master.url, "driver-unknown"]),
          1,
          "driver-unknown",
          "does not exist"
        )
        // The master shrugs both off.
        assert.isTrue(isRunning(master.node.pid))
        assert.notInclude(master.node.output(), "    at ")
      }))
  })
})
