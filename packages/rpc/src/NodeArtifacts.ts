/**
 * App artifacts on the data plane. An artifact (the bundled app) is named by the SHA-256 of its bytes and served
 * as the block `artifact/<sha256>`; its URL, `kindling://host:port/artifact/<sha256>/<name>`, says which node
 * serves it, which block to fetch and what to call the file. A node that fetches one checks the size and the
 * digest before it uses it, so a URL names exactly one content wherever it is fetched from. Masters serve what
 * submission clients uploaded to workers, drivers serve their app to their executors; with a secret set, only
 * nodes that pass the handshake get anything.
 *
 * @since 0.1.0
 */
import { Errors, RpcAddress } from "@kindling/protocol"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import type * as DataPlane from "./DataPlane.js"
import * as NodeDataPlane from "./NodeDataPlane.js"

/**
 * Where an artifact is and what it is.
 *
 * @since 0.1.0
 * @category models
 */
export interface Location {
  /** The node that serves it. */
  readonly address: RpcAddress.RpcAddress
  /** The SHA-256 of its bytes, as 64 lowercase hex digits. */
  readonly sha256: string
  /** The file name it is stored under where it is fetched to. */
  readonly name: string
}

/**
 * An artifact's digest and size.
 *
 * @since 0.1.0
 * @category models
 */
export interface Digest {
  readonly sha256: string
  readonly size: number
}

/**
 * The data plane's id prefix for artifacts.
 *
 * @since 0.1.0
 * @category block ids
 */
export const blockPrefix = "artifact/"

/**
 * The block id of the artifact with this digest.
 *
 * @since 0.1.0
 * @category block ids
 */
export const blockId = (sha256: string): string => `${blockPrefix}${sha256}`

const sha256Pattern = /^[0-9a-f]{64}$/

/**
 * Whether `value` is a SHA-256 digest as artifacts are named (64 lowercase hex digits).
 *
 * @since 0.1.0
 * @category guards
 */
export const isSha256 = (value: string): boolean => sha256Pattern.test(value)

// A name is one path segment: what it is stored under must stay in the directory it is fetched into.
const isPlainName = (name: string) => name !== "" && name !== "." && name !== ".." && !/[/\\\0]/.test(name)

/**
 * The URL of an artifact.
 *
 * @since 0.1.0
 * @category urls
 */
export const url = (location: Location): string =>
  `kindling://${location.address.hostPort}/${blockId(location.sha256)}/${encodeURIComponent(location.name)}`

/**
 * Reads an artifact URL; anything else (another scheme, a malformed digest, a name that is not a plain file
 * name) is none.
 *
 * @since 0.1.0
 * @category urls
 */
export const parseUrl = (value: string): Option.Option<Location> => {
  const match = /^kindling:\/\/([^/:]+|\[[^\]]+\]):(\d{1,5})\/artifact\/([^/]+)\/([^/]+)$/.exec(value)
  if (match === null) return Option.none()
  const [, host, port, sha256, encodedName] = match
  let name: string
  try {
    name = decodeURIComponent(encodedName!)
  } catch {
    return Option.none()
  }
  if (!isSha256(sha256!) || !isPlainName(name) || Number(port) > 65535) return Option.none()
  return Option.some({ address: RpcAddress.make(host!, Number(port)), sha256: sha256!, name })
}

/**
 * An artifact could not be used: the file cannot be read, or what was fetched is not what its URL names.
 *
 * @since 0.1.0
 * @category errors
 */
export class ArtifactUnusable extends Data.TaggedError("ArtifactUnusable")<{
  readonly artifact: string
  readonly reason: string
}> {
  override get message(): string {
    return `The artifact ${this.artifact} cannot be used: ${this.reason}`
  }
}

const reasonOf = (error: unknown) => (error instanceof Error ? error.message : String(error))

/**
 * The SHA-256 and size of a file, read as a stream.
 *
 * @since 0.1.0
 * @category digests
 */
export const digestFile = (path: string): Effect.Effect<Digest, ArtifactUnusable> =>
  Effect.tryPromise({
    try: async () => {
      const hash = Crypto.createHash("sha256")
      let size = 0
      for await (const chunk of Fs.createReadStream(path)) {
        hash.update(chunk as Buffer)
        size += (chunk as Buffer).length
      }
      return { sha256: hash.digest("hex"), size }
    },
    catch: (error) => new ArtifactUnusable({ artifact: path, reason: reasonOf(error) })
  })

/**
 * Serves artifacts on the data plane for the lifetime of the scope: `find` gives the file of a digest, or none
 * when this node has no such artifact.
 *
 * @since 0.1.0
 * @category serving
 */
export const serve = (
  data: DataPlane.DataPlane,
  find: (sha256: string, requester: RpcAddress.RpcAddress) => Effect.Effect<Option.Option<string>>
): Effect.Effect<void, DataPlane.PrefixAlreadyServed, Scope.Scope> =>
  data.serve(blockPrefix, (id, requester) =>
    Effect.gen(function*() {
      const path = yield* find(id.slice(blockPrefix.length), requester)
      if (Option.isNone(path)) return yield* new Errors.BlockNotFound({ blockId: id })
      return yield* NodeDataPlane.fromFile(id, path.value)
    }))

/**
 * Fetches an artifact into `path` (written beside it first, then renamed, so `path` only ever holds a checked
 * artifact) and checks its digest; with `expectedSize`, a block of any other size is refused before it is read.
 *
 * @since 0.1.0
 * @category fetching
 */
export const fetchTo = (
  data: DataPlane.DataPlane,
  location: Location,
  path: string,
  expectedSize?: number
): Effect.Effect<Digest, ArtifactUnusable | Errors.TransferError | Errors.TransferRefused> =>
  Effect.suspend(() => {
    const artifact = url(location)
    const unusable = (reason: string) => new ArtifactUnusable({ artifact, reason })
    const partial = `${path}.${Crypto.randomBytes(6).toString("hex")}.part`
    const hash = Crypto.createHash("sha256")
    let size = 0
    return Effect.gen(function*() {
      const file = yield* Effect.acquireRelease(
        Effect.try({ try: () => Fs.openSync(partial, "w"), catch: (error) => unusable(reasonOf(error)) }),
        (fd) => Effect.sync(() => Fs.closeSync(fd))
      )
      yield* data.fetch(location.address, blockId(location.sha256)).pipe(
        Stream.runForEach((chunk) =>
          Effect.suspend(() => {
            size += chunk.length
            if (expectedSize !== undefined && size > expectedSize) {
              return Effect.fail(unusable(`it is larger than the ${expectedSize} bytes announced`))
            }
            hash.update(chunk)
            return Effect.try({ try: () => Fs.writeSync(file, chunk), catch: (error) => unusable(reasonOf(error)) })
          })
        )
      )
    }).pipe(
      Effect.scoped,
      Effect.flatMap(() => {
        const sha256 = hash.digest("hex")
        if (expectedSize !== undefined && size !== expectedSize) {
          return Effect.fail(unusable(`it has ${size} bytes, not the ${expectedSize} announced`))
        }
        if (sha256 !== location.sha256) return Effect.fail(unusable(`its SHA-256 is ${sha256}`))
        return Effect.try({ try: () => Fs.renameSync(partial, path), catch: (error) => unusable(reasonOf(error)) })
          .pipe(Effect.as({ sha256, size }))
      }),
      Effect.onError(() => Effect.sync(() => Fs.rmSync(partial, { force: true })))
    )
  })
