/**
 * Decommissioning's block migration, at both ends (what Spark's `BlockManagerDecommissioner` does, with the driver
 * choosing the peers): a decommissioning executor whose tasks are over serves its shuffle files and cached blocks
 * whole, under a token of its own, and the peers the driver picks copy them — a map output into their local dir,
 * served from then on under its shuffle's token, a cached block into their block store.
 *
 * Blocks: `migration/<token>/shuffle/<shuffleId>/<mapIndex>/index` and `…/data` (the map output's two files),
 * `migration/<token>/block/<blockId>` (a cached block's frames).
 *
 * @since 0.1.0
 */
import type { Disk } from "@kindling/data"
import { DiskOperations } from "@kindling/kernel"
import { type ClusterMessages, Errors, type RpcAddress } from "@kindling/protocol"
import { DataPlane, RpcEnv } from "@kindling/rpc"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import * as Crypto from "node:crypto"
import type { BlockStore, Stored } from "./BlockStore.js"
import * as ShuffleFiles from "./ShuffleFiles.js"
import type { ShuffleService } from "./ShuffleService.js"

const prefix = "migration/"

/**
 * What one `MigrateBlocks` brought here.
 *
 * @since 0.1.0
 * @category models
 */
export interface Copied {
  readonly mapOutputs: ReadonlyArray<{ readonly shuffleId: number; readonly mapIndex: number }>
  readonly stored: ReadonlyArray<Stored>
  readonly failures: ReadonlyArray<string>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Migration {
  /**
   * Serves this executor's shuffle files and cached blocks from now on, and says what there is to move and the
   * token that names it.
   */
  readonly offer: () => Omit<typeof ClusterMessages.ReadyToMigrate.Type, "_tag" | "executorId">
  /** Copies what the message names from its executor; what could not be copied is in `failures`. */
  readonly copy: (message: ClusterMessages.MigrateBlocks) => Effect.Effect<Copied>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly disk: Disk.Disk
  readonly localDir: string
  readonly blocks: BlockStore
  readonly shuffles: ShuffleService
}

type FileKind = "index" | "data"

const lefts = <A>(results: ReadonlyArray<Either.Either<A, string>>) =>
  results.flatMap((result) => Either.isLeft(result) ? [result.left] : [])

const fileOf = (localDir: string, shuffleId: number, mapIndex: number, kind: FileKind) =>
  kind === "index"
    ? ShuffleFiles.indexFile(localDir, shuffleId, mapIndex)
    : ShuffleFiles.dataFile(localDir, shuffleId, mapIndex)

/**
 * Serves migrations for the lifetime of the scope (nothing until `offer` is called).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options) =>
  Effect.gen(function*() {
    const rpc = yield* RpcEnv.RpcEnv
    const { blocks, disk, localDir, shuffles } = options
    // Set once the executor is decommissioning: until then, and for any other token, nothing is served.
    let token: string | undefined

    const source = (blockId: string) => {
      const [given, kind, ...rest] = blockId.slice(prefix.length).split("/")
      if (token === undefined || given !== token) return undefined
      if (kind === "block") {
        const segment = blocks.get(rest.join("/"))
        if (segment === undefined) return undefined
        return segment._tag === "Bytes"
          ? Effect.succeed(DataPlane.fromBytes(segment.bytes))
          : disk.blockSource(blockId, segment.path, segment)
      }
      const [shuffleId, mapIndex] = rest.slice(0, 2).map(Number) as [number, number]
      const file = rest[2]
      if (kind !== "shuffle" || (file !== "index" && file !== "data")) return undefined
      if (!Number.isSafeInteger(shuffleId) || !Number.isSafeInteger(mapIndex)) return undefined
      const path = fileOf(localDir, shuffleId, mapIndex, file)
      const size = disk.stat(path)?.size
      return size === undefined ? undefined : disk.blockSource(blockId, path, { offset: 0, length: size })
    }

    yield* rpc.data.serve(prefix, (blockId) =>
      // A wrong token and a block not held look alike: nothing tells a stranger what is here.
      source(blockId) ?? Effect.fail(new Errors.BlockNotFound({ blockId }))).pipe(
        // Serving fails only when the prefix is served already: a second migration service in one node, a defect.
        Effect.orDie
      )

    // A map output's files are written beside their final names and renamed into place, the index last: a reader
    // that finds the index finds the whole data file.
    const copyMapOutput = (
      from: RpcAddress.RpcAddress,
      migration: string,
      output: ClusterMessages.MigratingMapOutput
    ) =>
      Effect.gen(function*() {
        const { mapIndex, shuffleId } = output
        const name = (kind: FileKind) => `${prefix}${migration}/shuffle/${shuffleId}/${mapIndex}/${kind}`
        const index = yield* rpc.data.fetchBytes(from, name("index"))
        const dataPath = fileOf(localDir, shuffleId, mapIndex, "data")
        const indexPath = fileOf(localDir, shuffleId, mapIndex, "index")
        yield* Effect.scoped(Effect.gen(function*() {
          const file = yield* disk.appender(`${dataPath}.migrating`)
          yield* rpc.data.fetch(from, name("data")).pipe(Stream.runForEach(file.append))
        }))
        yield* Effect.try({
          try: () => {
            disk.writeFile(`${indexPath}.migrating`, index)
            disk.rename(`${dataPath}.migrating`, dataPath)
            disk.rename(`${indexPath}.migrating`, indexPath)
          },
          catch: (error) => error as Error
        })
        shuffles.serve({ shuffleId, token: output.token })
        return { shuffleId, mapIndex }
      }).pipe(
        // What a failed copy left beside the final names goes; a removal that fails is only logged.
        Effect.tapError(() =>
          Effect.forEach(
            (["data", "index"] as const).map((kind) =>
              `${fileOf(localDir, output.shuffleId, output.mapIndex, kind)}.migrating`
            ),
            (path) => DiskOperations.removing(path, () => disk.remove(path))
          )
        ),
        Effect.mapError((error) => `map output ${output.mapIndex} of shuffle ${output.shuffleId}: ${error.message}`)
      )

    const copyBlock = (from: RpcAddress.RpcAddress, migration: string, block: ClusterMessages.HeldBlock) =>
      rpc.data.fetchBytes(from, `${prefix}${migration}/block/${block.blockId}`).pipe(
        Effect.mapError((error) => `block ${block.blockId}: ${error.message}`),
        Effect.flatMap((bytes) => {
          const stored = blocks.put({ blockId: block.blockId, level: block.storageLevel, bytes })
          return stored === undefined
            ? Effect.fail(`block ${block.blockId}: not kept here (no room at ${block.storageLevel})`)
            : Effect.succeed(stored)
        })
      )

    const migration: Migration = {
      offer: () => {
        token ??= Crypto.randomBytes(16).toString("hex")
        return {
          token,
          shuffles: [...shuffles.served()],
          blocks: blocks.held().map(({ blockId, level }) => ({ blockId, storageLevel: level }))
        }
      },
      copy: (message) =>
        Effect.gen(function*() {
          const outputs = yield* Effect.forEach(
            message.mapOutputs,
            (output) => Effect.either(copyMapOutput(message.address, message.token, output)),
            { concurrency: 4 }
          )
          const stored = yield* Effect.forEach(
            message.blocks,
            (block) => Effect.either(copyBlock(message.address, message.token, block)),
            { concurrency: 4 }
          )
          return {
            mapOutputs: outputs.flatMap((result) => Either.isRight(result) ? [result.right] : []),
            stored: stored.flatMap((result) => Either.isRight(result) ? [result.right] : []),
            failures: [...lefts(outputs), ...lefts(stored)]
          }
        })
    }
    return migration
  })
