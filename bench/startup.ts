// What a command costs before it does anything, as an operator pays it: the built `kindling` (bin.js, as
// bin/kindling of the distribution runs it) against `node -e ''` in the same run, alternating so that load on the
// machine falls on both alike.
//
//   kindling --version                      answered before the command's modules load   target ≤ 150 ms
//   kindling status   (a live master)       from the commands' bundle                     target ≤ 400 ms
//   kindling submit --deploy-mode cluster   a small app uploaded, its driver id printed
//   kindling --help
//
// Each line: the median, the fastest and the slowest of the runs, and the median's ratio to `node -e ''`.
// Failover seen from `kindling submit` is measured by `pnpm bench failover`, column (c).
import { spawn, spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { format, percentile, row } from "./stats.js"

const root = fileURLToPath(new URL("../", import.meta.url))
const bin = Path.join(root, "packages/cli/dist/bin.js")
const runs = 15

const wallMillis = (args: ReadonlyArray<string>): number => {
  const started = performance.now()
  const result = spawnSync(process.execPath, args, { encoding: "utf8" })
  const millis = performance.now() - started
  if (result.status !== 0) throw new Error(`node ${args.join(" ")} exited with ${result.status}:\n${result.stderr}`)
  return millis
}

// A master of the built code on a free port, and its URL once it is ALIVE.
const work = Fs.mkdtempSync(Path.join(Os.tmpdir(), "kindling-startup-"))
const master = spawn(process.execPath, [
  bin,
  "master",
  "--host",
  "127.0.0.1",
  "--port",
  "0",
  "--conf",
  "kindling.master.ui.port=0"
], { stdio: ["ignore", "pipe", "pipe"] })
const url = await new Promise<string>((resolve, reject) => {
  let output = ""
  const look = (chunk: Buffer) => {
    output += chunk
    const alive = /Kindling master at (kindling:\/\/\S+)/.exec(output)
    if (alive !== null && output.includes("New state: ALIVE")) resolve(alive[1]!)
  }
  master.stdout.on("data", look)
  master.stderr.on("data", look)
  master.once("exit", (code) => reject(new Error(`the master exited with ${code}:\n${output}`)))
})
// An app no worker will run (there is none): the submission is what is measured, not the driver.
const app = Path.join(work, "app.mjs")
Fs.writeFileSync(app, "export default () => undefined\n")

const commands: ReadonlyArray<readonly [string, ReadonlyArray<string>, number | undefined]> = [
  ["node -e ''", ["-e", ""], undefined],
  ["kindling --version", [bin, "--version"], 150],
  ["kindling status", [bin, "status", "--master", url], 400],
  ["kindling submit (cluster)", [bin, "submit", "--master", url, "--deploy-mode", "cluster", app], undefined],
  ["kindling --help", [bin, "--help"], undefined]
]
const times = commands.map(() => [] as Array<number>)
try {
  for (let i = 0; i < runs; i++) {
    commands.forEach(([, args], c) => times[c]!.push(wallMillis(args)))
  }
} finally {
  master.kill("SIGKILL")
  Fs.rmSync(work, { recursive: true, force: true })
}

const baseline = percentile([...times[0]!].sort((a, b) => a - b), 50)
const widths = [28, 10, 10, 10, 12, 10]
console.log(
  `Start-up of the built kindling, ${runs} runs each, alternating (load average ${Os.loadavg()[0]!.toFixed(1)})\n`
)
console.log(row(["command", "median", "fastest", "slowest", "÷ node -e", "target"], widths))
commands.forEach(([name, , target], c) => {
  const sorted = [...times[c]!].sort((a, b) => a - b)
  const median = percentile(sorted, 50)
  console.log(row([
    name,
    `${format(median)} ms`,
    `${format(sorted[0]!)} ms`,
    `${format(sorted.at(-1)!)} ms`,
    format(median / baseline, 1),
    target === undefined ? "" : `≤ ${target} ms ${median <= target ? "met" : "MISSED"}`
  ], widths))
})
