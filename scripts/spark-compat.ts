/**
 * `pnpm test:spark-compat`: do Spark's own tools work with Kindling? Opt-in (not part of `pnpm test`): it
 * installs Spark from PyPI (`pyspark`, which bundles Spark's jars and scripts) when it is missing, and needs Java
 * 17. It checks, printing one PASS/FAIL line each (and what the tool printed):
 *
 * - Spark's History Server lists a Kindling event log and answers `/api/v1/applications/<id>/jobs` and `…/stages`
 *   for it with the same jobs and stages as Kindling's own history server;
 * - `spark-submit --status` and `--kill` against a Kindling master's REST port.
 *
 * The exit code is the number of failed checks.
 */
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Url from "node:url"
import { pysparkVersion, sparkHome } from "./pyspark.js"

const root = Path.resolve(Path.dirname(Url.fileURLToPath(import.meta.url)), "..")
const work = Fs.mkdtempSync(Path.join(Os.tmpdir(), "kindling-spark-compat-"))
const children: Array<ChildProcess.ChildProcess> = []
let failures = 0

const check = (name: string, ok: boolean, detail: string) => {
  if (!ok) failures++
  console.log(`${ok ? "PASS" : "FAIL"} ${name}`)
  if (detail !== "") console.log(detail.trim().split("\n").map((line) => `    ${line}`).join("\n"))
}

// The `kindling` command from this checkout's sources, as `pnpm demo` runs it.
const kindlingArgs = (args: ReadonlyArray<string>) => [
  ...process.execArgv,
  "--conditions=@kindling/source",
  Path.join(root, "packages/cli/src/bin.ts"),
  ...args
]
const kindling = (args: ReadonlyArray<string>) =>
  ChildProcess.spawnSync(process.execPath, kindlingArgs(args), { cwd: root, encoding: "utf8", timeout: 120_000 })
const startKindling = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  background(process.execPath, kindlingArgs(args), env)

const background = (command: string, args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  const child = ChildProcess.spawn(command, args, {
    cwd: work,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true
  })
  let output = ""
  child.stdout!.on("data", (chunk) => (output += chunk))
  child.stderr!.on("data", (chunk) => (output += chunk))
  children.push(child)
  return { child, output: () => output }
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = Net.createServer()
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as Net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })

const eventually = async <A>(probe: () => Promise<A | undefined>, seconds: number): Promise<A | undefined> => {
  const deadline = Date.now() + seconds * 1000
  while (Date.now() < deadline) {
    const value = await probe().catch(() => undefined)
    if (value !== undefined) return value
    await new Promise((resolve) => setTimeout(resolve, 500))
  }
  return undefined
}

const json = async (url: string) => {
  const response = await fetch(url)
  return response.ok ? (await response.json()) as any : undefined
}

const summary = (jobs: ReadonlyArray<any>, stages: ReadonlyArray<any>) =>
  JSON.stringify({
    jobs: jobs.map((j) => [j.jobId, j.status, j.numTasks, j.numCompletedTasks, j.numFailedTasks, j.numSkippedTasks])
      .sort(),
    stages: stages.map((s) => [s.stageId, s.attemptId, s.status, s.numTasks, s.numCompleteTasks, s.shuffleWriteBytes])
      .sort()
  })

const historyServer = async (home: string) => {
  const logs = Path.join(work, "events")
  Fs.mkdirSync(logs)
  const app = Path.join(work, "compat-app.ts")
  Fs.writeFileSync(
    app,
    `import { App, Kindling } from "@kindling/app"
import { Effect } from "effect"
export default App.make(() =>
  Effect.gen(function*() {
    const kc = yield* Kindling
    const pairs = kc.range(0, 1000, 1, 4).map((n): [number, number] => [n % 7, n]).cache()
    yield* pairs.reduceByKey((a, b) => a + b, undefined, 3).collect()
    yield* pairs.count()
    yield* Effect.either(kc.range(0, 4, 1, 2).map((n) => { if (n === 3) throw new Error("three"); return n }).collect())
  })
)
`
  )
  const run = kindling([
    "submit",
    "--master",
    "local[2]",
    "--conf",
    "kindling.eventLog.enabled=true",
    "--conf",
    `kindling.eventLog.dir=${logs}`,
    "--conf",
    "kindling.ui.enabled=false",
    app
  ])
  const [appId] = Fs.readdirSync(logs)
  if (run.status !== 0 || appId === undefined) {
    check("a Kindling app writes an event log", false, run.stderr)
    return
  }
  const sparkPort = await freePort()
  const ours = await freePort()
  background(Path.join(home, "bin", "spark-class"), ["org.apache.spark.deploy.history.HistoryServer"], {
    SPARK_HOME: home,
    SPARK_HISTORY_OPTS: `-Dspark.history.fs.logDirectory=file:${logs} -Dspark.history.ui.port=${sparkPort} ` +
      "-Dspark.history.fs.update.interval=1s"
  })
  startKindling(["history", "--host", "127.0.0.1", "--port", String(ours), logs])
  const spark = `http://127.0.0.1:${sparkPort}/api/v1/applications`
  const listed = await eventually(async () => {
    const apps = await json(spark)
    return Array.isArray(apps) && apps.length > 0 ? apps : undefined
  }, 120)
  check(
    "Spark's History Server lists a Kindling event log",
    listed?.[0]?.id === appId && listed?.[0]?.attempts?.[0]?.completed === true,
    `GET ${spark}\n${JSON.stringify(listed, null, 1)}`
  )
  if (listed === undefined) return
  const sparkJobs = await eventually(() => json(`${spark}/${appId}/jobs`), 60)
  const sparkStages = await json(`${spark}/${appId}/stages`)
  const kindlingApi = `http://127.0.0.1:${ours}/api/v1/applications/${appId}`
  const ourJobs = await eventually(() => json(`${kindlingApi}/jobs`), 30)
  const ourStages = await json(`${kindlingApi}/stages`)
  const theirs = summary(sparkJobs ?? [], sparkStages ?? [])
  check(
    "Spark's History Server answers /jobs and /stages for it as Kindling's does",
    sparkJobs !== undefined && theirs === summary(ourJobs ?? [], ourStages ?? []),
    `GET ${spark}/${appId}/jobs (jobId, status, numTasks, completed, failed, skipped) and /stages:\n${theirs}\n` +
      `Kindling's history server:\n${summary(ourJobs ?? [], ourStages ?? [])}`
  )
}

// Spark's client logs the status answer at INFO, which Spark's default log configuration hides.
const restLogging = `rootLogger.level = warn
rootLogger.appenderRef.stdout.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %p %c{1}: %m%n%ex
logger.rest.name = org.apache.spark.deploy.rest
logger.rest.level = info
`

const restSubmission = async (home: string) => {
  const rpcPort = await freePort()
  const restPort = await freePort()
  const master = startKindling([
    "master",
    "--host",
    "127.0.0.1",
    "--port",
    String(rpcPort),
    "--webui-port",
    "0",
    "--conf",
    "kindling.master.rest.enabled=true",
    "--conf",
    `kindling.master.rest.port=${restPort}`
  ])
  const rest = `http://127.0.0.1:${restPort}`
  const ready = await eventually(() => json(`${rest}/v1/submissions/readyz`), 60)
  if (ready?.success !== true) {
    check("a Kindling master serves REST", false, master.output())
    return
  }
  startKindling([
    "worker",
    `kindling://127.0.0.1:${rpcPort}`,
    "--host",
    "127.0.0.1",
    "--cores",
    "2",
    "--memory",
    "2g",
    "--work-dir",
    Path.join(work, "worker")
  ])
  await new Promise((resolve) => setTimeout(resolve, 3000))
  const submitted = kindling([
    "submit",
    "--master",
    `kindling://127.0.0.1:${restPort}`,
    "--deploy-mode",
    "cluster",
    Path.join(root, "examples/sleepy-driver.mjs"),
    "120"
  ])
  const driverId = submitted.stdout.trim()
  if (submitted.status !== 0 || !driverId.startsWith("driver-")) {
    check("kindling submit over REST", false, submitted.stderr)
    return
  }
  const running = await eventually(async () => {
    const status = await json(`${rest}/v1/submissions/status/${driverId}`)
    return status?.driverState === "RUNNING" ? status : undefined
  }, 60)
  check(`a driver submitted over REST (${driverId}) runs`, running !== undefined, JSON.stringify(running))
  const conf = Path.join(work, "spark-conf")
  Fs.mkdirSync(conf)
  Fs.writeFileSync(Path.join(conf, "log4j2.properties"), restLogging)
  // spark-submit exits 0 whatever the answer: what it prints is what counts.
  const sparkSubmit = (...args: Array<string>) => {
    const result = ChildProcess.spawnSync(
      Path.join(home, "bin", "spark-submit"),
      ["--master", `spark://127.0.0.1:${restPort}`, ...args],
      { encoding: "utf8", env: { ...process.env, SPARK_HOME: home, SPARK_CONF_DIR: conf }, timeout: 120_000 }
    )
    return `${result.stdout}${result.stderr}`.split("\n").filter((line) => !line.startsWith("WARNING")).join("\n")
  }
  const status = sparkSubmit("--status", driverId)
  check(
    "spark-submit --status reads a Kindling driver's state over REST",
    /"driverState" : "RUNNING"/.test(status) && status.includes(driverId),
    `spark-submit --master spark://127.0.0.1:${restPort} --status ${driverId}\n${status}`
  )
  const kill = sparkSubmit("--kill", driverId)
  const killed = await eventually(async () => {
    const answer = await json(`${rest}/v1/submissions/status/${driverId}`)
    return answer?.driverState === "KILLED" ? answer : undefined
  }, 30)
  check(
    "spark-submit --kill kills a Kindling driver over REST",
    kill.includes("is killed successfully") && killed !== undefined,
    `spark-submit --master spark://127.0.0.1:${restPort} --kill ${driverId}\n${kill}\nthen: ${JSON.stringify(killed)}`
  )
}

const main = async () => {
  const home = sparkHome()
  console.log(`Spark ${pysparkVersion} from ${home}; working in ${work}`)
  await historyServer(home)
  await restSubmission(home)
}

main()
  .catch((error) => {
    failures++
    console.log(`FAIL ${String(error)}`)
  })
  .finally(() => {
    for (const child of children) {
      try {
        process.kill(-child.pid!, "SIGTERM")
      } catch {
        // Already gone.
      }
    }
    console.log(failures === 0 ? "All checks passed." : `${failures} check(s) failed.`)
    process.exit(failures)
  })
