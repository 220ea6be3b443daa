/**
 * The worker's shuffle service (Spark's external shuffle service, `kindling.shuffle.service.enabled`): the worker
 * serves the map outputs its executors wrote, so that they outlive the executor that wrote them — one lost, or
 * given back by dynamic allocation, costs no recomputation. An executor of an app that asks for it keeps its files
 * in `<local dir>/<appId>/<executorId>` (`WorkDirs.servedExecutorDir`), registers with its driver naming the service, and writes
 * each shuffle's token beside its outputs; the worker checks a fetch's token against it, serves the block, removes
 * what else the executor left there once it has exited (`removeUnserved`), and everything once the app has finished.
 *
 * The worker's node runs it (`kindling worker` composes the two); it lives here because it reads the executor's
 * files as the executor lays them out.
 *
 * @since 0.1.0
 */
import type { Disk } from "@kindling/data"
import * as WorkDirs from "@kindling/installation/WorkDirs"
import { DiskOperations } from "@kindling/kernel"
import { Errors } from "@kindling/protocol"
import { RpcEnv } from "@kindling/rpc"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Path from "node:path"

import * as ShuffleBlocks from "./ShuffleBlocks.js"
import * as ShuffleFiles from "./ShuffleFiles.js"

// Where the service finds an executor's files: the layout the worker and its executors share (`WorkDirs`).
const executorDir = (localDir: string, appId: string, executorId: string) =>
  WorkDirs.servedExecutorDir(Path.join(localDir, appId), executorId)

/**
 * Serves the map outputs of the executors under `localDir` on the RpcEnv in context, for the lifetime of the scope.
 *
 * @since 0.1.0
 * @category constructors
 */
export const serve = (
  options: { readonly disk: Disk.Disk; readonly localDir: string }
): Effect.Effect<void, never, RpcEnv.RpcEnv | Scope.Scope> =>
  Effect.gen(function*() {
    const rpc = yield* RpcEnv.RpcEnv
    const { disk } = options
    yield* rpc.data.serve(ShuffleFiles.servicePrefix, (blockId) =>
      Effect.gen(function*() {
        const parsed = ShuffleFiles.parseServiceBlockId(blockId)
        const dir = parsed === undefined ? "" : executorDir(options.localDir, parsed.appId, parsed.executorId)
        const token = parsed === undefined
          ? Option.none()
          : yield* Effect.option(disk.readFileAsync(ShuffleFiles.tokenFile(dir, parsed.name.shuffleId)))
        // An unknown app, executor or shuffle and a wrong token look alike: nothing tells a stranger what exists.
        if (
          parsed === undefined || Option.isNone(token) || new TextDecoder().decode(token.value) !== parsed.name.token
        ) {
          return yield* new Errors.TransferRefused({ blockId, reason: "not a shuffle block of this app" })
        }
        return yield* ShuffleBlocks.source(disk, dir, blockId, parsed.name)
      })).pipe(
        // Serving fails only when the prefix is served already: a second shuffle service in one worker, a defect.
        Effect.orDie
      )
  })

/**
 * Removes what an executor that has exited left in its directory besides what the service serves (its spills,
 * fetched blocks, cached partitions: Spark's `spark.storage.cleanupFilesAfterExecutorExit`). A file that cannot be
 * removed is logged; the app's end removes the directory.
 *
 * @since 0.1.0
 */
export const removeUnserved = (disk: Disk.Disk, dir: string): Effect.Effect<void> =>
  DiskOperations.attempt("list", dir, () => (disk.stat(dir)?.kind === "directory" ? disk.list(dir) : [])).pipe(
    Effect.flatMap((names) =>
      Effect.forEach(
        names.filter((name) => !ShuffleFiles.isServed(name)),
        (name) => DiskOperations.removing(Path.join(dir, name), () => disk.remove(Path.join(dir, name))),
        { discard: true }
      )
    ),
    DiskOperations.logged
  )
