/**
 * The engine's files on the local file system (`Disk` through `node:fs`): synchronous (`LocalFiles`), and through
 * `node:fs/promises` for what an executor does on its event loop — its shuffle files and blocks, which are always
 * local (a task reads and writes datasets through `Storage.files`, objects too).
 *
 * @since 0.1.0
 */
import { DiskOperations } from "@kindling/kernel"
import { NodeDataPlane } from "@kindling/rpc/node"
import * as Effect from "effect/Effect"
import * as FsPromises from "node:fs/promises"
import type { Disk } from "./Disk.js"
import * as LocalFiles from "./LocalFiles.js"

/**
 * @since 0.1.0
 */
export const disk: Disk = {
  ...LocalFiles.files,
  readFileAsync: (path) => DiskOperations.attemptPromise("read", path, () => FsPromises.readFile(path)),
  blockSource: (blockId, path, range) => NodeDataPlane.fromFile(blockId, path, range),
  appender: (path) =>
    Effect.gen(function*() {
      const handle = yield* Effect.acquireRelease(
        DiskOperations.attemptPromise("open", path, () => FsPromises.open(path, "w")),
        // A release cannot fail: a close that fails is logged.
        (handle) => DiskOperations.logged(DiskOperations.attemptPromise("close", path, () => handle.close()))
      )
      return {
        append: (chunk: Uint8Array) =>
          DiskOperations.attemptPromise("write", path, () => handle.write(chunk).then(() => undefined))
      }
    })
}
