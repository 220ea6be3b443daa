/**
 * The engine's files on the local file system (`Disk` through `node:fs`): synchronous for tasks, and through
 * `node:fs/promises` for what an executor does on its event loop.
 *
 * @since 0.1.0
 */
import { NodeDataPlane } from "@kindling/rpc/node"
import * as Effect from "effect/Effect"
import * as FsPromises from "node:fs/promises"
import { type Disk, diskError, nodeFiles } from "./Disk.js"

/**
 * @since 0.1.0
 */
export const disk: Disk = {
  ...nodeFiles,
  readFileAsync: (path) =>
    Effect.tryPromise({ try: () => FsPromises.readFile(path), catch: (error) => diskError("read", path, error) }),
  blockSource: (blockId, path, range) => NodeDataPlane.fromFile(blockId, path, range),
  appender: (path) =>
    Effect.gen(function*() {
      const handle = yield* Effect.acquireRelease(
        Effect.tryPromise({ try: () => FsPromises.open(path, "w"), catch: (error) => diskError("open", path, error) }),
        (handle) => Effect.ignore(Effect.tryPromise(() => handle.close()))
      )
      return {
        append: (chunk: Uint8Array) =>
          Effect.tryPromise({
            try: () => handle.write(chunk).then(() => undefined),
            catch: (error) => diskError("write", path, error)
          })
      }
    })
}
