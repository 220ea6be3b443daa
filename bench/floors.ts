// What this machine allows the per-task path at best, measured in the same run as the bench that compares with it:
// the round trips a task costs with no scheduling, no encoding and no task in them. In local[N] a task is a message
// to a task thread and its answer; on local-cluster it is that, behind a TCP round trip between the driver's
// process and an executor's. Each wake-up of a sleeping thread or process is a system call, and those dominate.
import { spawn } from "node:child_process"
import * as Net from "node:net"
import { Worker } from "node:worker_threads"

const echo =
  `require("node:worker_threads").parentPort.on("message", (m) => require("node:worker_threads").parentPort.postMessage(m))`

// `threads` task threads, each given the next message as soon as it answers the last: round trips per second.
export const threadRoundTrips = async (threads: number, total: number): Promise<number> => {
  const workers = Array.from({ length: threads }, () => new Worker(echo, { eval: true }))
  await Promise.all(workers.map((w) => new Promise((resolve) => w.once("online", resolve))))
  const started = performance.now()
  let sent = 0
  let answered = 0
  await new Promise<void>((resolve) => {
    for (const worker of workers) {
      worker.on("message", () => {
        if (++answered === total) resolve()
        else if (sent < total) worker.postMessage({ task: sent++, bytes: new Uint8Array(64) })
      })
      worker.postMessage({ task: sent++, bytes: new Uint8Array(64) })
    }
  })
  const perSecond = total / ((performance.now() - started) / 1000)
  await Promise.all(workers.map((w) => w.terminate()))
  return perSecond
}

// `processes` child processes, each relaying every frame to a thread of its own and back: the parent sends each
// the next frame as soon as it answers the last, over loopback TCP. Round trips per second.
export const processRoundTrips = async (processes: number, total: number): Promise<number> => {
  const server = Net.createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as Net.AddressInfo).port
  const relay = `
    const net = require("node:net"); const { Worker } = require("node:worker_threads")
    const thread = new Worker(${JSON.stringify(echo)}, { eval: true })
    const socket = net.connect(${port}, "127.0.0.1"); socket.setNoDelay(true)
    socket.on("data", (chunk) => thread.postMessage(chunk))
    thread.on("message", (chunk) => socket.write(chunk))
    socket.on("close", () => process.exit(0))`
  const children = Array.from({ length: processes }, () => spawn(process.execPath, ["-e", relay], { stdio: "inherit" }))
  const sockets = await new Promise<Array<Net.Socket>>((resolve) => {
    const accepted: Array<Net.Socket> = []
    server.on("connection", (socket) => {
      socket.setNoDelay(true)
      accepted.push(socket)
      if (accepted.length === processes) resolve(accepted)
    })
  })
  const frame = Buffer.alloc(100)
  const started = performance.now()
  let sent = 0
  let answered = 0
  await new Promise<void>((resolve) => {
    for (const socket of sockets) {
      socket.on("data", () => {
        if (++answered === total) return resolve()
        if (sent < total) {
          sent++
          socket.write(frame)
        }
      })
      sent++
      socket.write(frame)
    }
  })
  const perSecond = total / ((performance.now() - started) / 1000)
  for (const socket of sockets) socket.destroy()
  server.close()
  await Promise.all(children.map((child) => new Promise((resolve) => child.once("exit", resolve))))
  return perSecond
}
