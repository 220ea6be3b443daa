/**
 * The port to the files an app's engine reads and writes: shuffle outputs and their indexes, spills, persisted
 * partitions on disk, fetched blocks, text input and saved output. Everything of the engine that touches a file
 * goes through it, so that the simulated cluster can put the engine's I/O under its clock and its faults (a disk
 * that fills up, a block that vanishes or rots, an executor killed mid-write) by giving another implementation;
 * `@kindling/data/NodeDisk` is the real one for an executor, and `Storage.files` what tasks read datasets through.
 *
 * It has two faces. A task runs synchronously on its thread, so what a task does is synchronous (`Files`: open,
 * read, write, rename, remove). An executor's own work (serving blocks to other executors, receiving fetched
 * ones) runs on its event loop, which must not block on a disk, so that face is made of Effects. A failed operation throws (or fails with) a `DiskError` naming the operation, the path and
 * the system's code (`ENOENT`, `ENOSPC`, …), whatever the implementation.
 *
 * @since 0.1.0
 */
import type { DiskError } from "@kindling/kernel/DiskError"
import type { Errors } from "@kindling/protocol"
import type { DataPlane } from "@kindling/rpc"
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"

/**
 * A file open for reading.
 *
 * @since 0.1.0
 * @category models
 */
export interface Reader {
  /** Reads up to `length` bytes at `position` into `buffer` from `offset`; 0 at the end of the file. */
  readonly read: (buffer: Uint8Array, offset: number, length: number, position: number) => number
  readonly close: () => void
}

/**
 * A file open for writing, from its start.
 *
 * @since 0.1.0
 * @category models
 */
export interface Writer {
  /** Writes all of `bytes` at `position`. */
  readonly write: (bytes: Uint8Array, position: number) => void
  readonly close: () => void
}

/**
 * What a path is.
 *
 * @since 0.1.0
 * @category models
 */
export interface Stat {
  readonly kind: "file" | "directory"
  readonly size: number
}

/**
 * What tasks do with files: synchronous operations that throw a `DiskError`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Files {
  readonly openRead: (path: string) => Reader
  /** Creates the file, or empties it. */
  readonly openWrite: (path: string) => Writer
  readonly readFile: (path: string) => Uint8Array
  readonly writeFile: (path: string, bytes: Uint8Array) => void
  /** Replaces `to`, if it exists, in one step. */
  readonly rename: (from: string, to: string) => void
  /** Removes a file, or a directory and everything in it; nothing there is no failure. */
  readonly remove: (path: string) => void
  /** Makes the directory and any missing parents. */
  readonly makeDirectory: (path: string) => void
  /** What is at `path`, if anything. */
  readonly stat: (path: string) => Stat | undefined
  /** The names in a directory. */
  readonly list: (path: string) => ReadonlyArray<string>
}

/**
 * The whole port: what tasks do, and what an executor does on its event loop.
 *
 * @since 0.1.0
 * @category models
 */
export interface Disk extends Files {
  /** A file read whole, without blocking. */
  readonly readFileAsync: (path: string) => Effect.Effect<Uint8Array, DiskError>
  /**
   * The byte range of a file as the data plane block `blockId`, open until the scope closes (a missing file is
   * `BlockNotFound`, one that cannot be read `TransferRefused`).
   */
  readonly blockSource: (
    blockId: string,
    path: string,
    range: { readonly offset: number; readonly length: number }
  ) => Effect.Effect<DataPlane.BlockSource, Errors.BlockNotFound | Errors.TransferRefused, Scope.Scope>
  /** A new file, written chunk by chunk as they come, closed when the scope closes. */
  readonly appender: (
    path: string
  ) => Effect.Effect<{ readonly append: (chunk: Uint8Array) => Effect.Effect<void, DiskError> }, DiskError, Scope.Scope>
}
