// File operations that really fail: a path under a regular file fails with ENOTDIR, root or not (a read-only
// directory would not stop root).
import { FileSystem } from "@effect/platform"
import { NodeFileSystem } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { DiskError, DiskOperations } from "@kindling/kernel"
import { Effect, Logger, Ref } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

// A regular file in a fresh directory, and a path beneath it that nothing can be made at.
const underAFile = Effect.acquireRelease(
  Effect.sync(() => {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "kindling-disk-"))
    const file = Path.join(dir, "file")
    Fs.writeFileSync(file, "x")
    return { dir, path: Path.join(file, "beneath") }
  }),
  ({ dir }) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
)

describe("DiskOperations", () => {
  it.scopedLive("a failed operation is a DiskError naming the operation, the path and the system's code", () =>
    Effect.gen(function*() {
      const { path } = yield* underAFile
      const error = yield* Effect.flip(DiskOperations.attempt("mkdir", path, () => Fs.mkdirSync(path)))
      assert.strictEqual(error._tag, "DiskError")
      assert.deepInclude(error, { operation: "mkdir", path, code: "ENOTDIR", reason: "not a directory" })
      assert.strictEqual(error.message, `ENOTDIR: not a directory, mkdir '${path}'`)
      const rejected = yield* Effect.flip(
        DiskOperations.attemptPromise("list", path, () => Fs.promises.readdir(path))
      )
      assert.deepInclude(rejected, { operation: "list", path, code: "ENOTDIR" })
    }))

  it.scopedLive("the platform's FileSystem errors are read through the system error they wrap", () =>
    Effect.gen(function*() {
      const { path } = yield* underAFile
      const fs = yield* FileSystem.FileSystem
      const error = yield* fs.remove(path, { recursive: true }).pipe(
        Effect.mapError((cause) => DiskError.fromCause("remove", path, cause)),
        Effect.flip
      )
      assert.deepInclude(error, { operation: "remove", path, code: "ENOTDIR", reason: "not a directory" })
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.live("the nodes' FileSystem makes a directory's missing parents, and fails at once where none can be made", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "kindling-disk-"))
      yield* fs.makeDirectory(Path.join(dir, "a", "b"), { recursive: true })
      assert.isTrue(Fs.statSync(Path.join(dir, "a", "b")).isDirectory())
      Fs.rmSync(dir, { recursive: true })
      // Node's own recursive mkdir would loop here for ever, on its thread pool: the work dir of a worker that never
      // starts nor says why.
      const error = yield* Effect.flip(fs.makeDirectory("/proc/kindling-disk/work", { recursive: true }))
      assert.strictEqual(error._tag, "SystemError")
      assert.strictEqual(
        error.message,
        "NotFound: FileSystem.makeDirectory (/proc/kindling-disk): ENOENT: no directory can be made in /proc"
      )
      assert.deepInclude(DiskError.fromCause("mkdir", "/proc/kindling-disk/work", error), {
        code: "ENOENT",
        path: "/proc/kindling-disk"
      })
    }).pipe(Effect.provide(DiskOperations.nodeFileSystem), Effect.timeout("10 seconds")))

  it.scopedLive("a cleanup that fails is logged with the path and the reason, and goes no further", () =>
    Effect.gen(function*() {
      const { path } = yield* underAFile
      const logs = yield* Ref.make<Array<string>>([])
      const logger = Logger.make(({ logLevel, message }) => {
        const text = Array.isArray(message) ? message.join(" ") : String(message)
        Effect.runSync(Ref.update(logs, (lines) => [...lines, `${logLevel.label} ${text}`]))
      })
      yield* DiskOperations.removing(path, () => Fs.rmSync(path, { recursive: true, force: true })).pipe(
        Effect.provide(Logger.replace(Logger.defaultLogger, logger))
      )
      assert.deepStrictEqual(yield* Ref.get(logs), [
        `WARN Cleanup failed: ENOTDIR: not a directory, remove '${path}'`
      ])
    }))
})
