/**
 * The port to the files an app's engine reads and writes: shuffle outputs and their indexes, spills, persisted
 * partitions on disk, fetched blocks, text input and saved output. Everything of the engine that touches a file
 * goes through it, so that the simulated cluster can put the engine's I/O under its clock and its faults (a disk
 * that fills up, a block that vanishes or rots, an executor killed mid-write) by giving another implementation;
 * `NodeDisk.disk` is the real one.
 *
 * It has two faces. A task runs synchronously on its thread, so what a task does is synchronous (`Files`: open,
 * read, write, rename, remove), and a task thread loads no more than this module, `node:fs`, the way directories
 * are made (`@kindling/installation/Directories`) and the error it throws (`@kindling/kernel/DiskError`, which
 * imports nothing) for it. An executor's own work (serving blocks to
 * other executors, receiving fetched ones) runs on its event loop, which must not block on a disk, so that face
 * is made of Effects. A failed operation throws (or fails with) a `DiskError` naming the operation, the path and
 * the system's code (`ENOENT`, `ENOSPC`, …), whatever the implementation.
 *
 * @since 0.1.0
 */
import * as Directories from "@kindling/installation/Directories"
import { type DiskError, fromCause } from "@kindling/kernel/DiskError"
import type { Errors } from "@kindling/protocol"
import type { DataPlane } from "@kindling/rpc"
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Fs from "node:fs"
import * as ObjectStore from "./ObjectStore.js"
import { isObjectPath } from "./ObjectStore.js"

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

// Runs a synchronous operation, its failure a DiskError.
const attempt = <A>(operation: string, path: string, run: () => A): A => {
  try {
    return run()
  } catch (error) {
    throw fromCause(operation, path, error)
  }
}

// The local file system's synchronous face, through `node:fs`.
const localFiles: Files = {
  openRead: (path) => {
    const fd = attempt("open", path, () => Fs.openSync(path, "r"))
    return {
      read: (buffer, offset, length, position) =>
        attempt("read", path, () => Fs.readSync(fd, buffer, offset, length, position)),
      close: () => attempt("close", path, () => Fs.closeSync(fd))
    }
  },
  openWrite: (path) => {
    const fd = attempt("open", path, () => Fs.openSync(path, "w"))
    return {
      write: (bytes, position) =>
        attempt("write", path, () => {
          let written = 0
          while (written < bytes.length) {
            written += Fs.writeSync(fd, bytes, written, bytes.length - written, position + written)
          }
        }),
      close: () => attempt("close", path, () => Fs.closeSync(fd))
    }
  },
  readFile: (path) => attempt("read", path, () => Fs.readFileSync(path)),
  writeFile: (path, bytes) => attempt("write", path, () => Fs.writeFileSync(path, bytes)),
  rename: (from, to) => attempt("rename", from, () => Fs.renameSync(from, to)),
  remove: (path) => attempt("remove", path, () => Fs.rmSync(path, { recursive: true, force: true })),
  makeDirectory: (path) => attempt("mkdir", path, () => Directories.makeSync(path)),
  stat: (path) => {
    const stat = attempt("stat", path, () => Fs.statSync(path, { throwIfNoEntry: false }))
    if (stat === undefined) return undefined
    return { kind: stat.isDirectory() ? "directory" : "file", size: stat.size }
  },
  list: (path) => attempt("list", path, () => Fs.readdirSync(path))
}

/**
 * The files of this machine and of object storage: `s3://` and `s3a://` paths are objects (`ObjectStore`),
 * others the local file system's, through `node:fs`.
 *
 * @since 0.1.0
 */
export const nodeFiles: Files = {
  openRead: (path) => on(path).openRead(path),
  openWrite: (path) => on(path).openWrite(path),
  readFile: (path) => on(path).readFile(path),
  writeFile: (path, bytes) => on(path).writeFile(path, bytes),
  rename: (from, to) => {
    if (isObjectPath(from) !== isObjectPath(to)) {
      throw fromCause("rename", from, Object.assign(new Error(`${to} is on another file system`), { code: "EXDEV" }))
    }
    on(from).rename(from, to)
  },
  remove: (path) => on(path).remove(path),
  makeDirectory: (path) => on(path).makeDirectory(path),
  stat: (path) => on(path).stat(path),
  list: (path) => on(path).list(path)
}

const on = (path: string): Files => (isObjectPath(path) ? ObjectStore.files : localFiles)
