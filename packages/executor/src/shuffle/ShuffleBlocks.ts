/**
 * Map output blocks as a server resolves them — an executor for its own, a worker's shuffle service for its
 * executors' (`ShuffleFiles` says where they are and how they are named). Kept apart from `ShuffleFiles`, which
 * task threads load, so that they load none of this.
 *
 * @since 0.1.0
 */
import type { Disk } from "@kindling/data"
import { Errors } from "@kindling/protocol"
import type { DataPlane } from "@kindling/rpc"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as ShuffleFiles from "./ShuffleFiles.js"

/**
 * The source of one reduce partition's block of a map output in `dir`, read through `disk`: the executor's own
 * serving and the worker's shuffle service both resolve blocks so. A missing index is a map output not held here;
 * one that cannot be read, a refusal that says which file failed and why.
 *
 * @since 0.1.0
 */
export const source = (
  disk: Pick<Disk.Disk, "readFileAsync" | "blockSource">,
  dir: string,
  blockId: string,
  name: ShuffleFiles.BlockName
): Effect.Effect<DataPlane.BlockSource, Errors.BlockNotFound | Errors.TransferRefused, Scope.Scope> =>
  Effect.gen(function*() {
    const index = yield* disk.readFileAsync(ShuffleFiles.indexFile(dir, name.shuffleId, name.mapIndex)).pipe(
      Effect.mapError((error) =>
        error.code === "ENOENT"
          ? new Errors.BlockNotFound({ blockId })
          : new Errors.TransferRefused({ blockId, reason: error.message })
      )
    )
    const range = yield* Effect.try({
      try: () => ShuffleFiles.rangeOf(index, name.reduceId),
      catch: () => new Errors.BlockNotFound({ blockId })
    })
    return yield* disk.blockSource(blockId, ShuffleFiles.dataFile(dir, name.shuffleId, name.mapIndex), range)
  })
