// Uploads to a real master on 127.0.0.1: pulled from the uploader, checked, stored once, served to other nodes,
// refused when they cannot be right, and deleted once no driver has used them for the retention time.
import { assert, describe, it } from "@effect/vitest"
import { ArtifactStore, LeaderElection, Master, Persistence } from "@kindling/master"
import { Descriptions } from "@kindling/protocol"
import { Polling } from "@kindling/protocol/testing"
import { MasterClient, RpcEnv } from "@kindling/rpc"
import { NodeArtifacts, NodeTransport } from "@kindling/rpc/node"
import { Effect, Layer, Option } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { masterOptions } from "./fixtures/options.js"

const temporaryDirectory = Effect.acquireRelease(
  Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "kindling-artifacts-test-"))),
  (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
)

const network = (options: RpcEnv.Options = { host: "127.0.0.1", port: 0 }) =>
  RpcEnv.layer(options).pipe(Layer.provide(NodeTransport.layer))

const startMaster = (directory: string, retentionMillis: number) =>
  Effect.gen(function*() {
    // Built in the test's scope: the master's network and store live as long as the test.
    const rpc = yield* Layer.build(network())
    const services = yield* Layer.build(
      Layer.mergeAll(
        Persistence.layerNone,
        LeaderElection.layerSingle,
        ArtifactStore.layer({ directory, maxSize: 1024 * 1024, retentionMillis })
      ).pipe(Layer.provide(Layer.succeedContext(rpc)))
    )
    return yield* Master.make(masterOptions()).pipe(
      Effect.provide(services),
      Effect.provide(rpc)
    )
  })

// A submission client that listens and serves `bytes` as the artifact `name` while it uploads it.
const upload = (master: Master.Master, bytes: string, name: string, announce?: { size?: number; sha256?: string }) =>
  Effect.gen(function*() {
    const dir = yield* temporaryDirectory
    const path = Path.join(dir, "artifact")
    Fs.writeFileSync(path, bytes)
    const rpc = yield* RpcEnv.RpcEnv
    const digest = yield* NodeArtifacts.digestFile(path)
    yield* NodeArtifacts.serve(
      rpc.data,
      (sha256) => Effect.succeed(sha256 === digest.sha256 ? Option.some(path) : Option.none())
    )
    const client = yield* MasterClient.make([master.address])
    return yield* client.uploadArtifact({ name, ...digest, ...announce })
  }).pipe(Effect.scoped, Effect.provide(network()))

const driverUsing = (url: string) =>
  new Descriptions.DriverDescription({
    appUrl: url,
    mem: 512,
    cores: 1,
    supervise: false,
    command: new Descriptions.Command({
      mainModule: "@kindling/driver/main",
      arguments: [],
      environment: {},
      nodeOptions: []
    }),
    resourceReqs: []
  })

describe("the master's artifact store", () => {
  it.scopedLive("stores an upload once, under its digest, and serves it to other nodes", () =>
    Effect.gen(function*() {
      const directory = yield* temporaryDirectory
      const master = yield* startMaster(directory, 60_000)
      const body = "export default () => 42\n".repeat(1000)
      const first = yield* upload(master, body, "app.mjs")
      const second = yield* upload(master, body, "app.mjs")
      assert.strictEqual(first.url, second.url)
      const location = Option.getOrThrow(NodeArtifacts.parseUrl(first.url))
      assert.strictEqual(location.address.hostPort, master.address.hostPort)
      assert.deepStrictEqual(Fs.readdirSync(directory), [`${location.sha256}.artifact`])
      // Another node (a worker) fetches it from the master, checked.
      const into = Path.join(yield* temporaryDirectory, "app.mjs")
      const rpc = yield* RpcEnv.make({ host: "127.0.0.1", port: 0 }).pipe(Effect.provide(NodeTransport.layer))
      yield* NodeArtifacts.fetchTo(rpc.data, location, into)
      assert.strictEqual(Fs.readFileSync(into, "utf8"), body)
    }))

  it.scopedLive("refuses what cannot be right: too large, a malformed digest, bytes that are not the ones announced", () =>
    Effect.gen(function*() {
      const directory = yield* temporaryDirectory
      const master = yield* startMaster(directory, 60_000)
      const tooLarge = yield* Effect.flip(upload(master, "x".repeat(2 * 1024 * 1024), "big.mjs"))
      assert.strictEqual(
        tooLarge.message,
        "The artifact big.mjs was rejected: it has 2097152 bytes; this master takes at most 1048576"
      )
      const malformed = yield* Effect.flip(upload(master, "x", "a.mjs", { sha256: "ABC" }))
      assert.include(malformed.message, "its digest is not a SHA-256 in lowercase hex")
      const badName = yield* Effect.flip(upload(master, "x", ".."))
      assert.include(badName.message, "its name is not a plain file name")
      // The uploader serves other bytes than it announced: the master fetches and refuses them.
      const wrongSize = yield* Effect.flip(upload(master, "twelve bytes", "a.mjs", { size: 5 }))
      assert.include(wrongSize.message, "it is larger than the 5 bytes announced")
      assert.deepStrictEqual(Fs.readdirSync(directory), [])
    }))

  it.scopedLive("keeps an artifact while a driver uses it and deletes it the retention time after", () =>
    Effect.gen(function*() {
      const directory = yield* temporaryDirectory
      const master = yield* startMaster(directory, 300)
      const { url } = yield* upload(master, "export default () => {}\n", "app.mjs")
      yield* Effect.gen(function*() {
        const client = yield* MasterClient.make([master.address])
        const submitted = yield* client.submitDriver(driverUsing(url))
        // No worker runs it, so it waits; meanwhile the artifact stays, well past the retention time.
        yield* Effect.sleep(900)
        assert.strictEqual(Fs.readdirSync(directory).length, 1)
        yield* client.killDriver(Option.getOrThrow(submitted.driverId))
      }).pipe(Effect.scoped, Effect.provide(network({})))
      yield* Polling.eventually(
        Effect.sync(() => Fs.readdirSync(directory)),
        (entries) => entries.length === 0,
        { timeout: 5_000, interval: "50 millis", describe: () => "the artifact was kept" }
      )
    }))
})
