/**
 * Fetching an app artifact into a driver's work dir, as Spark's DriverRunner downloads the user jar: artifact
 * URLs (`kindling://host:port/artifact/<sha256>/<name>`, an upload the master serves) are fetched on the data
 * plane and checked against their digest, `file://` URLs and absolute paths are copied, `http://` and `https://`
 * URLs are downloaded.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { RpcAddress } from "@kindling/protocol"
import { RpcEnv } from "@kindling/rpc"
import { NodeArtifacts } from "@kindling/rpc/node"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Sink from "effect/Sink"
import * as Stream from "effect/Stream"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { reasonOf } from "./internal/reason.js"

/**
 * The artifact could not be fetched: an unsupported or malformed URL, a missing file, or an HTTP failure.
 *
 * @since 0.1.0
 * @category errors
 */
export class ArtifactFetchFailed
  extends Data.TaggedError("ArtifactFetchFailed")<{ readonly url: string; readonly reason: string }>
{
  override get message(): string {
    return `Cannot fetch ${this.url}: ${this.reason}`
  }
}

type Source =
  | { readonly _tag: "Artifact"; readonly location: NodeArtifacts.Location }
  | { readonly _tag: "File"; readonly path: string }
  | { readonly _tag: "Http"; readonly url: URL; readonly name: string }

const parse = (url: string): Effect.Effect<Source, ArtifactFetchFailed> =>
  Effect.suspend((): Effect.Effect<Source, ArtifactFetchFailed> => {
    const fail = (reason: string) => Effect.fail(new ArtifactFetchFailed({ url, reason }))
    if (Path.isAbsolute(url)) return Effect.succeed({ _tag: "File", path: url } as const)
    if (!URL.canParse(url)) return fail("not an absolute path or a URL")
    const parsed = new URL(url)
    switch (parsed.protocol) {
      case "kindling:":
        return Option.match(NodeArtifacts.parseUrl(url), {
          onNone: () => fail("not an artifact URL (kindling://host:port/artifact/<sha256>/<name>)"),
          onSome: (location) => Effect.succeed({ _tag: "Artifact", location } as const)
        })
      case "file:":
        return Effect.try({
          try: () => ({ _tag: "File", path: fileURLToPath(parsed) } as const),
          catch: (error) => new ArtifactFetchFailed({ url, reason: reasonOf(error) })
        })
      case "http:":
      case "https:":
        return Effect.try({
          try: () => Path.posix.basename(decodeURIComponent(parsed.pathname)),
          catch: (error) => new ArtifactFetchFailed({ url, reason: reasonOf(error) })
        }).pipe(
          Effect.filterOrFail(
            (name) => name !== "",
            () => new ArtifactFetchFailed({ url, reason: "the URL path has no file name" })
          ),
          Effect.map((name) => ({ _tag: "Http", url: parsed, name } as const))
        )
      default:
        return fail(
          `unsupported scheme "${parsed.protocol}" (use kindling://, file://, http://, https:// or an absolute path)`
        )
    }
  })

/**
 * Fetches `url` into `intoDir` (created if missing) and returns the local path, which is named after the last
 * segment of the URL's path. Artifacts are fetched on the data plane of the RpcEnv in context, files copied
 * through the `FileSystem` in context, downloads streamed into it.
 *
 * @since 0.1.0
 * @category fetching
 */
export const fetchArtifact = (
  url: string,
  intoDir: string,
  /**
   * Nodes that may hold an artifact URL's bytes too, tried in turn when the node it names cannot serve them — the
   * master that launched the driver, which has it by its digest when the master the URL names is gone.
   */
  mirrors: ReadonlyArray<RpcAddress.RpcAddress> = []
): Effect.Effect<string, ArtifactFetchFailed, FileSystem.FileSystem | RpcEnv.RpcEnv> =>
  Effect.gen(function*() {
    const source = yield* parse(url)
    const fs = yield* FileSystem.FileSystem
    const failed = (error: unknown) => new ArtifactFetchFailed({ url, reason: reasonOf(error) })
    yield* Effect.mapError(fs.makeDirectory(intoDir, { recursive: true }), failed)
    if (source._tag === "Artifact") {
      const target = Path.join(intoDir, source.location.name)
      const rpc = yield* RpcEnv.RpcEnv
      const from = (address: RpcAddress.RpcAddress) =>
        Effect.either(NodeArtifacts.fetchTo(rpc.data, { ...source.location, address }, target))
      const named = yield* from(source.location.address)
      if (Either.isRight(named)) return target
      const elsewhere = mirrors.filter((address) => RpcAddress.key(address) !== RpcAddress.key(source.location.address))
      for (const mirror of elsewhere) {
        if (Either.isRight(yield* from(mirror))) return target
      }
      const tried = elsewhere.length === 0 ? "" : ` (nor from ${elsewhere.map((a) => a.hostPort).join(", ")})`
      return yield* new ArtifactFetchFailed({ url, reason: `${reasonOf(named.left)}${tried}` })
    }
    if (source._tag === "File") {
      const target = Path.join(intoDir, Path.basename(source.path))
      yield* Effect.mapError(fs.copyFile(source.path, target), failed)
      return target
    }
    const target = Path.join(intoDir, source.name)
    const response = yield* Effect.tryPromise({ try: (signal) => fetch(source.url, { signal }), catch: failed })
    if (!response.ok) return yield* failed(new Error(`HTTP ${response.status} ${response.statusText}`.trim()))
    if (response.body === null) return yield* failed(new Error("the response has no body"))
    yield* Stream.run(Stream.fromReadableStream(() => response.body!, failed), Sink.mapError(fs.sink(target), failed))
    return target
  })
