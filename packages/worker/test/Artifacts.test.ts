import { NodeFileSystem } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Artifacts } from "@kindling/worker"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import { readText, tempDir } from "./fixtures/support.js"

const body = "export default () => {}\n".repeat(10_000)

const fetchArtifact = (url: string, intoDir: string) =>
  Artifacts.fetchArtifact(url, intoDir).pipe(Effect.provide(NodeFileSystem.layer))

// Serves `body` at /dist/app.js and 404 everywhere else.
const server = Effect.acquireRelease(
  Effect.async<Http.Server>((resume) => {
    const s = Http.createServer((request, response) => {
      if (request.url?.split("?")[0] === "/dist/app.js") response.writeHead(200).end(body)
      else response.writeHead(404).end("nope")
    })
    s.listen(0, "127.0.0.1", () => resume(Effect.succeed(s)))
  }),
  (s) =>
    Effect.async<void>((resume) => {
      s.close(() => resume(Effect.void))
    })
).pipe(Effect.map((s) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`))

const source = Effect.gen(function*() {
  const dir = yield* tempDir
  const path = Path.join(dir, "my app.js")
  yield* Effect.promise(() => Fs.promises.writeFile(path, body))
  return path
})

describe("fetchArtifact", () => {
  it.scopedLive("copies a file:// URL into the directory, creating it", () =>
    Effect.gen(function*() {
      const from = yield* source
      const into = Path.join(yield* tempDir, "driver-1")
      const local = yield* fetchArtifact(pathToFileURL(from).href, into)
      assert.strictEqual(local, Path.join(into, "my app.js"))
      assert.strictEqual(yield* readText(local), body)
    }))

  it.scopedLive("copies a plain absolute path", () =>
    Effect.gen(function*() {
      const from = yield* source
      const into = yield* tempDir
      const local = yield* fetchArtifact(from, into)
      assert.strictEqual(local, Path.join(into, "my app.js"))
      assert.strictEqual(yield* readText(local), body)
    }))

  it.scopedLive("downloads an http:// URL", () =>
    Effect.gen(function*() {
      const base = yield* server
      const into = yield* tempDir
      const local = yield* fetchArtifact(`${base}/dist/app.js?v=2`, into)
      assert.strictEqual(local, Path.join(into, "app.js"))
      assert.strictEqual(yield* readText(local), body)
    }))

  it.scopedLive("fails on a non-2xx answer", () =>
    Effect.gen(function*() {
      const base = yield* server
      const error = yield* Effect.flip(fetchArtifact(`${base}/missing.js`, yield* tempDir))
      assert.strictEqual(error._tag, "ArtifactFetchFailed")
      assert.strictEqual(error.reason, "HTTP 404 Not Found")
      assert.include(error.message, "missing.js")
    }))

  it.scopedLive("fails on a missing file", () =>
    Effect.gen(function*() {
      const into = yield* tempDir
      const error = yield* Effect.flip(fetchArtifact(Path.join(into, "absent.js"), into))
      assert.include(error.reason, "ENOENT")
    }))

  it.scopedLive("fails on a refused connection", () =>
    Effect.gen(function*() {
      const closed = yield* Effect.scoped(server)
      const error = yield* Effect.flip(fetchArtifact(`${closed}/dist/app.js`, yield* tempDir))
      assert.include(error.reason, "ECONNREFUSED")
    }))

  it.effect("refuses unknown schemes and relative paths with a clear message", () =>
    Effect.gen(function*() {
      const ftp = yield* Effect.flip(fetchArtifact("ftp://host/app.js", "/nowhere"))
      assert.strictEqual(
        ftp.message,
        "Cannot fetch ftp://host/app.js: unsupported scheme \"ftp:\" (use file://, http://, https:// or an absolute path)"
      )
      const relative = yield* Effect.flip(fetchArtifact("dist/app.js", "/nowhere"))
      assert.strictEqual(relative.reason, "not an absolute path or a URL")
      const noName = yield* Effect.flip(fetchArtifact("https://example.com/", "/nowhere"))
      assert.strictEqual(noName.reason, "the URL path has no file name")
    }))
})
