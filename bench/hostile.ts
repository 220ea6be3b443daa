// A master (the built `kindling master`, a process of its own) under the two floods of the fault review, and the
// handshake flood that once locked newcomers out:
//
// 1. memory before authentication: 8 connections each send 120 MiB of a frame that declares 128 MiB to a master
//    with `kindling.authenticate=true`, none knowing the secret. Reported: the master's peak and final RSS
//    growth over its RSS before (target < 64 MiB).
// 2. an idle flood: 20,000 connections that complete the handshake (no secret) and then say nothing, opened by
//    two child processes of 10,000 each. Reported: the latency of `status` — a fresh connection and a driver
//    status ask, as `kindling status` does — while the flood arrives and once it is held, next to the same query
//    with no flood, in the same run (target ≤ 2×).
// 3. a handshake flood: 200 connections from one address and one from each of 64 others that say nothing, each
//    renewed as soon as the master closes it, beside a fresh client every 500 ms (what `kindling status` is):
//    answers during the flood against answers without it, plaintext, with a secret and with encryption, and with
//    the per-address share or the short handshake timeout turned off (which of the protections holds).
import { Ids, RpcAddress } from "@kindling/protocol"
import { MasterClient, RpcEnv, Transport } from "@kindling/rpc"
import { NodeDataPlane, NodeEncryption, NodeTransport } from "@kindling/rpc/node"
import { Effect, Layer } from "effect"
import { type ChildProcess, fork, spawn } from "node:child_process"
import * as Net from "node:net"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { frameHeader, hello, residentBytes, silentFlood } from "../packages/cli/test/fixtures/peers.js"
import { format, percentile, row } from "./stats.js"

const MiB = 1 << 20
const root = fileURLToPath(new URL("../", import.meta.url))
const floodSize = 20_000
const floodProcesses = 2

// ---- a master of its own --------------------------------------------------------------------------------

const startMaster = async (conf: ReadonlyArray<string>) => {
  const child = spawn(
    process.execPath,
    [Path.join(root, "packages/cli/dist/bin.js"), "master", "--host", "127.0.0.1", "--port", "0", ...conf],
    { stdio: ["ignore", "pipe", "pipe"] }
  )
  let output = ""
  const url = await new Promise<string>((resolve, reject) => {
    const look = (chunk: Buffer) => {
      output += chunk
      const match = /Kindling master at (kindling:\/\/127\.0\.0\.1:(\d+))/.exec(output)
      if (match !== null) resolve(match[1]!)
    }
    child.stdout.on("data", look)
    child.stderr.on("data", look)
    child.once("exit", (code) => reject(new Error(`the master exited with ${code}:\n${output}`)))
  })
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve()
      child.once("exit", () => resolve())
      child.kill("SIGKILL")
    })
  return { pid: child.pid!, url, port: Number(url.split(":").at(-1)), stop }
}

const settle = (millis: number) => new Promise((resolve) => setTimeout(resolve, millis))

// ---- 1. memory before authentication -----------------------------------------------------------------------

// Sends up to `bytes` of a frame declaring `declared`, until done or hung up on; resolves with the bytes sent.
const oversizedFrame = (port: number, declared: number, bytes: number) =>
  new Promise<number>((resolve) => {
    const socket = Net.connect(port, "127.0.0.1")
    const chunk = Buffer.alloc(MiB, 0x61)
    let sent = 0
    socket.on("error", () => {})
    socket.on("close", () => resolve(sent))
    // A socket nobody reads from never hears the master hang up.
    socket.resume()
    socket.once("connect", () => {
      socket.write(frameHeader(declared))
      const pump = () => {
        while (sent < bytes && !socket.destroyed) {
          sent += chunk.length
          if (!socket.write(chunk)) return socket.once("drain", pump)
        }
        socket.end()
      }
      pump()
    })
  })

const memoryBeforeAuthentication = async () => {
  const master = await startMaster([
    "--conf",
    "kindling.authenticate=true",
    "--conf",
    "kindling.authenticate.secret=known-only-to-the-cluster"
  ])
  await settle(1000)
  const before = residentBytes(master.pid)
  let peak = before
  const sampler = setInterval(() => (peak = Math.max(peak, residentBytes(master.pid))), 10)
  const sent = await Promise.all(Array.from({ length: 8 }, () => oversizedFrame(master.port, 128 * MiB, 120 * MiB)))
  await settle(500)
  clearInterval(sampler)
  const after = residentBytes(master.pid)
  await master.stop()
  return { before, peakGrowth: peak - before, finalGrowth: after - before, sent }
}

// ---- 2. status under an idle flood --------------------------------------------------------------------------

// One `kindling status`: a node of its own, a connection, an ask.
const statusMillis = (url: string) =>
  Effect.gen(function*() {
    const started = performance.now()
    const client = yield* MasterClient.make(url, { timeout: "30 seconds" })
    // No such driver: the answer (DriverNotFound) is the round trip being measured.
    yield* Effect.flip(client.driverStatus(Ids.DriverId.make("driver-20260101000000-0000")))
    return performance.now() - started
  }).pipe(Effect.scoped, Effect.provide(RpcEnv.layer({})), Effect.provide(NodeTransport.layer), Effect.runPromise)

const statusLatencies = async (url: string, count: number, until?: () => boolean) => {
  const millis: Array<number> = []
  for (let i = 0; i < count || (until !== undefined && !until()); i++) millis.push(await statusMillis(url))
  return millis.sort((a, b) => a - b)
}

interface FloodReport {
  readonly opened: number
  readonly open: number
}

// A flood child: opens its share of connections, says hello on each and keeps quiet; reports when it has tried
// them all and, when asked, how many are still open.
const floodChild = async (port: number, count: number, firstClaimedPort: number) => {
  const sockets: Array<Net.Socket> = []
  let next = 0
  const openOne = (): Promise<void> =>
    new Promise((resolve) => {
      const socket = Net.connect(port, "127.0.0.1")
      socket.on("error", () => {})
      socket.once("close", () => resolve())
      socket.once("connect", () => {
        socket.write(hello(RpcAddress.make("127.0.0.1", firstClaimedPort + sockets.length)))
        sockets.push(socket)
        resolve()
      })
      socket.resume()
    })
  const opener = async () => {
    while (next < count) {
      next++
      await openOne()
    }
  }
  await Promise.all(Array.from({ length: 200 }, opener))
  const report = (): FloodReport => ({ opened: sockets.length, open: sockets.filter((s) => !s.destroyed).length })
  process.send!({ done: report() })
  process.on("message", () => process.send!({ held: report() }))
}

const startFlood = (port: number) =>
  Array.from({ length: floodProcesses }, (_, i) => {
    const share = floodSize / floodProcesses
    const child = fork(fileURLToPath(import.meta.url), ["--flood", String(port), String(share), String(i * share + 1)])
    let done: FloodReport | undefined
    const ready = new Promise<FloodReport>((resolve) =>
      child.on("message", (message: { done?: FloodReport }) => {
        if (message.done !== undefined) resolve(done = message.done)
      })
    )
    return { child, ready, isDone: () => done !== undefined }
  })

const held = (child: ChildProcess) =>
  new Promise<FloodReport>((resolve) => {
    child.once("message", (message: { held: FloodReport }) => resolve(message.held))
    child.send("report")
  })

const statusUnderFlood = async () => {
  const master = await startMaster([])
  await statusLatencies(master.url, 500)
  const idle = await statusLatencies(master.url, 300)
  const flood = startFlood(master.port)
  const arriving = await statusLatencies(master.url, 1, () => flood.every((f) => f.isDone()))
  const opened = await Promise.all(flood.map((f) => f.ready))
  const holding = await statusLatencies(master.url, 300)
  const stillOpen = await Promise.all(flood.map((f) => held(f.child)))
  for (const f of flood) f.child.kill("SIGKILL")
  await master.stop()
  return { idle, arriving, holding, opened, stillOpen }
}

// ---- 3. newcomers during a handshake flood ----------------------------------------------------------------------

interface Security {
  readonly name: string
  readonly secret?: string
  readonly encrypt?: boolean
}

// The network of a fresh client of a master with `security`, as `kindling status` builds it.
const clientNetwork = (security: Security) => {
  const transport = security.encrypt === true
    ? Layer.merge(
      Layer.effect(
        Transport.Transport,
        Effect.map(NodeTransport.make, (tcp) => NodeEncryption.encrypted(tcp, { secret: security.secret! }))
      ),
      NodeDataPlane.layer
    )
    : NodeTransport.layer
  return RpcEnv.layer(security.secret === undefined ? {} : { secret: security.secret }).pipe(Layer.provide(transport))
}

// One fresh client asking the master's state: whether it got an answer (within the asks' own bounds).
const answered = (url: string, security: Security) =>
  Effect.gen(function*() {
    const client = yield* MasterClient.make(url, { timeout: "10 seconds" })
    yield* client.masterState
    return true
  }).pipe(
    Effect.scoped,
    Effect.provide(clientNetwork(security)),
    Effect.catchAll(() => Effect.succeed(false)),
    Effect.runPromise
  )

// A fresh client every 500 ms for `rounds` rounds: how many were answered.
const everyHalfSecond = async (url: string, security: Security, rounds: number) => {
  let count = 0
  for (let i = 0; i < rounds; i++) {
    const started = performance.now()
    if (await answered(url, security)) count++
    await settle(Math.max(0, 500 - (performance.now() - started)))
  }
  return count
}

const securityConf = (security: Security) => [
  ...(security.secret === undefined
    ? []
    : ["--conf", "kindling.authenticate=true", "--conf", `kindling.authenticate.secret=${security.secret}`]),
  ...(security.encrypt === true ? ["--conf", "kindling.network.crypto.enabled=true"] : [])
]

// 200 silent connections from 127.0.0.1 and one from each of 64 other addresses, each renewed 100 ms after the
// master closes it (the attack was 64 renewed every 10 s); fresh clients alongside, without and with it.
const newcomersUnderHandshakeFlood = async (security: Security, conf: ReadonlyArray<string>, rounds: number) => {
  const master = await startMaster([...securityConf(security), ...conf])
  await settle(500)
  const without = await everyHalfSecond(master.url, security, rounds)
  const before = residentBytes(master.pid)
  const floods = [
    silentFlood(master.port, ["127.0.0.1"], 200),
    silentFlood(master.port, Array.from({ length: 64 }, (_, i) => `127.0.0.${i + 2}`), 1)
  ]
  await settle(1000)
  const during = await everyHalfSecond(master.url, security, rounds)
  const growth = residentBytes(master.pid) - before
  const opened = floods.reduce((n, f) => n + f.opened(), 0)
  for (const flood of floods) flood.stop()
  await master.stop()
  return { without, during, growth, opened }
}

// ---- the report ---------------------------------------------------------------------------------------------

const mib = (bytes: number) => `${format(bytes / MiB, 1)} MiB`
const ms = (millis: number) => `${format(millis, 2)} ms`

const main = async () => {
  console.log("1. 8 unauthenticated connections, each 120 MiB of a declared 128 MiB frame\n")
  const memory = await memoryBeforeAuthentication()
  const widths = [36, 14]
  console.log(row(["master RSS before", mib(memory.before)], widths))
  console.log(row(["peak growth", mib(memory.peakGrowth)], widths))
  console.log(row(["growth after", mib(memory.finalGrowth)], widths))
  console.log(row(["bytes the peers got rid of", mib(memory.sent.reduce((a, b) => a + b, 0))], widths))
  console.log(row(["peak growth ÷ target (64 MiB)", format(memory.peakGrowth / (64 * MiB), 2)], widths))

  console.log(`\n2. status latency, fresh connection each, with and without ${format(floodSize)} idle connections\n`)
  const flood = await statusUnderFlood()
  const cols = [26, 9, 12, 12, 12]
  console.log(row(["", "queries", "p50", "p95", "p50 ÷ idle"], cols))
  const idleP50 = percentile(flood.idle, 50)
  for (
    const [name, sorted] of [["no flood", flood.idle], ["while the flood arrives", flood.arriving], [
      "flood held",
      flood.holding
    ]] as const
  ) {
    console.log(row([
      name,
      format(sorted.length),
      ms(percentile(sorted, 50)),
      ms(percentile(sorted, 95)),
      `${format(percentile(sorted, 50) / idleP50, 2)}×`
    ], cols))
  }
  const opened = flood.opened.reduce((a, b) => a + b.opened, 0)
  const open = flood.stillOpen.reduce((a, b) => a + b.open, 0)
  console.log(`\nflood: ${format(opened)} connections completed their hello; ${format(open)} still open at the end`)
  console.log("(the master keeps at most kindling.rpc.maxConnections, 4,096 by default, closing unused ones for new)")

  const rounds = 30
  console.log(
    `\n3. a fresh client every 500 ms (${rounds} each), beside 264 silent connections renewed as the master closes ` +
      "them\n"
  )
  const wide = [44, 10, 10, 14, 14]
  console.log(row(["master", "without", "during", "flood opened", "RSS growth"], wide))
  const variants: ReadonlyArray<readonly [Security, string, ReadonlyArray<string>]> = [
    [{ name: "plaintext" }, "defaults", []],
    [{ name: "secret", secret: "known-only-to-the-cluster" }, "defaults", []],
    [{ name: "secret + encryption", secret: "known-only-to-the-cluster", encrypt: true }, "defaults", []],
    [{ name: "secret", secret: "known-only-to-the-cluster" }, "no per-address share", [
      "--conf",
      "kindling.rpc.maxHandshakesPerAddress=64"
    ]],
    [{ name: "secret", secret: "known-only-to-the-cluster" }, "handshake timeout 60 s", [
      "--conf",
      "kindling.rpc.handshakeTimeout=60s"
    ]]
  ]
  for (const [security, name, conf] of variants) {
    const result = await newcomersUnderHandshakeFlood(security, conf, rounds)
    console.log(row([
      `${security.name}, ${name}`,
      `${result.without}/${rounds}`,
      `${result.during}/${rounds}`,
      format(result.opened),
      mib(result.growth)
    ], wide))
  }
  console.log(
    "\ntargets: peak RSS growth < 64 MiB; status p50 under the flood ≤ 2× without; every newcomer answered during " +
      "the handshake flood"
  )
}

if (process.argv[2] === "--flood") {
  await floodChild(Number(process.argv[3]), Number(process.argv[4]), Number(process.argv[5]))
} else {
  await main()
}
