import { assert, describe, it } from "@effect/vitest"
import { LocalFiles, ObjectStore } from "@kindling/data"
import * as NodeDisk from "@kindling/data/NodeDisk"
import { Evaluation, RecordFiles, ShuffleFiles, ShuffleService, TaskContext } from "@kindling/executor"
import { Endpoints, Ids, RpcAddress } from "@kindling/protocol"
import { RpcEnv, Transport } from "@kindling/rpc"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

const source = (text: string) => ({ _tag: "SourceFunction" as const, source: text, env: undefined })

// A shuffle service on one node of an in-memory network, over a scratch local dir, and a client node.
const serviceAndClient = Effect.gen(function*() {
  const localDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "kindling-shuffle-test-"))
  yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(localDir, { recursive: true, force: true })))
  const server = yield* RpcEnv.make({ host: "server", port: 1 })
  const client = yield* RpcEnv.make({ host: "client", port: 1 })
  const shuffles = yield* ShuffleService.make({
    executorId: Ids.ExecutorId.make("1"),
    disk: NodeDisk.disk,
    localDir,
    driver: Endpoints.ref(RpcAddress.make("driver", 1), Endpoints.scheduler),
    askTimeoutMillis: 1000
  }).pipe(Effect.provideService(RpcEnv.RpcEnv, server))
  return { localDir, server, client, shuffles }
})

describe("ShuffleService", () => {
  it.scoped("serves a map output's blocks only under its shuffle's token", () =>
    Effect.gen(function*() {
      const { client, localDir, server, shuffles } = yield* serviceAndClient
      // A map task writes its output for two reduce partitions, combining per key.
      const shuffle = { shuffleId: 3, token: "secret-token" }
      shuffles.serve(shuffle)
      const context = TaskContext.fromInputs(
        { localDir, spillThreshold: 1 << 20, objectStore: ObjectStore.settingsOf({}), shuffleInputs: [], cached: [] },
        LocalFiles.files,
        { stageId: 0, stageAttemptNumber: 0, partitionId: 0, attemptNumber: 0, taskAttemptId: 0 }
      )
      const status = Evaluation.run(
        {
          plan: { _tag: "Slice", items: [["a", 1], ["b", 2], ["a", 3], [["x", 1], 4]] },
          result: {
            _tag: "ShuffleWrite",
            shuffle,
            mapIndex: 0,
            numReduces: 2,
            partitioner: { _tag: "Hash" },
            combine: {
              createCombiner: source("(v) => v"),
              mergeValue: source("(a, b) => a + b"),
              mergeCombiners: source("(a, b) => a + b")
            }
          }
        },
        new Evaluation.Functions(() => undefined),
        context
      ).value as { readonly sizes: ReadonlyArray<number> }
      const blocks = yield* Effect.forEach([0, 1], (reduceId) =>
        client.data.fetchBytes(server.address!, ShuffleFiles.blockId({ ...shuffle, mapIndex: 0, reduceId })))
      assert.deepStrictEqual(
        blocks.map((bytes) =>
          bytes.length
        ),
        [...status.sizes]
      )
      const records = blocks.flatMap((bytes) => [...RecordFiles.read(LocalFiles.files, { _tag: "Bytes", bytes })])
      assert.deepStrictEqual(
        records.map((record) => JSON.stringify(record)).sort(),
        [["a", 4], ["b", 2], [["x", 1], 4]].map((record) => JSON.stringify(record)).sort()
      )
      // Another app's executor does not know the token; nothing tells it whether the block exists.
      for (const name of [{ ...shuffle, token: "guessed" }, { shuffleId: 9, token: "secret-token" }]) {
        const refused = yield* Effect.flip(
          client.data.fetchBytes(server.address!, ShuffleFiles.blockId({ ...name, mapIndex: 0, reduceId: 0 }))
        )
        assert.strictEqual(refused._tag, "TransferRefused")
      }
    }).pipe(Effect.provide(Transport.layerMemory)))

  it.scoped("a map output it cannot read is refused naming the file; one it does not have is not found", () =>
    Effect.gen(function*() {
      const { client, localDir, server, shuffles } = yield* serviceAndClient
      const shuffle = { shuffleId: 3, token: "secret-token" }
      shuffles.serve(shuffle)
      // Map output 0's index is a directory (EISDIR for root too); map output 1 was never written.
      const index = ShuffleFiles.indexFile(localDir, shuffle.shuffleId, 0)
      Fs.mkdirSync(index)
      const fetch = (mapIndex: number) =>
        Effect.flip(
          client.data.fetchBytes(server.address!, ShuffleFiles.blockId({ ...shuffle, mapIndex, reduceId: 0 }))
        )
      const unreadable = yield* fetch(0)
      assert.strictEqual(unreadable._tag, "TransferRefused")
      assert.include(unreadable.message, `EISDIR: illegal operation on a directory, read '${index}'`)
      assert.strictEqual((yield* fetch(1))._tag, "BlockNotFound")
    }).pipe(Effect.provide(Transport.layerMemory)))
})
