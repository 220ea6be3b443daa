/**
 * Making a directory and whichever of its parents are missing, one level at a time, as `mkdir -p` does. Every
 * node makes its directories this way, never through Node's recursive `mkdir`: on Node 20 that one loops for ever,
 * at full CPU, on a path where no directory can be made although the parent exists (`/proc/x`: each `mkdir` there
 * fails with ENOENT, and it takes that for a missing parent), synchronously as on the thread pool, and it reports a
 * read-only file system as ENOENT. Here each level is tried once, so a path that cannot be made fails at once with
 * the system's code for why (`EROFS`, `ENOTDIR`, `EACCES`, `ENOSPC`, …).
 *
 * It imports nothing but `node:fs` and `node:path`, so that a task thread loads it alone
 * (`@kindling/installation/Directories`).
 *
 * @since 0.1.0
 */
import * as Fs from "node:fs"
import * as Path from "node:path"

const codeOf = (error: unknown): string | undefined =>
  error instanceof Error && "code" in error && typeof error.code === "string" ? error.code : undefined

const isDirectory = (path: string): boolean => Fs.statSync(path, { throwIfNoEntry: false })?.isDirectory() === true

// A `mkdir` of one level: done, or already a directory; anything else is thrown as the system said it.
const makeOne = (path: string, mode: number | undefined): "made" | "missing parent" => {
  try {
    Fs.mkdirSync(path, mode === undefined ? undefined : { mode })
    return "made"
  } catch (error) {
    const code = codeOf(error)
    if (code === "EEXIST" && isDirectory(path)) return "made"
    if (code === "ENOENT") return "missing parent"
    throw error
  }
}

/**
 * Makes `path` a directory, and its missing parents first, each it makes with `mode` (less the umask) when given.
 * An existing directory is no failure; anything else is thrown as a Node system error (its `code`, its message
 * naming the path), whose reason `DiskError.fromCause` reads.
 *
 * @since 0.1.0
 */
export const makeSync = (path: string, mode?: number): void => {
  if (makeOne(path, mode) === "made") return
  const parent = Path.dirname(path)
  if (parent === path) return void Fs.mkdirSync(path)
  makeSync(parent, mode)
  if (makeOne(path, mode) === "made") return
  // The parent is a directory now, and still none can be made in it: a file system that allows none (`/proc`).
  throw Object.assign(new Error(`ENOENT: no directory can be made in ${parent}, mkdir '${path}'`), {
    code: "ENOENT",
    path
  })
}
