// `pnpm test:hosts` (opt-in, as root): the distribution installed on three hosts and operated as an operator
// operates it. Each host is a network namespace on a bridge (fixtures/hosts.ts) with an OpenSSH server of its own
// that lets in only the test's key, and its own copy of the unpacked tarball at the same path as every other host's
// (bind-mounted there in the server's mount namespace, so that everything a session starts sees that host's files
// alone). Installed as the README says: each build unpacked in a directory of its own, /opt/kindling a link to the
// one in use. From the master's host, sbin/start-all.sh starts the master and, over SSH, a worker on each of the two
// other hosts; jobs in client and cluster deploy mode give their answers; a worker host whose processes are all
// killed rejoins with start-worker.sh; a rolling upgrade to another build (decommission a worker, wait for it to
// exit, link the new build, start it there, worker after worker) keeps an app with shuffles running and right;
// stop-all.sh leaves no process and no pid file on any host.
//
// The two builds: the same tarball unpacked twice, the second with another version in its lib/dist/release.json
// (what `kindling --version` prints and the first line of each daemon's log says). Their code is the same: what this
// proves is the operator's sequence, not compatibility across changed code.
import { assert, describe, it } from "@effect/vitest"
import type { QueryMessages } from "@kindling/protocol"
import { Polling } from "@kindling/protocol/testing"
import { Duration, Effect } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { app, eventually, masterState, start } from "./fixtures/cluster.js"
import { execute, pidFiles, processesUnder, scratch, unpack, variable, writeConf } from "./fixtures/distribution.js"
import { type Host, network, onHost } from "./fixtures/hosts.js"
import * as Sshd from "./fixtures/sshd.js"

const secret = "the hosts test's secret"

// Rounds of a job over two shuffles until the test says go (10 minutes at most): the first shuffle's map outputs are
// computed once and read by every round, so they must outlive each decommissioned executor; each round shuffles
// again, with tasks slow enough that a decommission finds some running. Every round's answer is checked against
// the one computed here; at the end the app prints the rounds, the wrong ones, how often the first shuffle's map
// tasks succeeded (8 if its outputs were never computed again) and the executors decommissioned.
const rolling = `import { App, Kindling } from "@kindling/app"
import { Console, Effect, Stream } from "effect"
import * as Fs from "node:fs"
export default App.make(([go]) =>
  Effect.scoped(Effect.gen(function*() {
    const kc = yield* Kindling
    // The first stage submitted is the first shuffle's map stage; a later job that computed it again would run it
    // under a stage of its own, of the same name.
    const stageNames = new Map()
    let firstMapRuns = 0
    let decommissioned = 0
    const events = yield* kc.subscribe
    yield* Effect.forkScoped(Stream.runForEach(events, (event) => Effect.sync(() => {
      if (event._tag === "StageSubmitted") stageNames.set(event.stageId, event.name)
      const firstMap = stageNames.values().next().value
      if (event._tag === "TaskEnd" && event.succeeded && stageNames.get(event.stageId) === firstMap) firstMapRuns++
      if (event._tag === "ExecutorDecommissioned") decommissioned++
    })))
    const sums = kc.range(0, 100000, 1, 8).map((x) => [x % 16, x]).reduceByKey((a, b) => a + b, undefined, 4)
    const bases = Array.from({ length: 16 }, () => 0)
    for (let x = 0; x < 100000; x++) bases[x % 16] += x
    let rounds = 0
    let wrong = 0
    const started = Date.now()
    while (!Fs.existsSync(go) && Date.now() - started < 600000) {
      const round = rounds
      const got = yield* sums
        .map(([key, sum]) => {
          const until = Date.now() + 100
          while (Date.now() < until) {}
          return [key % 4, sum + round]
        })
        .reduceByKey((a, b) => a + b, undefined, 2)
        .collect()
      const expected = [0, 1, 2, 3].map((k) => [k, bases[k] + bases[k + 4] + bases[k + 8] + bases[k + 12] + 4 * round])
      const right = JSON.stringify([...got].sort((a, b) => a[0] - b[0])) === JSON.stringify(expected)
      if (!right) wrong++
      rounds++
      yield* Console.log(\`round \${round}: \${right ? "right" : "WRONG " + JSON.stringify(got)}\`)
    }
    yield* Effect.sleep("200 millis")
    yield* Console.log(JSON.stringify({ rounds, wrong, firstMapRuns, decommissioned }))
  })))
`

describe("the distribution on three hosts", () => {
  it.scopedLive(
    "installed on each, started with start-all.sh over SSH, upgraded worker by worker under a running app, stopped " +
      "with stop-all.sh",
    () =>
      Effect.gen(function*() {
        const dir = yield* scratch("kindling-hosts-")
        // How long each step took, in seconds, printed at the end (nothing is asserted of it).
        const took: Record<string, number> = {}
        const timed = <A, E, R>(name: string, effect: Effect.Effect<A, E, R>) =>
          Effect.map(Effect.timed(effect), ([duration, result]) => {
            took[name] = Math.round(Duration.toMillis(duration) / 100) / 10
            return result
          })
        const { hosts } = yield* network(["m", "w1", "w2"])
        const [m, w1, w2] = [hosts.m!, hosts.w1!, hosts.w2!]
        const keys = yield* Sshd.keys(Path.join(dir, "ssh"))

        // Every host's /opt: the same path on each, its own files (dir/hosts/<name>) behind it. The builds are
        // kindling-a and kindling-b there (the workers' hosts get both), /opt/kindling the link to the one in use.
        const opt = Path.join(dir, "opt")
        Fs.mkdirSync(opt)
        const own = (host: Host, ...path: Array<string>) => Path.join(dir, "hosts", host.name, ...path)
        const kindling = Path.join(opt, "kindling")
        const master = `kindling://${m.ip}:7077`
        yield* timed(
          "installed",
          Effect.forEach([m, w1, w2], (host) => {
            Fs.mkdirSync(own(host), { recursive: true })
            for (const build of host === m ? ["kindling-a"] : ["kindling-a", "kindling-b"]) {
              configure(unpack(own(host), build), host, m.ip, Sshd.options(keys, 22), opt)
            }
            Fs.symlinkSync("kindling-a", own(host, "kindling"))
            return Sshd.server(keys, host.ip, 22, (sshd) =>
              onHost(host, [
                "unshare",
                "--mount",
                "sh",
                "-c",
                "mount --bind \"$1\" \"$2\" && shift 2 && exec \"$@\"",
                "sh",
                own(host),
                opt,
                ...sshd
              ]))
          })
        )
        writeConf(own(m, "kindling-a"), "workers", ["# the worker hosts", w1.ip, w2.ip])
        const release = Path.join(own(m, "kindling-a"), "lib", "dist", "release.json")
        const { version } = JSON.parse(Fs.readFileSync(release, "utf8")) as { readonly version: string }
        // The second build: another version.
        for (const host of [w1, w2]) {
          const file = Path.join(own(host, "kindling-b"), "lib", "dist", "release.json")
          Fs.writeFileSync(
            file,
            JSON.stringify({ ...JSON.parse(Fs.readFileSync(file, "utf8")), version: `${version}-b` })
          )
        }

        // A command on a host, over SSH, as the operator types it there.
        const ssh = (host: Host, command: string, timeoutMillis?: number) =>
          execute(["ssh", ...Sshd.options(keys, 22).split(" "), host.ip, command], {
            ...(timeoutMillis === undefined ? {} : { timeoutMillis })
          })

        // start-all.sh on the master's host: the master, then a worker on each host of conf/workers.
        const started = yield* timed("start-all", ssh(m, `cd ${kindling} && sbin/start-all.sh`))
        assert.strictEqual(started.code, 0, started.lines.join("\n"))
        assert.includeMembers([...started.lines], [
          `${w1.ip}: starting kindling worker, logging to ${kindling}/logs/${workerLog}`,
          `${w2.ip}: starting kindling worker, logging to ${kindling}/logs/${workerLog}`
        ])
        yield* timed(
          "both workers registered",
          eventually(master, (state) => aliveWorkers(state).length === 2 || undefined, 60_000, secret)
        )
        assert.deepStrictEqual(aliveWorkers(yield* masterState(master, secret)), [w1.ip, w2.ip].sort())

        // A job in each deploy mode, submitted on the master's host.
        // A driver in the command listens where the executors reach it; one on a worker, where its worker does.
        const submit = `cd ${kindling} && bin/kindling submit --master ${master}`
        const inClient = `${submit} --conf kindling.driver.host=${m.ip}`
        const client = yield* timed("the job in client mode", ssh(m, `${inClient} examples/pi.ts 4`))
        assert.strictEqual(client.code, 0, client.stderr)
        assert.match(client.stdout, /^Pi is roughly 3\.\d+$/m)
        const cluster = yield* timed(
          "the job in cluster mode",
          ssh(m, `${submit} --deploy-mode cluster --wait examples/pi.ts 4`)
        )
        assert.strictEqual(cluster.code, 0, cluster.stderr)
        const [driverId, ended] = cluster.stdout.trim().split("\n")
        assert.strictEqual(ended, `${driverId} FINISHED`)
        const driverOutputs = [w1, w2].map((host) => own(host, "work", driverId!, "stdout")).filter(Fs.existsSync)
        assert.strictEqual(driverOutputs.length, 1, `the driver's stdout on one of the worker hosts`)
        assert.match(Fs.readFileSync(driverOutputs[0]!, "utf8"), /^Pi is roughly 3\.\d+\n$/)

        // Everything of Kindling's on w1 killed at once, as a crash would: start-worker.sh there clears the stale
        // pid file and starts a worker, which rejoins.
        const crashedWorker = aliveOn(yield* masterState(master, secret), w1)!
        const crashed = processesOn(w1, opt)
        assert.isAbove(crashed.length, 0)
        for (const { pid } of crashed) process.kill(pid, "SIGKILL")
        yield* Polling.eventually(Effect.sync(() => processesOn(w1, opt)), (left) => left.length === 0, {
          timeout: "10 seconds"
        })
        const rejoined = yield* ssh(w1, `cd ${kindling} && sbin/start-worker.sh ${master}`)
        assert.strictEqual(rejoined.code, 0, rejoined.lines.join("\n"))
        assert.match(rejoined.lines[0]!, /^kindling worker: removed the stale pid file .* \(process \d+ is gone\)$/)
        yield* timed("w1 rejoined", eventually(master, (state) => aliveOn(state, w1, crashedWorker.id), 60_000, secret))

        // The rolling upgrade, under an app that runs until it is over.
        const apps = Path.join(dir, "apps")
        Fs.mkdirSync(apps)
        const go = Path.join(apps, "go")
        const running = yield* start(
          [],
          {},
          [
            "ssh",
            ...Sshd.options(keys, 22).split(" "),
            m.ip,
            `${inClient} --conf kindling.executor.cores=1 ${app(apps, "rolling.ts", rolling)} ${go}`
          ]
        )
        const rounds = () => [...running.output().matchAll(/^round (\d+): right$/gm)].length
        const roundsBeyond = (done: number) =>
          Polling.eventually(Effect.sync(rounds), (n) => n >= done, {
            timeout: "120 seconds",
            interval: "200 millis",
            describe: () => running.output()
          })
        yield* timed("the app's first 3 rounds", roundsBeyond(3))
        for (const host of [w1, w2]) {
          const before = workerOn(host, opt)
          assert.strictEqual(builtAs(own(host, "kindling-a", "logs", workerLog)), `Kindling ${version}`)
          const drained = yield* timed(
            `decommission ${host.name}`,
            ssh(host, `cd ${kindling} && sbin/decommission-worker.sh`, 300_000)
          )
          assert.strictEqual(drained.code, 0, drained.lines.join("\n"))
          assert.deepStrictEqual(drained.lines, [
            `decommissioning kindling worker (process ${before}); waiting for it to exit`,
            `kindling worker (process ${before}) has exited`
          ])
          const upgraded = yield* ssh(
            host,
            `ln -sfn kindling-b ${kindling} && cd ${kindling} && sbin/start-worker.sh ${master}`
          )
          assert.strictEqual(upgraded.code, 0, upgraded.lines.join("\n"))
          // The worker that runs now is the one that start logged, as the new build.
          assert.strictEqual(workerOn(host, opt), Number(Fs.readFileSync(own(host, "run", workerPidFile), "utf8")))
          assert.strictEqual(builtAs(own(host, "kindling-b", "logs", workerLog)), `Kindling ${version}-b`)
          // The app goes on, on the new worker too, before the next host is taken out.
          yield* timed(`3 rounds after ${host.name}'s upgrade`, roundsBeyond(rounds() + 3))
        }
        Fs.writeFileSync(go, "")
        assert.strictEqual(yield* timed("the app's end", running.exited), 0, running.output())
        const report = JSON.parse(running.output().split("\n").find((line) => line.startsWith("{\"rounds\""))!)
        console.log(`hosts: the rolling upgrade's app: ${JSON.stringify(report)}`)
        // Every round right, the first shuffle's map outputs never computed again (they moved with each
        // decommissioned executor), and the executors of both old workers decommissioned.
        assert.strictEqual(report.wrong, 0, running.output())
        assert.isAbove(report.rounds, 9)
        assert.strictEqual(report.firstMapRuns, 8, running.output())
        assert.isAtLeast(report.decommissioned, 2, running.output())
        assert.deepStrictEqual(aliveWorkers(yield* masterState(master, secret)), [w1.ip, w2.ip].sort())
        for (const [host, expected] of [[m, version], [w1, `${version}-b`], [w2, `${version}-b`]] as const) {
          const said = yield* ssh(host, `${kindling}/bin/kindling --version`)
          assert.strictEqual(said.stdout.split(" ")[0], expected, host.name)
        }

        // stop-all.sh on the master's host: nothing of Kindling's runs on any host, and no pid file is left.
        const stopped = yield* timed("stop-all", ssh(m, `cd ${kindling} && sbin/stop-all.sh`))
        assert.strictEqual(stopped.code, 0, stopped.lines.join("\n"))
        assert.includeMembers([...stopped.lines].map((line) => line.replace(/\(process \d+\)/, "")), [
          `${w1.ip}: stopping kindling worker `,
          `${w2.ip}: stopping kindling worker `,
          "stopping kindling master "
        ])
        yield* Polling.eventually(Effect.sync(() => processesUnder(opt)), (left) => left.length === 0, {
          timeout: "30 seconds",
          describe: (left) => JSON.stringify(left)
        })
        for (const host of [m, w1, w2]) assert.deepStrictEqual(pidFiles(own(host, "run")), [], host.name)
        console.log(`hosts: seconds taken: ${JSON.stringify(took)}`)
      }),
    900_000
  )
})

// A host's conf/kindling-env.sh and kindling-defaults.conf, the same in both of its builds: its address, the
// master's, SSH to the others, pid files and work directories that outlive an upgrade; the cluster's secret and
// the workers' shuffle service.
const configure = (home: string, host: Host, masterHost: string, sshOptions: string, opt: string) => {
  writeConf(home, "kindling-env.sh", [
    variable("KINDLING_MASTER_HOST", masterHost),
    variable("KINDLING_LOCAL_IP", host.ip),
    variable("KINDLING_WORKER_CORES", 2),
    variable("KINDLING_WORKER_MEMORY", "2g"),
    variable("KINDLING_WORKER_DIR", Path.join(opt, "work")),
    variable("KINDLING_PID_DIR", Path.join(opt, "run")),
    variable("KINDLING_SSH_OPTS", sshOptions)
  ])
  writeConf(home, "kindling-defaults.conf", [
    "kindling.authenticate true",
    `kindling.authenticate.secret ${secret}`,
    "kindling.shuffle.service.enabled true"
  ])
}

// The hosts of the master's alive workers.
const aliveWorkers = (state: QueryMessages.MasterStateResponse) =>
  state.workers.filter((worker) => worker.state === "ALIVE").map((worker) => worker.host).sort()

// The master's alive worker on `host` (other than the one of id `other`).
const aliveOn = (state: QueryMessages.MasterStateResponse, host: Host, other?: string) =>
  state.workers.find((worker) => worker.host === host.ip && worker.state === "ALIVE" && worker.id !== other)

// The worker's log and pid file on every host (its user is root, the test's).
const workerLog = `kindling-root-worker-1-${Os.hostname()}.out`
const workerPidFile = "kindling-root-worker-1.pid"

// The build a daemon's log says it runs (its first line: "Kindling 0.1.0 (commit …): kindling worker …").
const builtAs = (log: string) => Fs.readFileSync(log, "utf8").split(" (")[0]

// The pid of the worker process on `host` (the one process running `kindling worker` under `path` there).
const workerOn = (host: Host, path: string): number => {
  const workers = processesOn(host, path).filter((process) => process.command.includes("dist/bin.js worker"))
  assert.strictEqual(workers.length, 1, JSON.stringify(workers))
  return workers[0]!.pid
}

// The processes on `host` (in its network namespace) whose command line names `path`.
const processesOn = (host: Host, path: string) => {
  const namespace = `net:[${Fs.statSync(Path.join("/run/netns", host.namespace)).ino}]`
  return processesUnder(path).filter(({ pid }) => {
    try {
      return Fs.readlinkSync(`/proc/${pid}/ns/net`) === namespace
    } catch {
      return false
    }
  })
}
