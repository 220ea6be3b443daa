// Running the benches' apps and peers to their end: a command's wall time and output, `kindling submit` of the
// built CLI, and the `result …` lines the bench apps print.
import { spawn } from "node:child_process"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

export const root = fileURLToPath(new URL("../", import.meta.url))

export interface Ran {
  readonly millis: number
  readonly stdout: string
}

export interface RunOptions {
  readonly env?: NodeJS.ProcessEnv
  readonly cwd?: string
  /** Called with the process id every 50 ms while it runs (to sample its resident memory, say). */
  readonly sample?: (pid: number) => void
}

/** Runs a command to its end; a failure rejects with its output. */
export const run = (command: string, args: ReadonlyArray<string>, options: RunOptions = {}) =>
  new Promise<Ran>((resolve, reject) => {
    const started = performance.now()
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    const sampler = options.sample && setInterval(() => options.sample!(child.pid!), 50)
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => (stdout += chunk))
    child.stderr.on("data", (chunk) => (stderr += chunk))
    child.once("exit", (code) => {
      const millis = performance.now() - started
      if (sampler) clearInterval(sampler)
      if (code === 0) resolve({ millis, stdout })
      else reject(new Error(`${command} ${args.join(" ")} exited with ${code}:\n${stdout}\n${stderr.slice(-4000)}`))
    })
  })

/** `kindling submit --master MASTER [flags] APP [args]` with the built CLI. */
export const submit = (
  master: string,
  app: string,
  args: ReadonlyArray<string>,
  options: RunOptions & { readonly flags?: ReadonlyArray<string>; readonly nodeFlags?: ReadonlyArray<string> } = {}
) =>
  run(process.execPath, [
    ...(options.nodeFlags ?? []),
    Path.join(root, "packages/cli/dist/bin.js"),
    "submit",
    "--master",
    master,
    ...(options.flags ?? []),
    Path.isAbsolute(app) ? app : Path.join(root, app),
    ...args
  ], options)

/** The fields of the `result …` lines an app printed, as numbers, one array per line. */
export const results = (stdout: string): Array<Array<number>> =>
  stdout.split("\n").filter((line) => line.startsWith("result ")).map((line) => line.split(" ").slice(1).map(Number))
