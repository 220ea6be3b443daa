// A 1 GiB transfer over TCP loopback on the data plane of @kindling/protocol — checked chunk by chunk, and end to
// end (without per-chunk checksums, as reduce tasks fetch shuffle blocks) — next to raw node:net piping the same
// bytes between the same two processes in the same run: a child process serves, this process fetches.
// Both kinds of fetch run again between two more nodes of the same processes with encryption in transit
// (kindling.network.crypto.enabled, with the cluster secret's handshake), for the cost of encryption.
// Reported: throughput of each and the ratio, the CPU time and peak RSS growth of each process during each
// transfer, and the control plane's ask p50 between the same two nodes, idle and while a transfer runs (and, for
// comparison, while the raw transfer runs), and idle between the encrypted nodes.
import { Ids, RpcAddress, SubmissionMessages } from "@kindling/protocol"
import { RpcEnv, Transport } from "@kindling/rpc"
import { NodeDataPlane, NodeEncryption, NodeTransport } from "@kindling/rpc/node"
import { Effect, Fiber, Layer, Option, Stream } from "effect"
import { type ChildProcess, fork } from "node:child_process"
import * as Net from "node:net"
import { fileURLToPath } from "node:url"
import { format, percentile, row } from "./stats.js"

const size = 1024 * 1024 * 1024
const rounds = 3
const pieceSize = 256 * 1024
const blockId = "bench/1g"

// The encrypted pair of nodes: TCP encrypted with the cluster's secret, which they also authenticate with.
const secret = "the transfer bench's cluster secret"
const encrypted = Layer.merge(
  Layer.effect(Transport.Transport, Effect.map(NodeTransport.make, (tcp) => NodeEncryption.encrypted(tcp, { secret }))),
  NodeDataPlane.layer
)

// ---- the bytes: generated as they are read, never held whole ----------------------------------------------

// Offset o holds pattern[o mod period]; a period that is no power of two makes misplaced bytes show. A piece is a
// view of the pattern (pieces are far shorter than the headroom), so neither side spends time making bytes.
const period = (1 << 20) + 4093
const headroom = 16 * 1024 * 1024
const pattern = new Uint8Array(period + headroom)
for (let i = 0; i < pattern.length; i++) pattern[i] = (Math.imul(i % period, 2654435761) >>> 24) & 0xff

const generated = (offset: number, length: number): Uint8Array => {
  const start = offset % period
  return pattern.subarray(start, start + length)
}

// ---- what a process spends: peak RSS, sampled on a timer and from the hot loops, and CPU time ---------------

interface Spent {
  readonly rssGrowth: number
  readonly cpuSeconds: number
}

// Reading the RSS costs a system call, so the hot loops sample it only when the timer may have been starved.
const meter = () => {
  let base = process.memoryUsage.rss()
  let peak = base
  let cpu = process.cpuUsage()
  let sampledAt = performance.now()
  const sample = () => {
    sampledAt = performance.now()
    const rss = process.memoryUsage.rss()
    if (rss > peak) peak = rss
  }
  const timer = setInterval(sample, 5)
  timer.unref()
  return {
    mark: () => {
      base = process.memoryUsage.rss()
      peak = base
      cpu = process.cpuUsage()
    },
    sampleSometimes: () => {
      if (performance.now() - sampledAt > 5) sample()
    },
    spent: (): Spent => {
      sample()
      const { system, user } = process.cpuUsage(cpu)
      return { rssGrowth: peak - base, cpuSeconds: (user + system) / 1e6 }
    }
  }
}

type Meter = ReturnType<typeof meter>

const mib = (bytes: number) => `${format(bytes / (1024 * 1024), 1)} MiB`

// ---- the child: serves the block, the raw bytes and the asks ------------------------------------------------

// The parent asks the child over IPC to start measuring ("mark") or for what it spent since ("spent").
type Request = "mark" | "spent"

const statusReply = new SubmissionMessages.DriverStatusResponse({
  found: true,
  state: Option.some("RUNNING"),
  workerId: Option.some(Ids.WorkerId.make("worker-20260101000000-10.0.0.12-41234")),
  workerHostPort: Option.some("10.0.0.12:41234"),
  exception: Option.none()
})

const serveChild = Effect.gen(function*() {
  const rss = meter()
  const serveOn = (rpc: RpcEnv.RpcEnv) =>
    Effect.gen(function*() {
      yield* rpc.register("Bench", {
        inbound: SubmissionMessages.RequestDriverStatus,
        handlers: { RequestDriverStatus: () => Effect.succeed(statusReply) }
      })
      yield* rpc.data.serve("bench/", () =>
        Effect.succeed({
          size,
          read: (offset, length) => {
            rss.sampleSometimes()
            return Effect.succeed(generated(offset, length))
          }
        }))
      return rpc.address!.port
    })
  const rpcPort = yield* serveOn(yield* RpcEnv.make({ host: "127.0.0.1", port: 0 }))
  const sealedPort = yield* serveOn(
    yield* RpcEnv.make({ host: "127.0.0.1", port: 0, secret }).pipe(Effect.provide(encrypted))
  )
  const raw = Net.createServer((socket) => {
    socket.setNoDelay(true)
    let offset = 0
    const pump = () => {
      while (offset < size) {
        const length = Math.min(pieceSize, size - offset)
        const piece = generated(offset, length)
        offset += length
        rss.sampleSometimes()
        if (!socket.write(piece)) return socket.once("drain", pump)
      }
      socket.end()
    }
    pump()
  })
  yield* Effect.async<void>((resume) => {
    raw.listen(0, "127.0.0.1", () => resume(Effect.void))
  })
  process.on("message", (request: Request) => {
    if (request === "mark") rss.mark()
    process.send!(rss.spent())
  })
  process.send!({ rpcPort, sealedPort, rawPort: (raw.address() as Net.AddressInfo).port })
  yield* Effect.never
}).pipe(Effect.scoped, Effect.provide(NodeTransport.layer))

// ---- the parent ---------------------------------------------------------------------------------------------

const tellChild = (child: ChildProcess, request: Request) =>
  new Promise<Spent>((resolve) => {
    child.once("message", (spent: Spent) => resolve(spent))
    child.send(request)
  })

interface Run {
  readonly seconds: number
  readonly fetcher: Spent
  readonly server: Spent
}

const measure = async (child: ChildProcess, rss: Meter, transfer: () => Promise<number>): Promise<Run> => {
  await tellChild(child, "mark")
  rss.mark()
  const started = performance.now()
  const received = await transfer()
  const seconds = (performance.now() - started) / 1000
  if (received !== size) throw new Error(`received ${received} bytes, expected ${size}`)
  return { seconds, fetcher: rss.spent(), server: await tellChild(child, "spent") }
}

const rawTransfer = (port: number, rss: Meter) => () =>
  new Promise<number>((resolve, reject) => {
    let received = 0
    const socket = Net.connect({ host: "127.0.0.1", port })
    socket.on("data", (chunk: Buffer) => {
      received += chunk.length
      rss.sampleSometimes()
    })
    socket.once("end", () => resolve(received))
    socket.once("error", reject)
  })

const main = Effect.gen(function*() {
  const child = fork(fileURLToPath(import.meta.url), ["--serve"], { execArgv: process.execArgv })
  type Ports = { rpcPort: number; sealedPort: number; rawPort: number }
  const ports = yield* Effect.async<Ports>((resume) => {
    child.once("message", (ports: Ports) => resume(Effect.succeed(ports)))
  })
  yield* Effect.addFinalizer(() => Effect.sync(() => child.kill()))
  const rss = meter()
  const plain = {
    rpc: yield* RpcEnv.make({ host: "127.0.0.1", port: 0 }),
    server: RpcAddress.make("127.0.0.1", ports.rpcPort)
  }
  const sealed = {
    rpc: yield* RpcEnv.make({ host: "127.0.0.1", port: 0, secret }).pipe(Effect.provide(encrypted)),
    server: RpcAddress.make("127.0.0.1", ports.sealedPort)
  }
  type Pair = typeof plain
  const request = new SubmissionMessages.RequestDriverStatus({ driverId: Ids.DriverId.make("driver-1") })

  // Kindling's two kinds of fetch: bytes the data plane checks chunk by chunk (broadcasts, results, artifacts), and
  // bytes their consumer checks end to end, which come without per-chunk checksums (shuffle blocks).
  const fetchAll = (checksums: boolean, { rpc, server }: Pair = plain) =>
    Stream.runFold(rpc.data.fetch(server, blockId, { checksums }), 0, (received, chunk) => {
      rss.sampleSometimes()
      return received + chunk.length
    })
  const kindlingTransfer = (checksums: boolean, pair: Pair = plain) => () =>
    Effect.runPromise(fetchAll(checksums, pair))

  // Sequential asks, timed one by one, until `done` says to stop.
  const latencies = (done: () => boolean, atLeast: number, { rpc, server }: Pair = plain) =>
    Effect.gen(function*() {
      const bench: RpcAddress.Ref<SubmissionMessages.RequestDriverStatus> = RpcAddress.endpoint(server, "Bench")
      const times: Array<number> = []
      while (times.length < atLeast || !done()) {
        const started = performance.now()
        yield* rpc.ask(bench, request)
        times.push(performance.now() - started)
      }
      return times.sort((a, b) => a - b)
    })

  const transfers = {
    raw: rawTransfer(ports.rawPort, rss),
    checked: kindlingTransfer(true),
    endToEnd: kindlingTransfer(false),
    sealedChecked: kindlingTransfer(true, sealed),
    sealedEndToEnd: kindlingTransfer(false, sealed)
  }
  const order = ["raw", "checked", "endToEnd", "sealedChecked", "sealedEndToEnd"] as const

  // Both sides warm up (the JIT, the heap) before anything is measured.
  yield* latencies(() => true, 2000)
  yield* latencies(() => true, 2000, sealed)
  for (let i = 0; i < 2; i++) {
    for (const side of order) yield* Effect.promise(transfers[side])
  }

  const runs = {
    raw: [] as Array<Run>,
    checked: [] as Array<Run>,
    endToEnd: [] as Array<Run>,
    sealedChecked: [] as Array<Run>,
    sealedEndToEnd: [] as Array<Run>
  }
  for (let round = 0; round < rounds; round++) {
    // Rotating the order spreads what the shared machine does to each side.
    for (let i = 0; i < order.length; i++) {
      const side = order[(round + i) % order.length]!
      runs[side].push(yield* Effect.promise(() => measure(child, rss, transfers[side])))
    }
  }

  // Asks while a transfer runs, for as long as it runs.
  const during = <E>(transfer: Effect.Effect<unknown, E>) =>
    Effect.gen(function*() {
      let transferring = true
      const fiber = yield* Effect.fork(Effect.ensuring(transfer, Effect.sync(() => (transferring = false))))
      const times = yield* latencies(() => !transferring, 200)
      yield* Fiber.join(fiber)
      return times
    })
  const idle = yield* latencies(() => true, 5000)
  const sealedIdle = yield* latencies(() => true, 5000, sealed)
  const busy = {
    checked: yield* during(fetchAll(true)),
    endToEnd: yield* during(fetchAll(false)),
    raw: yield* during(Effect.promise(rawTransfer(ports.rawPort, rss)))
  }
  const stats = yield* plain.rpc.data.stats
  return { runs, idle, sealedIdle, busy, stats }
}).pipe(Effect.scoped, Effect.provide(NodeTransport.layer))

const report = ({ busy, idle, runs, sealedIdle, stats }: Effect.Effect.Success<typeof main>) => {
  const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[values.length >> 1]!
  const range = (values: ReadonlyArray<number>, show: (n: number) => string) =>
    `${show(Math.min(...values))} – ${show(Math.max(...values))}`
  const times = (n: number) => `${format(n, 2)}×`
  const widths = [28, 13, 13, 13, 20, 20]
  // One figure per round for each side, next to the raw round run beside it.
  const compare = (label: string, pick: (run: Run) => number, show: (n: number) => string) => {
    const ratios = (ours: ReadonlyArray<Run>) => {
      const each = ours.map((run, i) => pick(run) / pick(runs.raw[i]!))
      return `${times(median(each))} (${range(each, times)})`
    }
    console.log(row([
      label,
      show(median(runs.checked.map(pick))),
      show(median(runs.endToEnd.map(pick))),
      show(median(runs.raw.map(pick))),
      ratios(runs.checked),
      ratios(runs.endToEnd)
    ], widths))
  }
  console.log(`\n1 GiB over TCP loopback, ${rounds} rounds each: medians, and the range of the per-round ratio`)
  console.log("(checked: a CRC-32 per chunk; end to end: without, as shuffle blocks, whose frames carry their own)\n")
  console.log(row(["", "checked", "end to end", "raw node:net", "checked ÷ raw", "end to end ÷ raw"], widths))
  compare("throughput", (run) => size / run.seconds / (1024 * 1024 * 1024), (n) => `${format(n, 2)} GiB/s`)
  compare("CPU time, fetching process", (run) => run.fetcher.cpuSeconds, (n) => `${format(n, 2)} s`)
  compare("CPU time, serving process", (run) => run.server.cpuSeconds, (n) => `${format(n, 2)} s`)
  console.log(`\npeak RSS growth during a transfer (the most over the ${rounds} rounds)\n`)
  console.log(row(["", "checked", "end to end", "raw node:net"], widths))
  for (const [label, side] of [["fetching process", "fetcher"], ["serving process", "server"]] as const) {
    const most = (sideRuns: ReadonlyArray<Run>) => mib(Math.max(...sideRuns.map((run) => run[side].rssGrowth)))
    console.log(row([label, most(runs.checked), most(runs.endToEnd), most(runs.raw)], widths))
  }
  const idleP50 = percentile(idle, 50)
  const micros = (ms: number) => `${format(ms * 1000, 1)} µs`
  const askWidths = [36, 13, 13, 13]
  console.log(`\nask p50 between the same two nodes (${format(idle.length)} idle, then during each transfer)\n`)
  console.log(row(["", "during", "idle", "ratio"], askWidths))
  for (
    const [label, sample] of [
      ["while Kindling transfers, checked", busy.checked],
      ["while Kindling transfers, end to end", busy.endToEnd],
      ["while raw node:net transfers", busy.raw]
    ] as const
  ) {
    const p50 = percentile(sample, 50)
    console.log(row([label, micros(p50), micros(idleP50), times(p50 / idleP50)], askWidths))
  }
  // Encryption's cost: each encrypted fetch against the same fetch in the clear of the same round.
  console.log("\nencrypted in transit (kindling.network.crypto.enabled) against the same fetch in the clear\n")
  const sealedWidths = [28, 16, 16, 22, 22]
  console.log(row(["", "checked", "end to end", "checked ÷ clear", "end to end ÷ clear"], sealedWidths))
  const against = (
    label: string,
    pick: (run: Run) => number,
    show: (n: number) => string
  ) => {
    const ratio = (ours: ReadonlyArray<Run>, clear: ReadonlyArray<Run>) => {
      const each = ours.map((run, i) => pick(run) / pick(clear[i]!))
      return `${times(median(each))} (${range(each, times)})`
    }
    console.log(row([
      label,
      show(median(runs.sealedChecked.map(pick))),
      show(median(runs.sealedEndToEnd.map(pick))),
      ratio(runs.sealedChecked, runs.checked),
      ratio(runs.sealedEndToEnd, runs.endToEnd)
    ], sealedWidths))
  }
  against("throughput", (run) => size / run.seconds / (1024 * 1024 * 1024), (n) => `${format(n, 2)} GiB/s`)
  against("CPU time, fetching process", (run) => run.fetcher.cpuSeconds, (n) => `${format(n, 2)} s`)
  against("CPU time, serving process", (run) => run.server.cpuSeconds, (n) => `${format(n, 2)} s`)
  const sealedP50 = percentile(sealedIdle, 50)
  console.log(
    `peak RSS growth: ${mib(Math.max(...runs.sealedEndToEnd.map((run) => run.fetcher.rssGrowth)))} fetching, ` +
      `${mib(Math.max(...runs.sealedEndToEnd.map((run) => run.server.rssGrowth)))} serving (end to end)`
  )
  console.log(
    `ask p50, idle: ${micros(sealedP50)} encrypted, ${micros(idleP50)} in the clear (${times(sealedP50 / idleP50)})`
  )
  console.log(`\nfetcher: peak in flight ${mib(stats.peakInFlight)}, ${stats.retries} retries`)
  console.log(
    "\ntargets: throughput ≥ 0.7× raw; peak RSS growth < 64 MiB in each process; ask p50 while Kindling transfers " +
      "≤ 2× idle"
  )
}

if (process.argv.includes("--serve")) {
  // Exiting rather than dying lets `node --cpu-prof` write the child's profile too.
  process.once("SIGTERM", () => process.exit(0))
  Effect.runFork(serveChild)
} else {
  report(await Effect.runPromise(main))
}
