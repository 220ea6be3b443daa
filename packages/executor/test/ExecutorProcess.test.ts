// An executor process on 127.0.0.1 against a driver of the test's own: it registers while the app it runs is still
// being fetched, and an app it cannot fetch fails it with why.
import { assert, describe, it } from "@effect/vitest"
import * as NodeDisk from "@kindling/data/NodeDisk"
import { ExecutorProcess, InlineTasks } from "@kindling/executor"
import { ClusterMessages, Endpoints, RpcAddress } from "@kindling/protocol"
import { Deadlines } from "@kindling/protocol/testing"
import { RpcEnv } from "@kindling/rpc"
import { NodeArtifacts, NodeTransport } from "@kindling/rpc/node"
import { Deferred, Effect, Fiber, Layer, Option } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Url from "node:url"

const temporaryDirectory = Effect.acquireRelease(
  Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "kindling-executor-process-test-"))),
  (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
)

const network = (host: string) => RpcEnv.layer({ host, port: 0 }).pipe(Layer.provide(NodeTransport.layer))

const appConfig = new ClusterMessages.AppConfig({
  properties: [],
  ioEncryptionKey: Option.none(),
  delegationTokens: Option.none(),
  resourceProfile: new ClusterMessages.ResourceProfile({
    id: 0,
    executorCores: Option.none(),
    executorMemoryMb: Option.none(),
    executorResources: [],
    taskCpus: 1,
    taskResources: []
  })
})

// A driver that gives its settings (unless `silent`), takes every executor that registers (telling `registered`)
// and serves one app, `app.mjs`, once `served` is done; with `missing`, it has no such app.
const driver = (options: { readonly missing: boolean; readonly silent?: boolean }) =>
  Effect.gen(function*() {
    const env = yield* RpcEnv.make({ host: "127.0.0.1", port: 0 }).pipe(Effect.provide(NodeTransport.layer))
    const dir = yield* temporaryDirectory
    const file = Path.join(dir, "app.mjs")
    Fs.writeFileSync(file, "export const answer = 42\n")
    const digest = yield* NodeArtifacts.digestFile(file)
    const served = yield* Deferred.make<void>()
    const registered = yield* Deferred.make<string>()
    yield* NodeArtifacts.serve(
      env.data,
      (sha256) =>
        Effect.as(
          Deferred.await(served),
          options.missing || sha256 !== digest.sha256 ? Option.none() : Option.some(file)
        )
    )
    // Only its start-up matters here: whatever else an executor sends is taken and dropped.
    const ignored = Object.fromEntries(
      ClusterMessages.ExecutorToDriver.members.map((member) => [member.identifier, () => Effect.void])
    )
    yield* env.register(Endpoints.scheduler.name, {
      inbound: ClusterMessages.ExecutorToDriver,
      handlers: {
        ...ignored,
        RetrieveAppConfig: () => (options.silent === true ? Effect.never : Effect.succeed(appConfig)),
        RegisterExecutor: (message: ClusterMessages.RegisterExecutor) =>
          Effect.as(Deferred.succeed(registered, message.executorId), true)
      } as unknown as RpcEnv.Handlers<ClusterMessages.ExecutorToDriver, never>
    })
    const address = env.address!
    const appUrl = NodeArtifacts.url({ address, sha256: digest.sha256, name: "app.mjs" })
    return { address, appUrl, served, registered }
  })

// Runs an executor of `driver` in a work dir of its own; `madeOn` is told the app URL its task runner was made on.
const executor = (of: Effect.Effect.Success<ReturnType<typeof driver>>) =>
  Effect.gen(function*() {
    const workDir = yield* temporaryDirectory
    const madeOn = yield* Deferred.make<string>()
    const argv = [
      "--driver-url",
      `kindling://CoarseGrainedScheduler@${RpcAddress.make(of.address.host, of.address.port).hostPort}`,
      "--executor-id",
      "1",
      "--hostname",
      "127.0.0.1",
      "--cores",
      "1",
      "--app-id",
      "app-1",
      "--app",
      of.appUrl
    ]
    const running = yield* Effect.forkScoped(Effect.scoped(ExecutorProcess.run(argv, {
      tasks: (size, appUrl) =>
        Effect.zipRight(
          Deferred.succeed(madeOn, appUrl),
          InlineTasks.make({ size, duration: Effect.succeed(0), files: NodeDisk.disk })
        ),
      network,
      workDir,
      variables: {}
    })))
    return { running, madeOn, workDir }
  })

const within = <A, E>(effect: Effect.Effect<A, E>, what: string) =>
  Effect.timeoutFail(effect, {
    duration: Deadlines.scaled(20_000),
    onTimeout: () => new Error(`timed out waiting for ${what}`)
  })

describe("an executor process", () => {
  it.scopedLive("registers while its app is still being fetched, and runs its tasks on the app once it is here", () =>
    Effect.gen(function*() {
      const of = yield* driver({ missing: false })
      const { madeOn, workDir } = yield* executor(of)
      assert.strictEqual(yield* within(Deferred.await(of.registered), "the registration"), "1")
      assert.isFalse(yield* Deferred.isDone(madeOn), "its task runner waits for the app")
      yield* Deferred.succeed(of.served, undefined)
      const appUrl = yield* within(Deferred.await(madeOn), "the task runner")
      assert.strictEqual(appUrl, Url.pathToFileURL(Path.join(workDir, "app.mjs")).href)
      assert.strictEqual(Fs.readFileSync(Url.fileURLToPath(appUrl), "utf8"), "export const answer = 42\n")
    }))

  it.scopedLive("fails with why when its app cannot be fetched, though it registered", () =>
    Effect.gen(function*() {
      const of = yield* driver({ missing: true })
      const { madeOn, running } = yield* executor(of)
      yield* within(Deferred.await(of.registered), "the registration")
      yield* Deferred.succeed(of.served, undefined)
      const error = yield* within(Effect.flip(Fiber.join(running)), "the executor's end")
      assert.strictEqual(error._tag, "AppUnavailable")
      assert.include(error.message, `Cannot fetch the app ${of.appUrl}`)
      assert.isFalse(yield* Deferred.isDone(madeOn))
    }))

  it.scopedLive("fails with why when its app cannot be fetched, though its driver has not answered it yet", () =>
    Effect.gen(function*() {
      const of = yield* driver({ missing: true, silent: true })
      const { running } = yield* executor(of)
      yield* Deferred.succeed(of.served, undefined)
      const error = yield* within(Effect.flip(Fiber.join(running)), "the executor's end")
      assert.strictEqual(error._tag, "AppUnavailable")
      assert.isFalse(yield* Deferred.isDone(of.registered))
    }))
})
