// The history server's curve (d): a real `kindling history` over a folder of N event logs of finished apps, its
// resident memory once it lists all N. The logs are copies of one real app's log (`bench/apps/one-task.ts`, run
// with its event log on), each under an app id of its own.
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { rss } from "../processes.js"
import { root, submit } from "../submit.js"

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = Net.createServer()
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as Net.AddressInfo
      server.close(() => resolve(port))
    })
  })

const listed = async (port: number): Promise<number> => {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/api/v1/applications`)
    return response.ok ? ((await response.json()) as Array<unknown>).length : -1
  } catch {
    return -1
  }
}

/** [apps, resident bytes] after each count of `counts`, on one history server whose folder grows. */
export const historyMemory = async (counts: ReadonlyArray<number>) => {
  const work = Fs.mkdtempSync(Path.join(Os.tmpdir(), "kindling-bench-history-"))
  const template = Path.join(work, "template")
  const logs = Path.join(work, "logs")
  Fs.mkdirSync(template)
  Fs.mkdirSync(logs)
  await submit("local[2]", "bench/apps/one-task.ts", [], {
    flags: ["--conf", "kindling.eventLog.enabled=true", "--conf", `kindling.eventLog.dir=${template}`]
  })
  const [name] = Fs.readdirSync(template)
  const text = Fs.readFileSync(Path.join(template, name!), "utf8")
  const port = await freePort()
  const server = spawn(process.execPath, [
    Path.join(root, "packages/cli/dist/bin.js"),
    "history",
    "--port",
    String(port),
    "--conf",
    "kindling.history.fs.update.interval=1s",
    logs
  ], { stdio: "ignore" })
  const points: Array<readonly [number, number]> = []
  try {
    let written = 0
    for (const count of counts) {
      for (; written < count; written++) {
        const id = `app-20261205000000-${String(written).padStart(5, "0")}`
        Fs.writeFileSync(Path.join(logs, id), text.replaceAll(name!, id))
      }
      const deadline = Date.now() + 300_000
      while ((await listed(port)) !== count) {
        if (Date.now() > deadline) throw new Error(`the history server did not list ${count} apps in 5 minutes`)
        await new Promise((resolve) => setTimeout(resolve, 250))
      }
      await new Promise((resolve) => setTimeout(resolve, 2000)) // what the reading left settles
      points.push([count, rss(server.pid!)])
    }
  } finally {
    server.kill()
    Fs.rmSync(work, { recursive: true, force: true })
  }
  return points
}
