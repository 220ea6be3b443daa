/**
 * Where a master keeps the app artifacts submission clients upload for cluster deploy mode, and serves them to
 * workers on its data plane (`NodeArtifacts`). An upload is pulled from the uploading node, checked against the
 * size and digest it announced, and stored under its digest, so the same app uploaded twice is stored once. An
 * artifact is kept while a driver that the master has not forgotten refers to it, and for the retention time
 * after the last one went (a fresh upload, before its driver is submitted, counts as just released).
 *
 * @since 0.1.0
 */
import * as Directories from "@kindling/installation/Directories"
import { TemporaryDirectory } from "@kindling/kernel"
import { Errors, type QueryMessages, type RpcAddress, SubmissionMessages } from "@kindling/protocol"
import { RpcEnv } from "@kindling/rpc"
import { NodeArtifacts } from "@kindling/rpc/node"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"

/**
 * An upload to store: what the uploader announced, and where it listens.
 *
 * @since 0.1.0
 * @category models
 */
export interface Upload {
  readonly from: RpcAddress.RpcAddress
  readonly name: string
  readonly sha256: string
  readonly size: number
  /** Kept whatever drivers refer to until the master leads (`recovered`): a standby's upload. */
  readonly untilLeading?: boolean
}

/**
 * @since 0.1.0
 * @category models
 */
export interface ArtifactStoreService {
  /** Pulls the artifact from its uploader, checks and stores it; answers with the URL drivers name it by. */
  readonly store: (upload: Upload) => Effect.Effect<SubmissionMessages.UploadArtifactResponse, Errors.ArtifactRejected>
  /** Stores a file of this node as an artifact named `name`; answers with the URL drivers name it by. */
  readonly storeFile: (
    path: string,
    name: string
  ) => Effect.Effect<SubmissionMessages.UploadArtifactResponse, Errors.ArtifactRejected>
  /** Whether `appUrl` names an artifact this store holds. */
  readonly isStored: (appUrl: string) => Effect.Effect<boolean>
  /** A driver record was written: the driver now refers to the artifact its description names, if any. */
  readonly driverPersisted: (driver: QueryMessages.DriverInfo) => Effect.Effect<void>
  /** A driver was forgotten: it refers to nothing any more. */
  readonly driverRemoved: (driverId: string) => Effect.Effect<void>
  /** The drivers a newly elected master recovered: exactly those refer to artifacts now. */
  readonly recovered: (drivers: ReadonlyArray<QueryMessages.DriverInfo>) => Effect.Effect<void>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class ArtifactStore extends Context.Tag("@kindling/master/ArtifactStore")<
  ArtifactStore,
  ArtifactStoreService
>() {}

/**
 * A master that keeps no artifacts (the simulated cluster's): uploads are rejected.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerNone: Layer.Layer<ArtifactStore> = Layer.succeed(ArtifactStore, {
  store: (upload) =>
    Effect.fail(new Errors.ArtifactRejected({ name: upload.name, reason: "this master does not store artifacts" })),
  storeFile: (_, name) =>
    Effect.fail(new Errors.ArtifactRejected({ name, reason: "this master does not store artifacts" })),
  isStored: () => Effect.succeed(false),
  driverPersisted: () => Effect.void,
  driverRemoved: () => Effect.void,
  recovered: () => Effect.void
})

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Where artifacts are stored; undefined: a fresh temporary directory, removed when the master stops. */
  readonly directory: string | undefined
  /** The largest artifact accepted, in bytes. */
  readonly maxSize: number
  /** How long an artifact no driver refers to is kept. */
  readonly retentionMillis: number
}

const suffix = ".artifact"
const fileName = (sha256: string) => `${sha256}${suffix}`

/**
 * Artifacts in a directory, served on the data plane of the RpcEnv in context for the lifetime of the scope.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: Options
): Effect.Effect<ArtifactStoreService, never, RpcEnv.RpcEnv | Scope.Scope> =>
  Effect.gen(function*() {
    const rpc = yield* RpcEnv.RpcEnv
    const directory = options.directory ?? (yield* TemporaryDirectory.make("kindling-master-artifacts-"))
    yield* Effect.sync(() => Directories.makeSync(directory))
    const pathOf = (sha256: string) => Path.join(directory, fileName(sha256))

    // The artifact each driver refers to, and since when each stored artifact has had no driver.
    const driverArtifact = new Map<string, string>()
    const unreferencedSince = new Map<string, number>()
    const startedAt = yield* Clock.currentTimeMillis
    for (const entry of Fs.readdirSync(directory)) {
      const sha256 = entry.endsWith(suffix) ? entry.slice(0, -suffix.length) : undefined
      if (sha256 !== undefined && NodeArtifacts.isSha256(sha256)) unreferencedSince.set(sha256, startedAt)
      // Pieces of uploads a stopped master did not finish.
      else if (entry.endsWith(".part")) Fs.rmSync(Path.join(directory, entry), { force: true })
    }
    // A standby's uploads, kept until it leads.
    const pinned = new Set<string>()
    const isReferenced = (sha256: string) => pinned.has(sha256) || [...driverArtifact.values()].includes(sha256)
    const release = (sha256: string | undefined, now: number) => {
      if (sha256 !== undefined && !isReferenced(sha256) && Fs.existsSync(pathOf(sha256))) {
        unreferencedSince.set(sha256, now)
      }
    }
    // The digest an artifact URL names, whichever node serves it: the same bytes wherever they are fetched from.
    const artifactOf = (appUrl: string): string | undefined =>
      Option.getOrUndefined(Option.map(NodeArtifacts.parseUrl(appUrl), (location) => location.sha256))

    yield* NodeArtifacts.serve(
      rpc.data,
      (sha256) => Effect.sync(() => (Fs.existsSync(pathOf(sha256)) ? Option.some(pathOf(sha256)) : Option.none()))
    ).pipe(Effect.orDie)

    // Unreferenced artifacts past their retention are deleted, at most a minute late.
    const sweep = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      for (const [sha256, since] of unreferencedSince) {
        if (now - since < options.retentionMillis || isReferenced(sha256)) continue
        unreferencedSince.delete(sha256)
        yield* Effect.sync(() => Fs.rmSync(pathOf(sha256), { force: true }))
        yield* Effect.logInfo(`Removed artifact ${sha256}: no driver has used it for ${options.retentionMillis} ms`)
      }
    })
    yield* Effect.forkScoped(
      Effect.repeat(sweep, Schedule.spaced(Math.max(1, Math.min(options.retentionMillis, 60_000))))
    )

    // Checks an artifact, has `put` write it to its place unless it is already stored, and names it by its URL.
    const keep = (
      artifact: { readonly name: string; readonly sha256: string; readonly size: number },
      until: boolean,
      put: (
        path: string,
        reject: (reason: string) => Errors.ArtifactRejected
      ) => Effect.Effect<void, Errors.ArtifactRejected>
    ) =>
      Effect.gen(function*() {
        const reject = (reason: string) => new Errors.ArtifactRejected({ name: artifact.name, reason })
        if (!NodeArtifacts.isSha256(artifact.sha256)) {
          return yield* reject("its digest is not a SHA-256 in lowercase hex")
        }
        if (artifact.size > options.maxSize) {
          return yield* reject(`it has ${artifact.size} bytes; this master takes at most ${options.maxSize}`)
        }
        const url = NodeArtifacts.url({ address: rpc.address!, sha256: artifact.sha256, name: artifact.name })
        if (Option.isNone(NodeArtifacts.parseUrl(url))) return yield* reject("its name is not a plain file name")
        if (!Fs.existsSync(pathOf(artifact.sha256))) {
          yield* put(pathOf(artifact.sha256), reject)
          yield* Effect.logInfo(`Stored artifact ${artifact.name} (${artifact.size} bytes, ${artifact.sha256})`)
        }
        if (until) {
          pinned.add(artifact.sha256)
          unreferencedSince.delete(artifact.sha256)
        } else {
          release(artifact.sha256, yield* Clock.currentTimeMillis)
        }
        return new SubmissionMessages.UploadArtifactResponse({ url })
      })

    const store: ArtifactStoreService["store"] = (upload) =>
      keep(upload, upload.untilLeading === true, (path, reject) =>
        NodeArtifacts.fetchTo(
          rpc.data,
          { address: upload.from, sha256: upload.sha256, name: upload.name },
          path,
          upload.size
        ).pipe(
          Effect.asVoid,
          Effect.mapError((error) => reject(`fetching it from ${upload.from.hostPort} failed: ${error.message}`))
        ))

    const storeFile: ArtifactStoreService["storeFile"] = (file, name) =>
      Effect.gen(function*() {
        const digest = yield* NodeArtifacts.digestFile(file).pipe(
          Effect.mapError((error) => new Errors.ArtifactRejected({ name, reason: error.message }))
        )
        return yield* keep({ name, ...digest }, false, (path, reject) =>
          // Copied beside its place first, so the store never holds a partial artifact.
          Effect.try({
            try: () => {
              const partial = `${path}.${Crypto.randomBytes(6).toString("hex")}.part`
              Fs.copyFileSync(file, partial)
              Fs.renameSync(partial, path)
            },
            catch: (error) => reject(`copying it failed: ${error instanceof Error ? error.message : String(error)}`)
          }))
      })

    return {
      store,
      storeFile,
      isStored: (appUrl) =>
        Effect.sync(() => {
          const sha256 = artifactOf(appUrl)
          return sha256 !== undefined && Fs.existsSync(pathOf(sha256))
        }),
      driverPersisted: (driver) =>
        Effect.sync(() => {
          const sha256 = artifactOf(driver.desc.appUrl)
          if (sha256 === undefined) return
          driverArtifact.set(driver.id, sha256)
          unreferencedSince.delete(sha256)
        }),
      driverRemoved: (driverId) =>
        Clock.currentTimeMillis.pipe(Effect.map((now) => {
          const sha256 = driverArtifact.get(driverId)
          driverArtifact.delete(driverId)
          release(sha256, now)
        })),
      recovered: (drivers) =>
        Clock.currentTimeMillis.pipe(Effect.map((now) => {
          const previous = new Set([...driverArtifact.values(), ...pinned])
          driverArtifact.clear()
          pinned.clear()
          for (const driver of drivers) {
            const sha256 = artifactOf(driver.desc.appUrl)
            if (sha256 !== undefined) driverArtifact.set(driver.id, sha256)
          }
          for (const sha256 of previous) release(sha256, now)
          for (const sha256 of driverArtifact.values()) unreferencedSince.delete(sha256)
        }))
    }
  })

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<ArtifactStore, never, RpcEnv.RpcEnv> =>
  Layer.scoped(ArtifactStore, make(options))
