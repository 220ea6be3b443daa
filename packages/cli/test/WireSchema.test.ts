// docs/protocol.schema.json against the wire: every frame of a real run — a master, two workers, a submission,
// its status, its kill, and a tool's refused submission — validates against the published JSON Schema with a
// real validator, as a third party's would.
import { assert, describe, it } from "@effect/vitest"
import { Descriptions } from "@kindling/protocol"
import { Deadlines } from "@kindling/protocol/testing"
import { MasterClient, RpcEnv, Transport } from "@kindling/rpc"
import { Ajv } from "ajv"
import { Effect, Either, Layer } from "effect"
import { Packr } from "msgpackr"
import * as Fs from "node:fs"
import * as Path from "node:path"
import {
  activeDriver,
  app,
  clientSettings,
  cluster,
  eventually,
  forever,
  pidsIn,
  root,
  run,
  submitArgs,
  temporaryDirectory
} from "./fixtures/cluster.js"

// A reader as strict as another language's: 64-bit integers as numbers when safe, plain maps.
const unpackr = new Packr({ useRecords: false, mapsAsObjects: true, int64AsType: "auto" as unknown as "number" })

// The JSON Schema view of a MessagePack value: `bin` is a string of contentEncoding binary.
const asJson = (value: unknown): unknown => {
  if (value instanceof Uint8Array) return Buffer.from(value).toString("latin1")
  if (Array.isArray(value)) return value.map(asJson)
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, asJson(item)]))
  }
  return value
}

interface Frame {
  readonly source: string
  readonly envelope: Record<string, any>
}

// The frames of every trace file in `dir`, in the order each process wrote them.
const tracedFrames = (dir: string): Array<Frame> =>
  Fs.readdirSync(dir).flatMap((file) =>
    Fs.readFileSync(Path.join(dir, file), "utf8").trim().split("\n").filter(Boolean).map((line) => ({
      source: file,
      envelope: unpackr.unpack(Buffer.from(JSON.parse(line).payload, "base64")) as Record<string, any>
    }))
  )

const descriptionWith = (mainModule: string) =>
  new Descriptions.DriverDescription({
    appUrl: "file:///nowhere/app.mjs",
    mem: 64,
    cores: 1,
    supervise: false,
    command: new Descriptions.Command({ mainModule, arguments: [], environment: {}, nodeOptions: [] }),
    resourceReqs: []
  })

describe("docs/protocol.schema.json", () => {
  it.scopedLive("every frame of a real cluster's run validates against it", () =>
    Effect.gen(function*() {
      const traces = yield* temporaryDirectory
      const trace = ["--conf", `kindling.rpc.traceDir=${traces}`]
      const { dir, master } = yield* cluster(2, trace, trace)
      const pids = Path.join(dir, "pids")
      const submitted = yield* run([...submitArgs(master.url, ...trace, app(dir, "forever.mjs", forever), pids)])
      assert.strictEqual(submitted.code, 0, submitted.stderr)
      const driverId = submitted.stdout.trim()
      yield* eventually(master.url, (state) => activeDriver(driverId)(state)?.state === "RUNNING" || undefined)
      yield* eventually(master.url, () => pidsIn(pids).length === 1 || undefined)
      const status = yield* run(["status", "--master", master.url, ...trace, driverId])
      assert.strictEqual(status.code, 0, status.stderr)
      const killed = yield* run(["kill", "--master", master.url, ...trace, driverId])
      assert.strictEqual(killed.code, 0, killed.stderr)
      yield* eventually(master.url, (state) => state.completedDrivers.find((d) => d.id === driverId)?.state)

      // A tool on the SDK, tapped in process: a submission no worker would run is refused with a typed error.
      const toolFrames: Array<Frame> = []
      const tool = clientSettings()
      const tapped = Layer.effect(
        Transport.Transport,
        Effect.map(Transport.Transport, (transport) =>
          Transport.tap(transport, (frame) =>
            toolFrames.push({ source: "tool", envelope: unpackr.unpack(frame.payload) as Record<string, any> })))
      ).pipe(Layer.provide(tool.transport))
      const refused = yield* Effect.gen(function*() {
        const client = yield* MasterClient.make(master.url, { timeout: "10 seconds" })
        return yield* Effect.either(client.submitDriver(descriptionWith("/tmp/not-kindling.mjs")))
      }).pipe(Effect.scoped, Effect.provide(RpcEnv.layer(tool.rpc)), Effect.provide(tapped))
      assert.isTrue(Either.isLeft(refused) && refused.left._tag === "DriverLaunchFailed")

      const schema = JSON.parse(Fs.readFileSync(Path.join(root, "docs", "protocol.schema.json"), "utf8"))
      // Ajv's own lint that every `maximum` sits next to a `type` is not JSON Schema; its other strict checks
      // (unknown keywords, bad formats, ambiguous schemas) stay on.
      const ajv = new Ajv({ strictTypes: false })
      const validEnvelope = ajv.compile(schema)
      const validReplyMessage = ajv.compile({ ...schema, $ref: "#/$defs/ReplyMessage" })
      const frames = [...tracedFrames(traces), ...toolFrames]
      const seen = new Set<string>()
      for (const { envelope, source } of frames) {
        const json = asJson(envelope) as Record<string, unknown>
        assert.isTrue(
          validEnvelope(json),
          `${source}: ${JSON.stringify(json).slice(0, 400)}\n${ajv.errorsText(validEnvelope.errors)}`
        )
        const body = envelope.body ?? envelope.error
        seen.add(typeof body?._tag === "string" ? `${envelope._tag} ${body._tag}` : envelope._tag)
        // A reply that is a message is one of the documented replies.
        if (envelope._tag === "reply" && typeof body?._tag === "string") {
          assert.isTrue(
            validReplyMessage(json.body),
            `${source}: ${body._tag}\n${ajv.errorsText(validReplyMessage.errors)}`
          )
        }
      }
      // The run did carry each conversation the test claims to check.
      for (
        const kind of [
          "hello",
          "welcome",
          "send RegisterWorker",
          "send RegisteredWorker",
          "send Heartbeat",
          "ask RequestUploadArtifact",
          "fetch",
          "chunk",
          "end",
          "ask RequestSubmitDriver",
          "reply SubmitDriverResponse",
          "send LaunchDriver",
          "ask RequestDriverStatus",
          "ask RequestKillDriver",
          "failure DriverLaunchFailed"
        ]
      ) {
        assert.isTrue(seen.has(kind), `no "${kind}" among ${[...seen].sort().join(", ")}`)
      }
      assert.isAbove(frames.length, 50)
    }), Deadlines.scaled(120_000))
})
