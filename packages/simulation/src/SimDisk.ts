/**
 * The simulated cluster's disks: one file system in memory for every host — each worker's work dir with its
 * executors' shuffle files, spills and blocks, the input files apps read and the output they save — that the
 * engine reaches through `Disk` and the workers through the platform's `FileSystem`. What the executor does on
 * its event loop takes a millisecond of simulated time, so that it interleaves with the network.
 *
 * The simulation breaks it as real disks break: a host's disk fills up for a while (every write under it fails
 * with ENOSPC), a map output rots (a byte of it flips) or vanishes, and an executor dies in the middle of writing
 * a map output, of serving one or of fetching one into a file (`arm`).
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import type { Disk } from "@kindling/data"
import { DiskError } from "@kindling/kernel"
import { Errors } from "@kindling/protocol"
import type { DataPlane } from "@kindling/rpc"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Path from "node:path"

/**
 * The moments an executor can be killed at.
 *
 * @since 0.1.0
 * @category models
 */
export type Moment = "writing map output" | "serving map output" | "fetching a block"

/**
 * @since 0.1.0
 * @category models
 */
export interface SimDisk {
  readonly disk: Disk.Disk
  /** The same files, as the workers' runners reach them. */
  readonly fileSystem: Layer.Layer<FileSystem.FileSystem>
  /** Every file's path. */
  readonly paths: () => ReadonlyArray<string>
  /** Writes under `prefix` fail with ENOSPC, until `free`. */
  readonly fill: (prefix: string) => void
  readonly free: (prefix: string) => void
  /** Flips a byte of one of the map outputs under `prefix` (`pick` chooses which); its path, if there was one. */
  readonly rot: (prefix: string, pick: (count: number) => number) => string | undefined
  /** Removes one of the map outputs under `prefix`, index and data; its path, if there was one. */
  readonly vanish: (prefix: string, pick: (count: number) => number) => string | undefined
  /**
   * The next time something under `prefix` is at `moment`, `kill` is called with the path (to kill the executor
   * whose file it is), and the operation fails as the process's death would leave it.
   */
  readonly arm: (moment: Moment, prefix: string, kill: (path: string) => void) => void
}

const mapOutput = /\/shuffle_\d+_\d+\.data$/

/**
 * An empty disk.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (): SimDisk => {
  const files = new Map<string, Uint8Array>()
  const directories = new Set<string>(["/"])
  const full = new Set<string>()
  const armed: Array<{ readonly moment: Moment; readonly prefix: string; readonly kill: (path: string) => void }> = []

  const under = (path: string, prefix: string) =>
    path === prefix || path.startsWith(prefix.endsWith("/") ? prefix : `${prefix}/`)
  const missing = (operation: string, path: string) =>
    new DiskError.DiskError({ operation, path, code: "ENOENT", reason: "no such file or directory" })
  const fire = (moment: Moment, path: string) => {
    const at = armed.findIndex((trap) => trap.moment === moment && under(path, trap.prefix))
    if (at < 0) return
    const [trap] = armed.splice(at, 1)
    trap!.kill(path)
    throw new DiskError.DiskError({ operation: "write", path, code: "EIO", reason: `the process was killed ${moment}` })
  }
  const checkSpace = (path: string) => {
    for (const prefix of full) {
      if (under(path, prefix)) {
        throw new DiskError.DiskError({ operation: "write", path, code: "ENOSPC", reason: "no space left on device" })
      }
    }
  }
  const parentsOf = (path: string) => {
    for (let dir = Path.dirname(path); !directories.has(dir); dir = Path.dirname(dir)) directories.add(dir)
  }
  // A write at `position`, growing the file as needed.
  const writeAt = (path: string, bytes: Uint8Array, position: number) => {
    checkSpace(path)
    if (mapOutput.test(path) || path.includes("/shuffle-data-")) fire("writing map output", path)
    const current = files.get(path)
    if (current === undefined) throw missing("write", path)
    const end = position + bytes.length
    const grown = end > current.length ? new Uint8Array(end) : current
    if (grown !== current) grown.set(current)
    grown.set(bytes, position)
    files.set(path, grown)
  }
  const read = (path: string) => {
    const bytes = files.get(path)
    if (bytes === undefined) throw missing("read", path)
    return bytes
  }
  const mapOutputsUnder = (prefix: string) =>
    [...files.keys()].filter((path) => under(path, prefix) && mapOutput.test(path)).sort()

  const disk: Disk.Disk = {
    openRead: (path) => {
      read(path)
      return {
        read: (buffer, offset, length, position) => {
          const bytes = read(path)
          const slice = bytes.subarray(Math.min(position, bytes.length), Math.min(position + length, bytes.length))
          buffer.set(slice, offset)
          return slice.length
        },
        close: () => {}
      }
    },
    openWrite: (path) => {
      if (!directories.has(Path.dirname(path))) throw missing("open", path)
      checkSpace(path)
      files.set(path, new Uint8Array(0))
      return { write: (bytes, position) => writeAt(path, bytes, position), close: () => {} }
    },
    readFile: (path) => read(path).slice(),
    writeFile: (path, bytes) => {
      disk.openWrite(path).write(bytes, 0)
    },
    rename: (from, to) => {
      const bytes = read(from)
      files.delete(from)
      files.set(to, bytes)
    },
    remove: (path) => {
      files.delete(path)
      for (const file of [...files.keys()]) if (under(file, path)) files.delete(file)
      for (const dir of [...directories]) if (under(dir, path) && dir !== "/") directories.delete(dir)
    },
    makeDirectory: (path) => {
      directories.add(path)
      parentsOf(path)
    },
    stat: (path) => {
      const bytes = files.get(path)
      if (bytes !== undefined) return { kind: "file", size: bytes.length }
      return directories.has(path) ? { kind: "directory", size: 0 } : undefined
    },
    list: (path) => {
      if (!directories.has(path)) throw missing("list", path)
      const names = new Set<string>()
      for (const entry of [...files.keys(), ...directories]) {
        if (entry !== path && Path.dirname(entry) === path) names.add(Path.basename(entry))
      }
      return [...names].sort()
    },
    readFileAsync: (path) =>
      Effect.zipRight(
        Effect.sleep(1),
        Effect.try({ try: () => read(path).slice(), catch: (error) => DiskError.fromCause("read", path, error) })
      ),
    blockSource: (blockId, path, range) =>
      Effect.zipRight(
        Effect.sleep(1),
        Effect.suspend((): Effect.Effect<
          DataPlane.BlockSource,
          Errors.BlockNotFound | Errors.TransferRefused
        > => {
          if (!files.has(path)) return Effect.fail(new Errors.BlockNotFound({ blockId }))
          try {
            fire("serving map output", path)
          } catch (error) {
            return Effect.fail(new Errors.TransferRefused({ blockId, reason: String(error) }))
          }
          return Effect.succeed({
            size: range.length,
            read: (at: number, length: number) =>
              Effect.suspend(() => {
                const bytes = files.get(path)
                if (bytes === undefined) return Effect.fail(new Errors.BlockNotFound({ blockId }))
                return Effect.succeed(bytes.slice(range.offset + at, range.offset + at + length))
              })
          })
        })
      ),
    appender: (path) =>
      Effect.try({
        try: () => {
          fire("fetching a block", path)
          disk.openWrite(path)
          let position = 0
          return {
            append: (chunk: Uint8Array) =>
              Effect.zipRight(
                Effect.sleep(1),
                Effect.try({
                  try: () => {
                    writeAt(path, chunk, position)
                    position += chunk.length
                  },
                  catch: (error) => DiskError.fromCause("write", path, error)
                })
              )
          }
        },
        catch: (error) => DiskError.fromCause("open", path, error)
      })
  }

  const fileSystem = FileSystem.layerNoop({
    makeDirectory: (path) => Effect.sync(() => disk.makeDirectory(path)),
    remove: (path) => Effect.sync(() => disk.remove(path)),
    exists: (path) => Effect.sync(() => disk.stat(path) !== undefined),
    copyFile: () => Effect.void,
    symlink: () => Effect.void
  })

  return {
    disk,
    fileSystem,
    paths: () => [...files.keys()].sort(),
    fill: (prefix) => void full.add(prefix),
    free: (prefix) => void full.delete(prefix),
    rot: (prefix, pick) => {
      const candidates = mapOutputsUnder(prefix).filter((path) => files.get(path)!.length > 0)
      if (candidates.length === 0) return undefined
      const path = candidates[pick(candidates.length)]!
      const bytes = files.get(path)!
      // A byte of a frame's body or checksum, never of its length: a rotten length is caught all the same, but
      // as a frame cut short; this is the rot a checksum is there for.
      const at = Math.min(bytes.length - 1, 4 + pick(Math.max(1, bytes.length - 4)))
      bytes[at] = bytes[at]! ^ 0x5a
      return path
    },
    vanish: (prefix, pick) => {
      const candidates = mapOutputsUnder(prefix)
      if (candidates.length === 0) return undefined
      const path = candidates[pick(candidates.length)]!
      files.delete(path)
      files.delete(path.replace(/\.data$/, ".index"))
      return path
    },
    arm: (moment, prefix, kill) => void armed.push({ moment, prefix, kill })
  }
}
