// `pnpm test:dist` (in CI): the distribution as an operator uses it on one host. The tarball unpacked into an empty
// directory outside the repository runs an app in local[2]; sbin/start-all.sh starts a master and, over SSH to
// 127.0.0.1 (an OpenSSH server of the test's), a worker, which run an app whose event log the history server
// (start-history-server.sh) then serves; stop-all.sh leaves no process and no pid file. Each start rotates its
// daemon's log (five old ones kept). The scripts' answers to what goes wrong, each in one line: a host of
// conf/workers that does not answer SSH, a stale pid file, a second start, a daemon that does not stop (killed past
// KINDLING_STOP_TIMEOUT), a stop with nothing running.
import { assert, describe, it } from "@effect/vitest"
import { Polling } from "@kindling/protocol/testing"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { freePort } from "./fixtures/cluster.js"
import {
  execute,
  linesMatching,
  noProcessUnder,
  pidFiles,
  processesUnder,
  recordedPid,
  scratch,
  unpack,
  variable,
  writeConf
} from "./fixtures/distribution.js"
import * as Sshd from "./fixtures/sshd.js"

const pi = /^Pi is roughly 3\.\d+$/m

describe("the distribution on one host", () => {
  it.scopedLive(
    "unpacked anywhere, it runs an app, and sbin/ starts, checks and stops a cluster over SSH",
    () =>
      Effect.gen(function*() {
        const dir = yield* scratch("kindling-dist-")
        const home = unpack(dir)
        const kindling = Path.join(home, "bin", "kindling")
        const sbin = (script: string, ...args: Array<string>) =>
          execute([Path.join(home, "sbin", script), ...args], { cwd: home })

        // Nothing but the unpacked tree: an app of the examples in local[2].
        const local = yield* execute([kindling, "submit", "--master", "local[2]", "examples/pi.ts"], { cwd: home })
        assert.strictEqual(local.code, 0, local.stderr)
        assert.match(local.stdout, pi)

        // This host, over SSH, and one that does not answer (nothing listens on 127.0.0.3).
        const keys = yield* Sshd.keys(Path.join(dir, "ssh"))
        const sshPort = yield* freePort
        yield* Sshd.server(keys, "127.0.0.1", sshPort)
        const pids = Path.join(dir, "pids")
        const events = Path.join(dir, "events")
        Fs.mkdirSync(events)
        const masterPort = yield* freePort
        const masterUiPort = yield* freePort
        const historyPort = yield* freePort
        writeConf(home, "workers", ["# the hosts of this test", "127.0.0.1", "127.0.0.3   # down"])
        writeConf(home, "kindling-env.sh", [
          variable("KINDLING_MASTER_HOST", "127.0.0.1"),
          variable("KINDLING_MASTER_PORT", masterPort),
          variable("KINDLING_MASTER_WEBUI_PORT", masterUiPort),
          variable("KINDLING_LOCAL_IP", "127.0.0.1"),
          variable("KINDLING_WORKER_WEBUI_PORT", yield* freePort),
          variable("KINDLING_WORKER_CORES", 2),
          variable("KINDLING_WORKER_MEMORY", "2g"),
          // Not /tmp: daemons of this machine's own are none of the test's business.
          variable("KINDLING_PID_DIR", pids),
          variable("KINDLING_SSH_OPTS", Sshd.options(keys, sshPort))
        ])
        writeConf(home, "kindling-defaults.conf", [
          "kindling.eventLog.enabled true",
          `kindling.eventLog.dir ${events}`,
          `kindling.history.fs.logDirectory ${events}`,
          `kindling.history.ui.port ${historyPort}`
        ])
        const master = `kindling://127.0.0.1:${masterPort}`
        // The master's logs of five earlier runs: this start's rotation shifts each one up and drops the oldest.
        const masterLog = daemonLog(home, "master")
        Fs.mkdirSync(Path.dirname(masterLog))
        for (const n of [0, 1, 2, 3, 4, 5]) Fs.writeFileSync(n === 0 ? masterLog : `${masterLog}.${n}`, `run -${n}\n`)

        // The host that does not answer is named in one line; the master and the other worker start.
        const started = yield* sbin("start-all.sh")
        assert.strictEqual(started.code, 1, started.lines.join("\n"))
        assert.deepStrictEqual(linesMatching(started, /127\.0\.0\.3/), [
          `127.0.0.3: did not answer SSH: ssh: connect to host 127.0.0.3 port ${sshPort}: Connection refused`
        ])
        assert.include(started.lines, `127.0.0.1: starting kindling worker, logging to ${daemonLog(home, "worker")}`)
        assert.deepStrictEqual([...pidFiles(pids)].sort(), ["kindling-root-master-1.pid", "kindling-root-worker-1.pid"])
        assert.deepStrictEqual(
          [1, 2, 3, 4, 5, 6].map((n) =>
            Fs.existsSync(`${masterLog}.${n}`) ? Fs.readFileSync(`${masterLog}.${n}`, "utf8") : "none"
          ),
          ["run -0\n", "run -1\n", "run -2\n", "run -3\n", "run -4\n", "none"]
        )
        // The new log begins with the build and the command line.
        const { commit, version } = JSON.parse(Fs.readFileSync(Path.join(home, "lib", "dist", "release.json"), "utf8"))
        assert.strictEqual(
          Fs.readFileSync(masterLog, "utf8").split("\n")[0],
          `Kindling ${version} (commit ${commit}): kindling master --webui-port ${masterUiPort} --port ${masterPort} ` +
            "--host 127.0.0.1"
        )
        yield* registered(home)

        const client = yield* execute(
          [kindling, "submit", "--master", master, "--conf", "kindling.driver.host=127.0.0.1", "examples/pi.ts", "4"],
          { cwd: home }
        )
        assert.strictEqual(client.code, 0, client.stderr)
        assert.match(client.stdout, pi)

        // Its event log, served by a history server of this host's (kindling-defaults.conf names the folder and port).
        const history = yield* sbin("start-history-server.sh")
        assert.strictEqual(history.code, 0, history.lines.join("\n"))
        const historyPid = recordedPid(pids, "history")
        const apps: Array<{ readonly name: string }> = yield* Effect.promise(() =>
          fetch(`http://127.0.0.1:${historyPort}/api/v1/applications`).then((response) => response.json())
        )
        assert.deepStrictEqual(apps.map((app) => app.name), ["pi.ts"])
        assert.deepStrictEqual((yield* sbin("stop-history-server.sh")).lines, [
          `stopping kindling history server (process ${historyPid})`
        ])

        // A second start is refused with the pid of the one that runs.
        const again = yield* sbin("start-master.sh")
        assert.strictEqual(again.code, 1)
        assert.deepStrictEqual(again.lines, [
          `kindling master running as process ${recordedPid(pids, "master")}. Stop it first.`
        ])
        // One that cannot start (another pid directory, the same ports) says why, from its log.
        const clash = yield* execute([Path.join(home, "sbin", "start-master.sh")], {
          cwd: home,
          env: { KINDLING_PID_DIR: Path.join(dir, "other-pids"), KINDLING_IDENT_STRING: "other" }
        })
        assert.strictEqual(clash.code, 1, clash.lines.join("\n"))
        assert.deepStrictEqual(clash.lines.slice(0, 2), [
          `starting kindling master, logging to ${daemonLog(home, "master", "other")}`,
          "failed to launch kindling master:"
        ])
        assert.match(clash.stdout, /address already in use/i)
        assert.strictEqual(clash.lines.at(-1), `full log in ${daemonLog(home, "master", "other")}`)
        assert.deepStrictEqual(pidFiles(Path.join(dir, "other-pids")), [])

        // Decommissioned, the worker exits by itself and takes its pid file along.
        const decommissioned = recordedPid(pids, "worker")
        const drained = yield* sbin("decommission-worker.sh")
        assert.strictEqual(drained.code, 0, drained.lines.join("\n"))
        assert.deepStrictEqual(drained.lines, [
          `decommissioning kindling worker (process ${decommissioned}); waiting for it to exit`,
          `kindling worker (process ${decommissioned}) has exited`
        ])
        assert.deepStrictEqual(pidFiles(pids), ["kindling-root-master-1.pid"])
        assert.strictEqual((yield* sbin("start-worker.sh", master)).code, 0)
        yield* registered(home)

        // A worker that does not stop (paused here: the SIGTERM waits) is killed past KINDLING_STOP_TIMEOUT, and its
        // pid file goes with it.
        const paused = recordedPid(pids, "worker")
        process.kill(paused, "SIGSTOP")
        const forced = yield* execute([Path.join(home, "sbin", "stop-worker.sh")], {
          cwd: home,
          env: { KINDLING_STOP_TIMEOUT: "1" }
        })
        assert.strictEqual(forced.code, 0, forced.lines.join("\n"))
        assert.deepStrictEqual(forced.lines, [
          `stopping kindling worker (process ${paused})`,
          `kindling worker (process ${paused}) did not stop within 1 s (KINDLING_STOP_TIMEOUT): killing it`
        ])
        yield* gone(home, paused)
        assert.deepStrictEqual(pidFiles(pids), ["kindling-root-master-1.pid"])

        // A worker that may not be decommissioned says so in its log; the script reads it there and gives up.
        const staying = yield* sbin("start-worker.sh", master, "--conf", "kindling.decommission.enabled=false")
        assert.strictEqual(staying.code, 0, staying.lines.join("\n"))
        yield* registered(home)
        const kept = recordedPid(pids, "worker")
        const refused = yield* sbin("decommission-worker.sh")
        assert.strictEqual(refused.code, 1, refused.lines.join("\n"))
        assert.deepStrictEqual(refused.lines, [
          `decommissioning kindling worker (process ${kept}); waiting for it to exit`,
          `kindling worker (process ${kept}) cannot be decommissioned: kindling.decommission.enabled is false there`
        ])
        assert.isTrue(processesUnder(home).some((p) => p.pid === kept))

        // A worker killed outright leaves its pid file: the next start removes it and starts.
        const killed = recordedPid(pids, "worker")
        process.kill(killed, "SIGKILL")
        yield* gone(home, killed)
        const restarted = yield* sbin("start-worker.sh", master)
        assert.strictEqual(restarted.code, 0, restarted.lines.join("\n"))
        assert.deepStrictEqual(restarted.lines, [
          `kindling worker: removed the stale pid file ${Path.join(pids, "kindling-root-worker-1.pid")} ` +
          `(process ${killed} is gone)`,
          `starting kindling worker, logging to ${daemonLog(home, "worker")}`
        ])
        yield* registered(home)

        // Stopped over SSH, then here: nothing left, not even a pid file.
        const [workerPid, masterPid] = [recordedPid(pids, "worker"), recordedPid(pids, "master")]
        const stopped = yield* sbin("stop-all.sh")
        assert.include(stopped.lines, `127.0.0.1: stopping kindling worker (process ${workerPid})`)
        assert.include(stopped.lines, `stopping kindling master (process ${masterPid})`)
        yield* noProcessUnder(home)
        assert.deepStrictEqual(pidFiles(pids), [])

        // Nothing to stop: said so, once for each.
        assert.deepStrictEqual((yield* sbin("stop-master.sh")).lines, ["no kindling master to stop"])
        assert.deepStrictEqual((yield* sbin("stop-worker.sh")).lines, ["no kindling worker to stop"])
        assert.deepStrictEqual((yield* sbin("stop-history-server.sh")).lines, ["no kindling history server to stop"])
      }),
    240_000
  )

  // systemd-analyze checks a unit's syntax, its settings and that its commands exist and may be run: here against
  // the unpacked tree, where the units expect /opt/kindling. Where systemd is not installed there is nothing to ask.
  it.scopedLive.skipIf(!Fs.existsSync(systemdAnalyze))(
    "its service units pass systemd-analyze verify",
    () =>
      Effect.gen(function*() {
        const dir = yield* scratch("kindling-dist-")
        const home = unpack(dir)
        const units = Path.join(dir, "units")
        Fs.mkdirSync(units)
        for (const unit of ["kindling-master.service", "kindling-worker@.service"]) {
          const text = Fs.readFileSync(Path.join(home, "conf", "systemd", unit), "utf8")
          assert.include(text, "/opt/kindling/sbin/")
          Fs.writeFileSync(Path.join(units, unit), text.replaceAll("/opt/kindling", home))
          const verified = yield* execute([systemdAnalyze, "verify", Path.join(units, unit)], { cwd: units })
          assert.deepStrictEqual([verified.code, verified.lines], [0, []], unit)
        }
      }),
    60_000
  )
})

const systemdAnalyze = "/usr/bin/systemd-analyze"

// Where kindling-daemon.sh logs a daemon of this host's (KINDLING_LOG_DIR unset: logs/ in the distribution).
const daemonLog = (home: string, command: "master" | "worker", ident = "root") =>
  Path.join(home, "logs", `kindling-${ident}-${command}-1-${Os.hostname()}.out`)

// The worker's log says it registered with its master (bounded).
const registered = (home: string) =>
  Polling.eventually(
    Effect.sync(() => Fs.readFileSync(daemonLog(home, "worker"), "utf8")),
    (log) => log.includes("Successfully registered with master"),
    { timeout: "30 seconds", interval: "100 millis", describe: (log) => `the worker did not register:\n${log}` }
  )

// Process `pid` has exited (a zombie, which no init may have reaped yet, has no command line).
const gone = (home: string, pid: number) =>
  Polling.eventually(
    Effect.sync(() => processesUnder(home).some((process) => process.pid === pid)),
    (running) => !running,
    { timeout: "10 seconds", interval: "50 millis" }
  )
