/**
 * The local file system as the storage port's `Files`: synchronous `node:fs` calls, each failure a `DiskError`. A
 * task thread loads no more than this module, `node:fs`, the way directories are made
 * (`@kindling/installation/Directories`) and the error it throws (`@kindling/kernel/DiskError`, which imports
 * nothing) for its local files.
 *
 * @since 0.1.0
 */
import * as Directories from "@kindling/installation/Directories"
import { fromCause } from "@kindling/kernel/DiskError"
import * as Fs from "node:fs"
import type { Files } from "./Disk.js"

// Runs a synchronous operation, its failure a DiskError.
const attempt = <A>(operation: string, path: string, run: () => A): A => {
  try {
    return run()
  } catch (error) {
    throw fromCause(operation, path, error)
  }
}

/**
 * The local file system's files, through `node:fs`.
 *
 * @since 0.1.0
 */
export const files: Files = {
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
