// Codec throughput and RPC latency of @kindling/protocol, each next to a baseline in the same run:
// (a) encode+decode through our codec (schemas, envelope, framing) vs raw msgpackr pack+unpack of the same
//     objects; (b) ask round trips over TCP loopback vs a raw node:net echo of frames of the same size; (c) what local
//     mode's driver and executor exchange per task (a LaunchTasks, then a StatusUpdates back) between two RpcEnvs
//     of one process, handed over as values vs in frames on the same in-memory network.
import { ClusterMessages, Codec, Ids, RpcAddress, SubmissionMessages, WorkerMessages } from "@kindling/protocol"
import { RpcEnv, Transport } from "@kindling/rpc"
import { NodeTransport } from "@kindling/rpc/node"
import { Deferred, Effect, Either, Option, type Schema } from "effect"
import { Packr } from "msgpackr"
import * as ChildProcess from "node:child_process"
import { createRequire } from "node:module"
import * as Net from "node:net"
import { format, percentile, row, throughput } from "./stats.js"

const packr = new Packr({ useRecords: false, moreTypes: false, mapsAsObjects: true })
const maxFrameSize = 128 * 1024 * 1024

const launchTask = new ClusterMessages.LaunchTasks({
  executorId: Ids.ExecutorId.make("7"),
  tasks: [
    new ClusterMessages.TaskDescription({
      taskId: 123456,
      attemptNumber: 0,
      name: "task 12.0 in stage 3.0 (TID 123456)",
      index: 12,
      partitionId: 12,
      stageId: 3,
      stageAttemptId: 0,
      cpus: 1,
      properties: { "kindling.job.description": "word count", "kindling.jobGroup.id": "group-1" },
      resources: {},
      serializedTask: crypto.getRandomValues(new Uint8Array(1024)),
      needs: { persisted: [], shuffleReads: [], broadcasts: [] }
    })
  ]
})
const address = RpcAddress.make("10.0.0.12", 41234)
const registerWorker = new WorkerMessages.RegisterWorker({
  id: Ids.makeWorkerId(new Date(), "10.0.0.12", 41234),
  host: "10.0.0.12",
  port: 41234,
  worker: RpcAddress.endpoint(address, "Worker"),
  cores: 16,
  memory: 63488,
  workerWebUiUrl: "http://10.0.0.12:8081",
  masterAddress: RpcAddress.make("10.0.0.1", 7077),
  resources: {}
})

// ---- (a) codec ------------------------------------------------------------------------------------------

const codecRoundtrip = (union: Schema.Schema<any, any, never>, message: Codec.Message) => {
  const decoder = new Codec.FrameDecoder(maxFrameSize)
  return () => {
    const body = Either.getOrThrow(Codec.encodeMessage(message))
    const frame = Either.getOrThrow(Codec.encodeFrame({ _tag: "send", from: null, to: "Executor", body }, maxFrameSize))
    const payload = Either.getOrThrow(decoder.push(frame))[0]!
    const envelope = Either.getOrThrow(Codec.decodePayload(payload))
    Either.getOrThrow(Codec.decodeWith(union, (envelope as { body: unknown }).body))
  }
}

const rawRoundtrip = (message: Codec.Message) => {
  const plain = Either.getOrThrow(Codec.encodeMessage(message))
  return () => {
    packr.unpack(packr.pack(plain))
  }
}

interface CodecFigures {
  readonly name: string
  readonly ours: number
  readonly raw: number
}

const codecFigures = (): Array<CodecFigures> =>
  ([
    ["LaunchTasks (one task, 12 fields, 1 KiB)", ClusterMessages.DriverToExecutor, launchTask],
    ["RegisterWorker", WorkerMessages.WorkerToMaster, registerWorker]
  ] as const).map(([name, union, message]) => {
    const ours = codecRoundtrip(union, message)
    const raw = rawRoundtrip(message)
    throughput(ours, 300)
    throughput(raw, 300)
    return { name, ours: throughput(ours), raw: throughput(raw) }
  })

// msgpackr decodes the strings of a payload of 140 bytes or more in one call to msgpackr-extract's native module
// when it loads (pnpm runs its install script: pnpm-workspace.yaml). The same figures without it come from a
// child process started with msgpackr's own switch, MSGPACKR_NATIVE_ACCELERATION_DISABLED, which it reads at load.
const codecOnly = "KINDLING_BENCH_CODEC_ONLY"
if (process.env[codecOnly] !== undefined) {
  console.log(JSON.stringify(codecFigures()))
  process.exit(0)
}
const withoutExtract = (): Array<CodecFigures> => {
  const child = ChildProcess.spawnSync(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    env: { ...process.env, [codecOnly]: "1", MSGPACKR_NATIVE_ACCELERATION_DISABLED: "true" },
    encoding: "utf8"
  })
  if (child.status !== 0) throw new Error(`the run without msgpackr-extract failed: ${child.stderr}`)
  return JSON.parse(child.stdout.trim().split("\n").pop()!)
}

console.log("(a) encode + decode per second\n")
const widths = [30, 14, 14, 8]
console.log(row(["message", "codec", "raw msgpackr", "ratio"], widths))
const native = codecFigures()
for (const { name, ours, raw } of native) {
  console.log(row([name, format(ours), format(raw), `${format(ours / raw, 2)}×`], widths))
}
// Whether msgpackr finds the native module, as it looks for it: from its own directory.
const extractAvailable = (() => {
  try {
    createRequire(createRequire(import.meta.url).resolve("msgpackr"))("msgpackr-extract")
    return true
  } catch {
    return false
  }
})()
console.log(
  `\n(a') the same with and without msgpackr-extract, medians of 3 alternating rounds (available here: ${
    extractAvailable ? "yes" : "no"
  })\n`
)
const extractWidths = [30, 14, 14, 8, 14, 14, 8]
console.log(row(["message", "codec, native", "codec, JS", "ratio", "raw, native", "raw, JS", "ratio"], extractWidths))
// A loaded machine swings from one second to the next, so the two sides take turns, and each figure is the
// median of its rounds.
const rounds = [{ native, js: withoutExtract() }]
for (let i = 1; i < 3; i++) rounds.push({ native: codecFigures(), js: withoutExtract() })
const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const medianOf = (side: "native" | "js", i: number): CodecFigures => ({
  name: native[i]!.name,
  ours: median(rounds.map((round) => round[side][i]!.ours)),
  raw: median(rounds.map((round) => round[side][i]!.raw))
})
for (const i of native.keys()) {
  const { name, ours, raw } = medianOf("native", i)
  const other = medianOf("js", i)
  console.log(
    row([
      name,
      format(ours),
      format(other.ours),
      `${format(ours / other.ours, 2)}×`,
      format(raw),
      format(other.raw),
      `${format(raw / other.raw, 2)}×`
    ], extractWidths)
  )
}

// ---- (b) RPC over TCP loopback ----------------------------------------------------------------------------

const sequential = 20_000
const pipelined = 100_000
const window = 64

interface RpcFigures {
  readonly p50: number
  readonly p99: number
  readonly perSecond: number
}

const statusRequest = new SubmissionMessages.RequestDriverStatus({
  driverId: Ids.DriverId.make("driver-20260101000000-0001")
})
const statusReply = new SubmissionMessages.DriverStatusResponse({
  found: true,
  state: Option.some("RUNNING"),
  workerId: Option.some(registerWorker.id),
  workerHostPort: Option.some("10.0.0.12:41234"),
  exception: Option.none()
})

const kindlingFigures = Effect.gen(function*() {
  const server = yield* RpcEnv.make({ host: "127.0.0.1", port: 0 })
  const client = yield* RpcEnv.make({ host: "127.0.0.1", port: 0 })
  yield* server.register("Master", {
    inbound: SubmissionMessages.RequestDriverStatus,
    handlers: { RequestDriverStatus: () => Effect.succeed(statusReply) }
  })
  yield* server.register("Effectful", {
    inbound: SubmissionMessages.RequestDriverStatus,
    handlers: { RequestDriverStatus: () => Effect.sync(() => statusReply) }
  })
  const ref = RpcAddress.endpoint<SubmissionMessages.SubmissionRequest>(server.address!, "Master")
  const latenciesOf = (target: typeof ref) =>
    Effect.gen(function*() {
      for (let i = 0; i < 5000; i++) yield* client.ask(target, statusRequest)
      const latencies: Array<number> = []
      for (let i = 0; i < sequential; i++) {
        const started = performance.now()
        yield* client.ask(target, statusRequest)
        latencies.push(performance.now() - started)
      }
      return latencies.sort((a, b) => a - b)
    })
  const latencies = yield* latenciesOf(ref)
  const fiberLatencies = yield* latenciesOf(
    RpcAddress.endpoint<SubmissionMessages.SubmissionRequest>(server.address!, "Effectful")
  )
  const started = performance.now()
  yield* Effect.forEach(
    Array.from({ length: pipelined }),
    () => client.ask(ref, statusRequest),
    { concurrency: window, discard: true }
  )
  const perSecond = pipelined / ((performance.now() - started) / 1000)
  return {
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    perSecond,
    // The same round trip when the handler's answer needs a fiber (Effect.sync rather than a ready value).
    p50Fiber: percentile(fiberLatencies, 50)
  }
}).pipe(Effect.scoped, Effect.provide(NodeTransport.layer))

// The same exchange without Kindling: length-prefixed frames of the same sizes, echoed by a bare server.
const rawFigures = async (): Promise<RpcFigures> => {
  const request = Either.getOrThrow(
    Codec.encodeFrame({
      _tag: "ask",
      id: 1,
      from: null,
      to: "Master",
      body: Either.getOrThrow(Codec.encodeMessage(statusRequest))
    }, maxFrameSize)
  )
  const response = Either.getOrThrow(
    Codec.encodeFrame({ _tag: "reply", id: 1, body: Either.getOrThrow(Codec.encodeMessage(statusReply)) }, maxFrameSize)
  )
  const server = Net.createServer((socket) => {
    socket.setNoDelay(true)
    const decoder = new Codec.FrameDecoder(maxFrameSize)
    socket.on("data", (chunk) => {
      for (const _ of Either.getOrThrow(decoder.push(chunk))) socket.write(response)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const socket = Net.connect({ host: "127.0.0.1", port: (server.address() as Net.AddressInfo).port })
  socket.setNoDelay(true)
  await new Promise<void>((resolve) => socket.once("connect", () => resolve()))
  const decoder = new Codec.FrameDecoder(maxFrameSize)
  let onReply: () => void = () => {}
  socket.on("data", (chunk) => {
    for (const _ of Either.getOrThrow(decoder.push(chunk))) onReply()
  })
  const once = () =>
    new Promise<void>((resolve) => {
      onReply = resolve
      socket.write(request)
    })
  for (let i = 0; i < 5000; i++) await once()
  const latencies: Array<number> = []
  for (let i = 0; i < sequential; i++) {
    const started = performance.now()
    await once()
    latencies.push(performance.now() - started)
  }
  latencies.sort((a, b) => a - b)
  const started = performance.now()
  await new Promise<void>((resolve) => {
    let sent = 0
    let received = 0
    onReply = () => {
      received++
      if (received === pipelined) resolve()
      else if (sent < pipelined) {
        sent++
        socket.write(request)
      }
    }
    for (; sent < window; sent++) socket.write(request)
  })
  const perSecond = pipelined / ((performance.now() - started) / 1000)
  socket.destroy()
  server.close()
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), perSecond }
}

const raw = await rawFigures()
const ours = await Effect.runPromise(kindlingFigures)
console.log(
  `\n(b) ask over TCP loopback (${format(sequential)} sequential asks; ${format(pipelined)} with ${window} in flight)\n`
)
const rpcWidths = [24, 12, 12, 8]
console.log(row(["", "Kindling", "raw echo", "ratio"], rpcWidths))
const micros = (ms: number) => `${format(ms * 1000, 1)} µs`
console.log(row(["round trip p50", micros(ours.p50), micros(raw.p50), `${format(ours.p50 / raw.p50, 2)}×`], rpcWidths))
console.log(
  row(
    ["p50, handler in a fiber", micros(ours.p50Fiber), micros(raw.p50), `${format(ours.p50Fiber / raw.p50, 2)}×`],
    rpcWidths
  )
)
console.log(row(["round trip p99", micros(ours.p99), micros(raw.p99), `${format(ours.p99 / raw.p99, 2)}×`], rpcWidths))
console.log(
  row([
    "pipelined asks/s",
    format(ours.perSecond),
    format(raw.perSecond),
    `${format(ours.perSecond / raw.perSecond, 2)}×`
  ], rpcWidths)
)
console.log("\ntargets: codec ≥ 0.5× raw msgpackr for LaunchTasks; ask p50 ≤ 3× the raw echo round trip")

// ---- (c) in process: framed vs handed over ----------------------------------------------------------------

const inProcessTrips = 50_000
const finished = new ClusterMessages.StatusUpdates({
  executorId: launchTask.executorId,
  updates: [
    new ClusterMessages.TaskStatus({ taskId: 123456, state: "FINISHED", data: new Uint8Array(48), resources: {} })
  ]
})

// Round trips per second, one at a time: the driver's endpoint answers each StatusUpdates with the next LaunchTasks.
const inProcessTripsPerSecond = (handOverValues: boolean) =>
  Effect.scoped(Effect.gen(function*() {
    const network = yield* Transport.makeMemoryWith({ handOverValues })
    const on = (host: string) =>
      RpcEnv.make({ host, port: 7077 }).pipe(Effect.provideService(Transport.Transport, network))
    const driver = yield* on("driver")
    const executor = yield* on("executor")
    const toExecutor = RpcAddress.endpoint<ClusterMessages.LaunchTasks>(executor.address!, "Executor")
    const toDriver = RpcAddress.endpoint<ClusterMessages.StatusUpdates>(driver.address!, "Driver")
    const done = yield* Deferred.make<void>()
    let left = inProcessTrips
    yield* executor.register("Executor", {
      inbound: ClusterMessages.LaunchTasks,
      handlers: { LaunchTasks: () => Effect.sync(() => executor.sendNow(toDriver, finished)).pipe(Effect.asVoid) }
    })
    yield* driver.register("Driver", {
      inbound: ClusterMessages.StatusUpdates,
      handlers: {
        StatusUpdates: () =>
          Effect.sync(() => {
            if (--left === 0) Deferred.unsafeDone(done, Effect.void)
            else driver.sendNow(toExecutor, launchTask)
          })
      }
    })
    yield* driver.send(toExecutor, launchTask)
    const started = performance.now()
    yield* Deferred.await(done)
    return inProcessTrips / ((performance.now() - started) / 1000)
  }))

const inProcess = await Effect.runPromise(Effect.gen(function*() {
  const framed: Array<number> = []
  const handed: Array<number> = []
  for (let i = 0; i < 3; i++) {
    framed.push(yield* inProcessTripsPerSecond(false))
    handed.push(yield* inProcessTripsPerSecond(true))
  }
  return { framed: Math.max(...framed), handed: Math.max(...handed) }
}))
console.log(`\n(c) LaunchTasks → StatusUpdates in one process (${format(inProcessTrips)} round trips, best of 3)\n`)
console.log(row(["", "handed over", "framed", "ratio"], rpcWidths))
console.log(
  row([
    "round trips/s",
    format(inProcess.handed),
    format(inProcess.framed),
    `${format(inProcess.handed / inProcess.framed, 2)}×`
  ], rpcWidths)
)
console.log(row(["µs per round trip", micros(1000 / inProcess.handed), micros(1000 / inProcess.framed), ""], rpcWidths))
