/**
 * Fetching an app artifact into a driver's work dir, as Spark's DriverRunner downloads the user jar: `file://`
 * URLs and absolute paths are copied, `http://` and `https://` URLs are downloaded.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { Readable } from "node:stream"
import { pipeline } from "node:stream/promises"
import type { ReadableStream } from "node:stream/web"
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
  | { readonly _tag: "File"; readonly path: string }
  | { readonly _tag: "Http"; readonly url: URL; readonly name: string }

const parse = (url: string): Effect.Effect<Source, ArtifactFetchFailed> =>
  Effect.suspend((): Effect.Effect<Source, ArtifactFetchFailed> => {
    const fail = (reason: string) => Effect.fail(new ArtifactFetchFailed({ url, reason }))
    if (Path.isAbsolute(url)) return Effect.succeed({ _tag: "File", path: url } as const)
    if (!URL.canParse(url)) return fail("not an absolute path or a URL")
    const parsed = new URL(url)
    switch (parsed.protocol) {
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
        return fail(`unsupported scheme "${parsed.protocol}" (use file://, http://, https:// or an absolute path)`)
    }
  })

const download = (url: URL, target: string, signal: AbortSignal): Promise<void> =>
  fetch(url, { signal }).then((response) => {
    if (!response.ok) throw new Error(`HTTP ${response.status} ${response.statusText}`.trim())
    if (response.body === null) throw new Error("the response has no body")
    return pipeline(
      Readable.fromWeb(response.body as ReadableStream<Uint8Array>),
      Fs.createWriteStream(target),
      { signal }
    )
  })

/**
 * Fetches `url` into `intoDir` (created if missing) and returns the local path, which is named after the last
 * segment of the URL's path.
 *
 * @since 0.1.0
 * @category fetching
 */
export const fetchArtifact = (url: string, intoDir: string): Effect.Effect<string, ArtifactFetchFailed> =>
  Effect.flatMap(parse(url), (source) =>
    Effect.tryPromise({
      try: async (signal) => {
        await Fs.promises.mkdir(intoDir, { recursive: true })
        if (source._tag === "File") {
          const target = Path.join(intoDir, Path.basename(source.path))
          await Fs.promises.copyFile(source.path, target)
          return target
        }
        const target = Path.join(intoDir, source.name)
        await download(source.url, target, signal)
        return target
      },
      catch: (error) => new ArtifactFetchFailed({ url, reason: reasonOf(error) })
    }))
