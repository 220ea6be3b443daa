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
  readonly firstTaskMillis: number
  readonly runMillis: Array<number>
  readonly restRss: number
  readonly peakRss: number
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
    const outcome = { firstTaskMillis: 0, runMillis: [] as Array<number>, restRss: 0, peakRss: 0 }
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
    child.stdout.on("data", (chunk: Buffer) => {
      buffered += chunk
      const lines = buffered.split("\n")
      buffered = lines.pop()!
      for (const line of lines) {
        const [event, value] = line.split(" ")
        if (event === "first") {
          outcome.firstTaskMillis = Number(value) - started
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
      if (code === 0) resolve(outcome)
      else reject(new Error(`kindling submit --master ${master} exited with ${code}:\n${stderr}`))
    })
  })
