// `kindling submit` running apps in local mode: the real command, as a process, on real app files.
import { assert, describe, it } from "@effect/vitest"
import { Deadlines, Polling } from "@kindling/protocol/testing"
import { Effect, Fiber } from "effect"
import * as ChildProcess from "node:child_process"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"
import {
  app,
  cluster,
  isRunning,
  kindling,
  masterState,
  root,
  run,
  submitArgs,
  temporaryDirectory
} from "./fixtures/cluster.js"

// Uses an exported function (it travels by name: the task threads import the bundled app) and one that does
// not capture anything (it travels as source text).
const wordLengths = `import { App, Kindling } from "@kindling/app"
import { Console, Effect } from "effect"
const vowels = new Set(["a", "e", "i", "o", "u"])
export const countVowels = (word: string): number => [...word].filter((c) => vowels.has(c)).length
export default App.make((args) =>
  Effect.gen(function*() {
    const kc = yield* Kindling
    const total = yield* kc.parallelize(args, 2).map(countVowels).reduce((a, b) => a + b)
    const longest = yield* kc.parallelize(args, 2).map((w) => w.length).fold(0, (a, b) => Math.max(a, b))
    yield* Console.log(\`vowels \${total}, longest \${longest}\`)
  }))
`

// Partition 0's first attempt kills its executor's process (SIGKILL), as a crash would, mid-job; the job must
// still give the right answer, its lost tasks run again on the other executor.
const executorDies = `import { App, Kindling } from "@kindling/app"
import { Console, Effect } from "effect"
export default App.make(([marker]) =>
  Effect.gen(function*() {
    const kc = yield* Kindling
    const sum = yield* kc.range(0, 1000, 1, 4).mapPartitionsWithIndex((partition, records, env) => {
      const fs = process.getBuiltinModule("node:fs")
      if (partition === 0 && !fs.existsSync(env.marker)) {
        fs.writeFileSync(env.marker, String(process.pid))
        process.kill(process.pid, "SIGKILL")
      }
      return records
    }, { marker }).reduce((a, b) => a + b)
    yield* Console.log(\`sum \${sum}\`)
  }))
`

// Each task says which executor process it runs in, then waits (bounded) until the test says go.
const waitsForGo = `import { App, Kindling } from "@kindling/app"
import { Console, Effect } from "effect"
export default App.make(([dir]) =>
  Effect.gen(function*() {
    const kc = yield* Kindling
    const sum = yield* kc.range(0, 100, 1, 4).mapPartitions((records, env) => {
      const fs = process.getBuiltinModule("node:fs")
      fs.writeFileSync(env.dir + "/started-" + process.pid, "")
      const pause = new Int32Array(new SharedArrayBuffer(4))
      for (let i = 0; i < 1500 && !fs.existsSync(env.dir + "/go"); i++) Atomics.wait(pause, 0, 0, 20)
      return records
    }, { dir }).reduce((a, b) => a + b)
    yield* Console.log(\`sum \${sum}\`)
  }))
`

const parentOf = (pid: number) => {
  const stat = Fs.readFileSync(`/proc/${pid}/stat`, "utf8")
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
}

const failing = `import { App, Kindling } from "@kindling/app"
import { Effect } from "effect"
class Broken extends Error { name = "Broken" }
export default App.make(() => Effect.gen(function*() {
  yield* Kindling
  return yield* Effect.fail(new Broken("the app gave up"))
}))
`

// The master pulls a cluster submission's artifact from `kindling submit`: it must listen where the master reaches it.
const reachable = ["--conf", "kindling.driver.host=127.0.0.1"]

describe("kindling submit", () => {
  it.live("runs examples/pi.ts in local[2]: Pi is roughly 3.1", () =>
    Effect.gen(function*() {
      const result = yield* run(["submit", "--master", "local[2]", "examples/pi.ts", "10"])
      assert.strictEqual(result.code, 0, result.stderr)
      assert.match(result.stdout, /^Pi is roughly 3\.1\d*\n$/)
    }), Deadlines.scaled(60_000))

  it.scopedLive(
    "piped into a reader that leaves early (| head -1), it still stops cleanly and leaves no folder",
    () =>
      Effect.gen(function*() {
        // Its own temporary directory, where the local cluster's folders would be left.
        const tmp = yield* temporaryDirectory
        const command = [...kindling, "submit", "--master", "local-cluster[1,1,1024]", "examples/pi.ts", "4"]
          .map((word) => `'${word}'`).join(" ")
        const first = yield* Effect.async<string>((resume) => {
          ChildProcess.execFile("sh", ["-c", `${command} 2>&1 | head -1`], {
            cwd: root,
            env: { ...process.env, TMPDIR: tmp },
            timeout: 60_000
          }, (_, stdout) => resume(Effect.succeed(stdout)))
        })
        assert.match(first, /INFO/)
        // The command, told of the closed pipe, stops as on SIGTERM: its folders are gone shortly after.
        // (tsx, which runs the command from its sources here, keeps a cache there too.)
        const ours = () => Fs.readdirSync(tmp).filter((name) => name.startsWith("kindling-"))
        yield* Polling.eventually(Effect.sync(ours), (names) => names.length === 0, {
          timeout: 15_000,
          interval: "100 millis",
          describe: (names) => `left behind: ${names?.join(", ")}`
        })
      }),
    Deadlines.scaled(60_000)
  )

  it.scopedLive(
    "runs examples/pi.ts on local-cluster[2,1,1024]: executors are processes of in-process workers, which leave no files",
    () =>
      Effect.gen(function*() {
        // The process's temporary files go to a directory of the test's own, which must be empty once it is over.
        const tmp = yield* temporaryDirectory
        // The app's UI on any free port: another test's app may hold 4040, and a UI moved off the port it asked
        // for is a warning.
        const result = yield* run([
          "submit",
          "--master",
          "local-cluster[2,1,1024]",
          "--conf",
          "kindling.ui.port=0",
          "examples/pi.ts",
          "10"
        ], { TMPDIR: tmp })
        assert.strictEqual(result.code, 0, result.stderr)
        assert.match(result.stdout, /^Pi is roughly 3\.1\d*\n$/)
        assert.match(result.stderr, /Registered executor 0 on 127\.0\.0\.1/)
        // No warning (a UI's port taken, say), but the one a machine too busy to start executors in 15 s is given.
        const warnings = result.stderr.split("\n")
          .filter((line) => /WARN|ERROR/.test(line) && !line.includes("has not accepted any resources"))
        assert.deepStrictEqual(warnings, [])
        // The workers' scratch dirs (the executors' local dirs) went with them.
        assert.deepStrictEqual(Fs.readdirSync(tmp), [])
      }),
    Deadlines.scaled(60_000)
  )

  it.live(
    "on local-cluster[2,1,1024], random chains of narrow transformations collect what the model says",
    () =>
      Effect.gen(function*() {
        const result = yield* run([
          "submit",
          "--master",
          "local-cluster[2,1,1024]",
          // Results over 256 bytes go through the executors' data planes, over TCP.
          "--conf",
          "kindling.task.maxDirectResultSize=256",
          "packages/cli/test/fixtures/chains-app.ts",
          "25"
        ])
        assert.strictEqual(result.code, 0, result.stderr)
        assert.strictEqual(result.stdout, "ok 25\n")
      }),
    Deadlines.scaled(90_000)
  )

  it.live(
    "--total-executor-cores and --executor-cores size the executors; the app waits for its share to register",
    () =>
      Effect.gen(function*() {
        const result = yield* run([
          "submit",
          "--master",
          "local-cluster[2,2,1024]",
          "--executor-cores",
          "1",
          "--total-executor-cores",
          "3",
          "--executor-memory",
          "512m",
          "--conf",
          "kindling.scheduler.minRegisteredResourcesRatio=1",
          "examples/pi.ts",
          "4"
        ])
        const log = result.stderr
        assert.strictEqual(result.code, 0, log)
        const granted = log.match(/Executor added: app-\S+ on worker-\S+ \(127\.0\.0\.1:\d+\) with 1 core\(s\)/g)
        assert.strictEqual(granted?.length, 3, log)
        // All three registered before the app started: its first job came after the third.
        const third = [...log.matchAll(/Registered executor \d+ on 127\.0\.0\.1 with 1 cores/g)][2]
        assert.isDefined(third, log)
        assert.isBelow(third!.index, log.indexOf("Got job 0"))
      }),
    Deadlines.scaled(60_000)
  )

  it.scopedLive(
    "an executor SIGKILLed mid-job: its tasks run again elsewhere and the answer is right",
    () =>
      Effect.gen(function*() {
        const dir = yield* temporaryDirectory
        const marker = `${dir}/killed`
        const result = yield* run([
          "submit",
          "--master",
          "local-cluster[2,1,1024]",
          app(dir, "dies.ts", executorDies),
          marker
        ])
        assert.strictEqual(result.code, 0, result.stderr)
        assert.strictEqual(result.stdout, "sum 499500\n")
        assert.match(result.stderr, /Lost executor \d+ on 127\.0\.0\.1/)
      }),
    Deadlines.scaled(60_000)
  )

  it.scopedLive(
    "on a cluster in client mode, a worker SIGKILLed mid-job: its tasks run again on the other",
    () =>
      Effect.gen(function*() {
        const { dir, master, workers } = yield* cluster(2)
        const job = yield* Effect.fork(run([
          "submit",
          "--master",
          master.url,
          "--conf",
          "kindling.driver.host=127.0.0.1",
          app(dir, "waits.ts", waitsForGo),
          dir
        ]))
        const started = yield* Polling.eventually(
          Effect.sync(() => Fs.readdirSync(dir).filter((name) => name.startsWith("started-"))),
          (names) => names.length > 0,
          { timeout: 30_000, interval: "100 millis", describe: () => "no task started" }
        )
        const executorPid = Number(started[0]!.slice("started-".length))
        const victim = workers.find((worker) => worker.node.pid === parentOf(executorPid))!
        yield* victim.node.kill("SIGKILL")
        yield* Polling.eventually(Effect.sync(() => isRunning(executorPid)), (running) => !running, {
          timeout: 10_000,
          interval: "100 millis",
          describe: () => "the executor outlived its worker"
        })
        Fs.writeFileSync(Path.join(dir, "go"), "")
        const result = yield* Fiber.join(job)
        assert.strictEqual(result.code, 0, result.stderr)
        assert.strictEqual(result.stdout, "sum 4950\n")
        assert.match(result.stderr, /Lost executor \d+/)
      }),
    Deadlines.scaled(90_000)
  )

  it.scopedLive(
    "in cluster deploy mode with a secret: the app is uploaded to the master, fetched by a worker for its driver " +
      "and by executors from the driver",
    () =>
      Effect.gen(function*() {
        const secret = ["--conf", "kindling.authenticate=true", "--conf", "kindling.authenticate.secret=s3cret"]
        const artifacts = Path.join(yield* temporaryDirectory, "master-artifacts")
        const { dir, master } = yield* cluster(
          2,
          [...secret, "--conf", `kindling.master.artifact.dir=${artifacts}`],
          secret
        )
        const result = yield* run([
          ...submitArgs(master.url, ...reachable),
          "--wait",
          ...secret,
          "--executor-memory",
          "512m",
          "examples/pi.ts",
          "4"
        ])
        assert.strictEqual(result.code, 0, result.stderr)
        const [driverId, ended] = result.stdout.trim().split("\n")
        assert.strictEqual(ended, `${driverId} FINISHED`)
        const driverDir = ["worker-0", "worker-1"].map((w) => Path.join(dir, w, driverId!))
          .find((path) => Fs.existsSync(path))!
        assert.match(Fs.readFileSync(Path.join(driverDir, "stdout"), "utf8"), /^Pi is roughly 3\.1\d*\n$/)
        // One stored artifact, named by its digest; the driver's copy and every executor's are the same bytes.
        const stored = Fs.readdirSync(artifacts)
        assert.strictEqual(stored.length, 1)
        const bytes = Fs.readFileSync(Path.join(artifacts, stored[0]!))
        assert.strictEqual(`${Crypto.createHash("sha256").update(bytes).digest("hex")}.artifact`, stored[0])
        assert.deepStrictEqual(Fs.readFileSync(Path.join(driverDir, "pi.mjs")), bytes)
        const executorCopies = ["worker-0", "worker-1"].flatMap((w) => {
          const workerDir = Path.join(dir, w)
          return Fs.readdirSync(workerDir).filter((name) => name.startsWith("app-")).flatMap((app) =>
            Fs.readdirSync(Path.join(workerDir, app)).map((exec) => Path.join(workerDir, app, exec, "pi.mjs"))
          )
          // An executor granted as the app ended may be stopped before it fetched anything.
        }).filter((copy) => Fs.existsSync(copy))
        assert.isAbove(executorCopies.length, 0)
        for (const copy of executorCopies) assert.deepStrictEqual(Fs.readFileSync(copy), bytes)
      }),
    Deadlines.scaled(90_000)
  )

  it.scopedLive(
    "a master refuses an artifact over its size limit, and nothing is submitted",
    () =>
      Effect.gen(function*() {
        const { master } = yield* cluster(0, ["--conf", "kindling.master.artifact.maxSize=1m"])
        const dir = yield* temporaryDirectory
        const big = app(
          dir,
          "big.ts",
          `export const padding = "${"x".repeat(2 * 1024 * 1024)}"\nexport default () => {}\n`
        )
        const result = yield* run(submitArgs(master.url, ...reachable, big))
        assert.strictEqual(result.code, 1)
        assert.match(
          result.stderr,
          /The artifact big\.mjs was rejected: it has \d+ bytes; this master takes at most 1048576/
        )
        const state = yield* masterState(master.url)
        assert.deepStrictEqual(state.activeDrivers, [])
      }),
    Deadlines.scaled(60_000)
  )

  it.scopedLive("ships exported functions by name and self-contained ones as source", () =>
    Effect.gen(function*() {
      const dir = yield* temporaryDirectory
      const result = yield* run([
        "submit",
        "--master",
        "local[2]",
        app(dir, "words.ts", wordLengths),
        "spark",
        "kindling",
        "effect"
      ])
      assert.strictEqual(result.code, 0, result.stderr)
      assert.strictEqual(result.stdout, "vowels 5, longest 8\n")
    }), Deadlines.scaled(60_000))

  it.scopedLive(
    "the bundler's processes are gone once the app is bundled, not left to outlive the command",
    () =>
      Effect.gen(function*() {
        const dir = yield* temporaryDirectory
        // In local mode the app runs in the submitting process: it lists that process's children still running.
        const children = `import { App } from "@kindling/app"
import { Console, Effect } from "effect"
import * as Fs from "node:fs"
export default App.make(() => Effect.gen(function*() {
  const mine = Fs.readdirSync("/proc").filter((pid) => /^\\d+$/.test(pid)).flatMap((pid) => {
    try {
      const stat = Fs.readFileSync(\`/proc/\${pid}/stat\`, "utf8")
      const [state, parent] = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      // A child that has exited and is not yet reaped (Z) is no process any more.
      return Number(parent) === process.pid && state !== "Z" ? [Fs.readFileSync(\`/proc/\${pid}/cmdline\`, "utf8").split("\\0").join(" ").trim()] : []
    } catch {
      return []
    }
  })
  yield* Console.log(JSON.stringify(mine))
}))
`
        const result = yield* run(["submit", "--master", "local[1]", app(dir, "children.ts", children)])
        assert.strictEqual(result.code, 0, result.stderr)
        assert.deepStrictEqual(JSON.parse(result.stdout), [])
      }),
    60_000
  )

  it.scopedLive("an app whose main fails exits 1 with its error", () =>
    Effect.gen(function*() {
      const dir = yield* temporaryDirectory
      const result = yield* run(["submit", "--master", "local[1]", app(dir, "fails.ts", failing)])
      assert.strictEqual(result.code, 1)
      assert.include(result.stderr, "Broken: the app gave up")
    }), Deadlines.scaled(60_000))

  it.scopedLive(
    "an app with a syntax error gets esbuild's message before anything starts",
    () =>
      Effect.gen(function*() {
        const dir = yield* temporaryDirectory
        const result = yield* run(["submit", "--master", "local[2]", app(dir, "bad.ts", "export default (;\n")])
        assert.strictEqual(result.code, 1)
        assert.include(result.stderr, "cannot be built")
        assert.include(result.stderr, "bad.ts:1:16")
        assert.notInclude(result.stderr, "Registered executor")
      }),
    Deadlines.scaled(60_000)
  )

  it.live("a master that is not one gets a usage error", () =>
    Effect.gen(function*() {
      const result = yield* run(["submit", "--master", "local[0]", "examples/pi.ts"])
      assert.strictEqual(result.code, 1)
      assert.include(result.stderr, "Could not parse the master URL 'local[0]'")
    }), Deadlines.scaled(60_000))

  it.live(
    "a local cluster whose workers are smaller than one executor gets a usage error, not a wait",
    () =>
      Effect.gen(function*() {
        const result = yield* run(["submit", "--master", "local-cluster[2,1,256]", "examples/pi.ts"])
        assert.strictEqual(result.code, 1)
        assert.include(result.stderr, "gives each worker 256 MiB, less than one executor's 1024 MiB")
        assert.notInclude(result.stderr, "Registered app")
      }),
    Deadlines.scaled(60_000)
  )
})
