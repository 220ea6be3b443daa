/**
 * Where a master keeps the apps, drivers and workers it must not forget across a restart
 * (`kindling.deploy.recoveryMode`): nowhere (`NONE`, the default) or one file per record in
 * `kindling.deploy.recoveryDirectory` (`FILESYSTEM`). What a master trusts of what it finds there is
 * `StoreTrust`'s.
 *
 * @since 0.1.0
 */
import * as Directories from "@kindling/installation/Directories"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { decodeRecord, encodeRecord, kindOf, recordName, toStored } from "./internal/records.js"
import type { Record, Stored } from "./MasterCore.js"
import * as StoreTrust from "./StoreTrust.js"

/**
 * Reading or writing the recovery directory failed.
 *
 * @since 0.1.0
 * @category errors
 */
export class PersistenceError extends Data.TaggedError("PersistenceError")<{
  readonly operation: string
  readonly path: string
  readonly reason: string
}> {
  override get message(): string {
    return `Cannot ${this.operation} ${this.path}: ${this.reason}`
  }
}

/**
 * @since 0.1.0
 * @category models
 */
export interface PersistenceEngine {
  /**
   * Everything stored, for a master that was just elected; `UntrustedStore` when the store holds what the cluster
   * did not write (the master must then stop, not try again).
   */
  readonly readAll: Effect.Effect<Stored, PersistenceError | StoreTrust.UntrustedStore>
  /** Stores a record, replacing the one of the same kind and id. */
  readonly persist: (record: Record) => Effect.Effect<void, PersistenceError>
  readonly unpersist: (kind: Record["kind"], id: string) => Effect.Effect<void, PersistenceError>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class Persistence extends Context.Tag("@kindling/master/Persistence")<Persistence, PersistenceEngine>() {}

/**
 * Recovery mode NONE: nothing is stored, so a restarted master starts empty.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerNone: Layer.Layer<Persistence> = Layer.succeed(Persistence, {
  readAll: Effect.succeed({ apps: [], drivers: [], workers: [] }),
  persist: () => Effect.void,
  unpersist: () => Effect.void
})

/**
 * Records kept in memory, outside any one master: the simulated cluster gives each master it (re)starts the
 * same store, as a restarted process finds its recovery directory.
 *
 * @since 0.1.0
 * @category models
 */
export type MemoryStore = Map<string, Record>

/**
 * Persistence in a `MemoryStore`, in the order records were first written (as the file system's ids sort).
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeMemory = (store: MemoryStore): PersistenceEngine => ({
  readAll: Effect.sync(() => toStored([...store.values()])),
  persist: (record) =>
    Effect.sync(() => {
      store.set(`${record.kind}_${record.value.id}`, record)
    }),
  unpersist: (kind, id) =>
    Effect.sync(() => {
      store.delete(`${kind}_${id}`)
    })
})

/**
 * @since 0.1.0
 * @category layers
 */
export const layerMemory = (store: MemoryStore): Layer.Layer<Persistence> =>
  Layer.succeed(Persistence, makeMemory(store))

// Temporary files start with a dot, which no record file does, whatever its id.
const temporaryPrefix = ".tmp-"

/**
 * @since 0.1.0
 * @category models
 */
export interface FileSystemOptions {
  /** The cluster's secret (`kindling.authenticate.secret`, when `kindling.authenticate` is on): records are sealed. */
  readonly secret?: string | undefined
}

/**
 * Recovery mode FILESYSTEM: one JSON file per record (`app_<id>`, `driver_<id>`, `worker_<id>`). A write goes to
 * a temporary file that is flushed to disk and then renamed over the record, so a crash mid-write leaves either
 * the old record or the new one, never a torn one; leftovers of interrupted writes are removed on reading.
 *
 * The directory is created for the master's user alone (mode 0700, records 0600), and refused
 * (`UntrustedStore`), as is any record in it, when another user owns it or may write to it; with the cluster's
 * secret records are sealed, and one whose seal does not open is refused too.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeFileSystem = (
  directory: string,
  options: FileSystemOptions = {}
): Effect.Effect<PersistenceEngine, PersistenceError | StoreTrust.UntrustedStore> =>
  Effect.gen(function*() {
    const attempt = <A>(operation: string, path: string, run: () => Promise<A>) =>
      Effect.tryPromise({
        try: run,
        catch: (error) =>
          new PersistenceError({ operation, path, reason: error instanceof Error ? error.message : String(error) })
      })
    const seal = StoreTrust.makeSeal(options.secret)
    // The directory itself may be reached through a link an operator made; what it holds may not.
    const trust = (path: string, expected: "directory" | "file") =>
      Effect.gen(function*() {
        const uid = process.getuid?.()
        if (uid === undefined) return
        const stat = yield* attempt("inspect", path, () => (expected === "directory" ? Fs.stat : Fs.lstat)(path))
        const problem = StoreTrust.fileProblem(
          {
            kind: stat.isDirectory()
              ? "directory"
              : stat.isFile()
              ? "file"
              : stat.isSymbolicLink()
              ? "symbolic link"
              : "other",
            uid: stat.uid,
            mode: stat.mode
          },
          expected,
          uid
        )
        if (problem !== undefined) {
          return yield* new StoreTrust.UntrustedStore({ path, reason: problem, remedy: StoreTrust.fileRemedy })
        }
      })
    yield* attempt("create", directory, async () => Directories.makeSync(directory, 0o700))
    yield* trust(directory, "directory")
    const recordFile = (kind: Record["kind"], id: string) =>
      Effect.try({
        try: () => recordName(kind, id),
        catch: () =>
          new PersistenceError({
            operation: "name",
            path: directory,
            reason: `id ${JSON.stringify(id)} cannot be a file name`
          })
      })

    const syncDirectory = attempt("sync", directory, async () => {
      const handle = await Fs.open(directory, "r")
      try {
        await handle.sync()
      } finally {
        await handle.close()
      }
    })

    const persist = (record: Record) =>
      Effect.gen(function*() {
        const name = yield* recordFile(record.kind, record.value.id)
        const target = Path.join(directory, name)
        const temporary = Path.join(directory, `${temporaryPrefix}${randomBytes(6).toString("hex")}-${name}`)
        const text = yield* encodeRecord(record, seal).pipe(
          Effect.mapError((reason) => new PersistenceError({ operation: "encode", path: target, reason }))
        )
        yield* attempt("write", temporary, async () => {
          const handle = await Fs.open(temporary, "w", 0o600)
          try {
            await handle.writeFile(text)
            await handle.sync()
          } finally {
            await handle.close()
          }
        })
        yield* attempt("rename", target, () => Fs.rename(temporary, target))
        yield* syncDirectory
      })

    const unpersist = (kind: Record["kind"], id: string) =>
      Effect.gen(function*() {
        const target = Path.join(directory, yield* recordFile(kind, id))
        yield* attempt("remove", target, () => Fs.rm(target, { force: true }))
        yield* syncDirectory
      })

    const readAll = Effect.gen(function*() {
      yield* trust(directory, "directory")
      const names = yield* attempt("list", directory, () => Fs.readdir(directory))
      const records: Array<Record> = []
      for (const name of names.sort()) {
        const path = Path.join(directory, name)
        if (name.startsWith(temporaryPrefix)) {
          yield* attempt("remove", path, () => Fs.rm(path, { force: true }))
          continue
        }
        const kind = kindOf(name)
        if (kind === undefined) continue
        yield* trust(path, "file")
        const text = yield* attempt("read", path, () => Fs.readFile(path, "utf8"))
        records.push(
          yield* decodeRecord(
            { kind, name, path, text },
            seal,
            (reason) => new PersistenceError({ operation: "decode", path, reason })
          )
        )
      }
      return toStored(records)
    })

    return { readAll, persist, unpersist }
  })

/**
 * @since 0.1.0
 * @category layers
 */
export const layerFileSystem = (
  directory: string,
  options: FileSystemOptions = {}
): Layer.Layer<Persistence, PersistenceError | StoreTrust.UntrustedStore> =>
  Layer.effect(Persistence, makeFileSystem(directory, options))
