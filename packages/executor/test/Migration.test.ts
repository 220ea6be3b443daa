import { assert, describe, it } from "@effect/vitest"
import { LocalFiles } from "@kindling/data"
import * as NodeDisk from "@kindling/data/NodeDisk"
import { BlockStore, Migration, ShuffleFiles, ShuffleService } from "@kindling/executor"
import { ClusterMessages, Endpoints, Ids, RpcAddress } from "@kindling/protocol"
import { RpcEnv, Transport } from "@kindling/rpc"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

// An executor's shuffle service, block store and migration on one node of an in-memory network, over a scratch dir.
const executor = (name: string) =>
  Effect.gen(function*() {
    const localDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), `kindling-migration-${name}-`))
    yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(localDir, { recursive: true, force: true })))
    const rpc = yield* RpcEnv.make({ host: name, port: 1 })
    const blocks = new BlockStore.BlockStore(LocalFiles.files, localDir, 1 << 20)
    const shuffles = yield* ShuffleService.make({
      executorId: Ids.ExecutorId.make(name),
      disk: NodeDisk.disk,
      localDir,
      driver: Endpoints.ref(RpcAddress.make("driver", 1), Endpoints.scheduler),
      askTimeoutMillis: 1000
    }).pipe(Effect.provideService(RpcEnv.RpcEnv, rpc))
    const migration = yield* Migration.make({ disk: NodeDisk.disk, localDir, blocks, shuffles }).pipe(
      Effect.provideService(RpcEnv.RpcEnv, rpc)
    )
    return { localDir, rpc, blocks, shuffles, migration }
  })

// A map output of two reduce partitions, as a map task leaves it: the data file and its index of offsets.
const writeMapOutput = (localDir: string, shuffleId: number, mapIndex: number, parts: ReadonlyArray<string>) => {
  const bytes = parts.map((part) => new TextEncoder().encode(part))
  const offsets = [0]
  for (const part of bytes) offsets.push(offsets.at(-1)! + part.length)
  Fs.writeFileSync(ShuffleFiles.dataFile(localDir, shuffleId, mapIndex), Buffer.concat(bytes))
  Fs.writeFileSync(
    ShuffleFiles.indexFile(localDir, shuffleId, mapIndex),
    new Uint8Array(new Float64Array(offsets).buffer)
  )
}

describe("Migration", () => {
  it.scoped("a peer copies a decommissioning executor's map outputs and cached blocks, and serves them as its own", () =>
    Effect.gen(function*() {
      const leaving = yield* executor("leaving")
      const peer = yield* executor("peer")
      const reader = yield* RpcEnv.make({ host: "reader", port: 1 })
      writeMapOutput(leaving.localDir, 2, 0, ["first partition", "second"])
      writeMapOutput(leaving.localDir, 2, 1, ["", "only the second"])
      leaving.shuffles.serve({ shuffleId: 2, token: "shuffle-token" })
      const cached = new TextEncoder().encode("a cached partition's frames")
      leaving.blocks.put({ blockId: "rdd_5_0", level: "MEMORY_ONLY", bytes: cached })
      leaving.blocks.put({ blockId: "rdd_5_1", level: "DISK_ONLY", bytes: cached })
      // Before the offer nothing is served for migration, whatever the token.
      const early = yield* Effect.flip(reader.data.fetchBytes(leaving.rpc.address!, "migration/x/block/rdd_5_0"))
      assert.strictEqual(early._tag, "BlockNotFound")
      const offer = leaving.migration.offer()
      assert.deepStrictEqual(offer.shuffles, [{ shuffleId: 2, token: "shuffle-token" }])
      assert.deepStrictEqual(offer.blocks, [
        { blockId: "rdd_5_0", storageLevel: "MEMORY_ONLY" },
        { blockId: "rdd_5_1", storageLevel: "DISK_ONLY" }
      ])
      const message = (token: string) =>
        new ClusterMessages.MigrateBlocks({
          from: Ids.ExecutorId.make("leaving"),
          address: leaving.rpc.address!,
          token,
          mapOutputs: [0, 1].map((mapIndex) => ({ shuffleId: 2, mapIndex, token: "shuffle-token" })),
          blocks: offer.blocks
        })
      // A wrong token copies nothing, and says why for each.
      const refused = yield* peer.migration.copy(message("guessed"))
      assert.deepStrictEqual([refused.mapOutputs, refused.stored], [[], []])
      assert.strictEqual(refused.failures.length, 4)
      assert.isFalse(Fs.readdirSync(peer.localDir).some((file) => file.startsWith("shuffle_")))
      const copied = yield* peer.migration.copy(message(offer.token))
      assert.deepStrictEqual(copied.failures, [])
      assert.deepStrictEqual(copied.mapOutputs, [{ shuffleId: 2, mapIndex: 0 }, { shuffleId: 2, mapIndex: 1 }])
      assert.deepStrictEqual(copied.stored.map((block) => [block.blockId, block.level]), [
        ["rdd_5_0", "MEMORY_ONLY"],
        ["rdd_5_1", "DISK_ONLY"]
      ])
      // The peer serves each reduce partition under the shuffle's token, byte for byte, and holds the blocks.
      const block = (mapIndex: number, reduceId: number) =>
        reader.data.fetchBytes(
          peer.rpc.address!,
          ShuffleFiles.blockId({ token: "shuffle-token", shuffleId: 2, mapIndex, reduceId })
        ).pipe(Effect.map((bytes) => new TextDecoder().decode(bytes)))
      assert.deepStrictEqual(
        yield* Effect.all([block(0, 0), block(0, 1), block(1, 1)]),
        ["first partition", "second", "only the second"]
      )
      assert.deepStrictEqual(
        peer.blocks.held(),
        offer.blocks.map(({ blockId, storageLevel }) => ({ blockId, level: storageLevel }))
      )
      assert.isFalse(Fs.readdirSync(peer.localDir).some((file) => file.endsWith(".migrating")))
    }).pipe(Effect.provide(Transport.layerMemory)))
})
