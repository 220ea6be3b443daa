// Runs bench/apps/empty-tasks.ts through the built `kindling submit` and reads what it reports: when its first
// task finished, how long each job of empty tasks took, and the executors' resident memory at rest and at peak.
// Shared by `pnpm bench tasks` and `pnpm bench ui`.
import { spawn } from "node:child_process"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { children, rss } from "./processes.js"

const root = fileURLToPath(new URL("../", import.meta.url))
const app = Path.join(root, "bench/apps/empty-tasks.ts")

export interface Outcome {
  /** From starting `kindling submit` to its first one-task job ended. */
  readonly firstTaskMillis: number
  /** From the app's context ready (its body starts) to that first job ended. */
  readonly firstJobMillis: number
  /**
   * On a cluster, for each executor: from its worker being asked to launch it (before its process starts) to its
   * driver registering it, from the log's timestamps.
   */
  readonly registerMillis: ReadonlyArray<number>
  readonly runMillis: Array<number>
  readonly restRss: number
  readonly peakRss: number
}

const at = (line: string) => Date.parse(line.slice(0, 23).replace(" ", "T"))

// Pairs each "Asked to launch executor APP/N" of a worker with the driver's "Registered executor N".
const registrations = (log: string): Array<number> => {
  const asked = new Map<string, number>()
  const millis: Array<number> = []
  for (const line of log.split("\n")) {
    const launch = /Asked to launch executor \S+\/(\d+) /.exec(line)
    if (launch !== null) asked.set(launch[1]!, at(line))
    const registered = /Registered executor (\S+) on /.exec(line)
    const from = registered === null ? undefined : asked.get(registered[1]!)
    if (from !== undefined) millis.push(at(line) - from)
  }
  return millis
}

export const emptyTasks = (options: {
  readonly master: string
  readonly runs: number
  readonly tasks: number
  /** More `kindling submit` flags (`--conf key=value`, …). */
  readonly flags?: ReadonlyArray<string>
}) =>
  new Promise<Outcome>((resolve, reject) => {
    const { master } = options
    const started = Date.now()
    const child = spawn(
      process.execPath,
      [
        Path.join(root, "packages/cli/dist/bin.js"),
        "submit",
        "--master",
        master,
        ...(options.flags ?? []),
        app,
        String(options.runs),
        String(options.tasks)
      ],
      { stdio: ["ignore", "pipe", "pipe"] }
    )
    const outcome = {
      firstTaskMillis: 0,
      firstJobMillis: 0,
      registerMillis: [] as Array<number>,
      runMillis: [] as Array<number>,
      restRss: 0,
      peakRss: 0
    }
    let phase: "starting" | "rest" | "running" = "starting"
    // In local[N] the executor is the submit process itself.
    const executors = () => (master.startsWith("local-cluster") ? children(child.pid!) : [child.pid!])
    const sampler = setInterval(() => {
      if (phase !== "running") return
      outcome.peakRss = Math.max(outcome.peakRss, ...executors().map(rss))
    }, 20)
    let stderr = ""
    child.stderr.on("data", (chunk) => (stderr += chunk))
    let buffered = ""
    let ready = NaN
    child.stdout.on("data", (chunk: Buffer) => {
      buffered += chunk
      const lines = buffered.split("\n")
      buffered = lines.pop()!
      for (const line of lines) {
        const [event, value] = line.split(" ")
        if (event === "ready") {
          ready = Number(value)
        } else if (event === "first") {
          outcome.firstTaskMillis = Number(value) - started
          outcome.firstJobMillis = Number(value) - ready
          phase = "rest"
        } else if (event === "rest") {
          outcome.restRss = Math.max(...executors().map(rss))
          phase = "running"
        } else if (event === "run") {
          outcome.runMillis.push(Number(value))
        }
      }
    })
    child.once("exit", (code) => {
      clearInterval(sampler)
      outcome.registerMillis = registrations(stderr)
      if (code === 0) resolve(outcome)
      else reject(new Error(`kindling submit --master ${master} exited with ${code}:\n${stderr}`))
    })
  })
