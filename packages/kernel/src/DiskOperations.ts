/**
 * File operations as Effects, their failures `DiskError`s naming the operation, the path and the system's code.
 *
 * Removing what a node no longer needs — its scratch directory, a finished app's directories, old work dirs, a
 * fetched block's file, a dropped dataset's blocks — is a cleanup: where one is run for its own sake, its failure
 * is logged as a warning and goes no further (`logged`). What is left behind only takes space, and must never
 * stop the node or fail the work it cleans up after.
 *
 * @since 0.1.0
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { SystemError, type SystemErrorReason } from "@effect/platform/Error"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Directories from "@kindling/installation/Directories"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type DiskError, fromCause } from "./DiskError.js"

/**
 * A synchronous operation on `path`, which may throw.
 *
 * @since 0.1.0
 * @category constructors
 */
export const attempt = <A>(operation: string, path: string, run: () => A): Effect.Effect<A, DiskError> =>
  Effect.try({ try: run, catch: (error) => fromCause(operation, path, error) })

/**
 * An asynchronous operation on `path`, which may reject.
 *
 * @since 0.1.0
 * @category constructors
 */
export const attemptPromise = <A>(
  operation: string,
  path: string,
  run: () => Promise<A>
): Effect.Effect<A, DiskError> => Effect.tryPromise({ try: run, catch: (error) => fromCause(operation, path, error) })

/**
 * Runs a cleanup; its failure is logged, not passed on.
 *
 * @since 0.1.0
 * @category combinators
 */
export const logged = <R>(cleanup: Effect.Effect<void, DiskError, R>): Effect.Effect<void, never, R> =>
  Effect.catchAll(cleanup, (error) => Effect.logWarning(`Cleanup failed: ${error.message}`))

/**
 * Removes `path` by the synchronous `remove`, logging a failure.
 *
 * @since 0.1.0
 * @category combinators
 */
export const removing = (path: string, remove: () => void): Effect.Effect<void> =>
  logged(attempt("remove", path, remove))

// The platform's reasons for the codes a directory that cannot be made fails with (as its Node file system says).
const reasons: Readonly<Record<string, SystemErrorReason>> = {
  ENOENT: "NotFound",
  EACCES: "PermissionDenied",
  EPERM: "PermissionDenied",
  EROFS: "PermissionDenied",
  EEXIST: "AlreadyExists",
  ENOTDIR: "BadResource",
  EBUSY: "Busy"
}

/**
 * Node's file system as the platform's `FileSystem`, but for a recursive `makeDirectory`, which makes each missing
 * level in turn (`Directories`): Node's own loops for ever on a path where no directory can be made, and a worker
 * given such a work dir would never start nor say why. Nodes provide this layer rather than `NodeFileSystem`'s.
 *
 * @since 0.1.0
 * @category layers
 */
export const nodeFileSystem: Layer.Layer<FileSystem.FileSystem> = Layer.effect(
  FileSystem.FileSystem,
  Effect.map(FileSystem.FileSystem, (fs) =>
    FileSystem.FileSystem.of({
      ...fs,
      makeDirectory: (path, options) =>
        options?.recursive === true
          ? Effect.try({
            try: () => Directories.makeSync(path),
            catch: (error) => {
              const disk = fromCause("mkdir", path, error)
              return new SystemError({
                reason: reasons[disk.code] ?? "Unknown",
                module: "FileSystem",
                method: "makeDirectory",
                pathOrDescriptor: disk.path,
                description: `${disk.code}: ${disk.reason}`,
                cause: error
              })
            }
          })
          : fs.makeDirectory(path, options)
    }))
).pipe(Layer.provide(NodeFileSystem.layer))
