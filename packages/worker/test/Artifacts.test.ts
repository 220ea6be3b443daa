import { NodeFileSystem } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { RpcEnv } from "@kindling/rpc"
import { NodeArtifacts, NodeTransport } from "@kindling/rpc/node"
import { Artifacts } from "@kindling/worker"
import { Effect, Layer, Option } from "effect"
import * as Fs from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import { readText, tempDir } from "./fixtures/support.js"

const body = "export default () => {}\n".repeat(10_000)

// The worker's side: a node on 127.0.0.1 with a file system.
const fetchArtifact = (url: string, intoDir: string) =>
  Artifacts.fetchArtifact(url, intoDir).pipe(
    Effect.provide(NodeFileSystem.layer),
    Effect.provide(RpcEnv.layer({ host: "127.0.0.1", port: 0 }).pipe(Layer.provide(NodeTransport.layer)))
  )

// A node (a master, a driver) serving the artifact at `path`; answers its URL under `name`.
const artifactServer = (path: string, name: string) =>
  Effect.gen(function*() {
    const rpc = yield* RpcEnv.make({ host: "127.0.0.1", port: 0 }).pipe(Effect.provide(NodeTransport.layer))
    const digest = yield* NodeArtifacts.digestFile(path)
    yield* NodeArtifacts.serve(
      rpc.data,
      (sha256) => Effect.succeed(sha256 === digest.sha256 ? Option.some(path) : Option.none())
    )
    return NodeArtifacts.url({ address: rpc.address!, sha256: digest.sha256, name })
  })

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
  it.scopedLive("fetches an artifact URL on the data plane and checks its digest", () =>
    Effect.gen(function*() {
      const url = yield* artifactServer(yield* source, "app.mjs")
      const into = Path.join(yield* tempDir, "driver-1")
      const local = yield* fetchArtifact(url, into)
      assert.strictEqual(local, Path.join(into, "app.mjs"))
      assert.strictEqual(yield* readText(local), body)
      assert.deepStrictEqual(Fs.readdirSync(into), ["app.mjs"])
    }))

  it.scopedLive("refuses bytes that are not the artifact its URL names, and keeps nothing of them", () =>
    Effect.gen(function*() {
      const path = yield* source
      const url = yield* artifactServer(path, "app.mjs")
      // The server's file changes after its digest was taken: what arrives no longer matches the URL.
      yield* Effect.promise(() => Fs.promises.writeFile(path, body.replace("default", "DEFAULT")))
      const into = yield* tempDir
      const error = yield* Effect.flip(fetchArtifact(url, into))
      assert.include(error.reason, "its SHA-256 is")
      assert.deepStrictEqual(Fs.readdirSync(into), [])
    }))

  it.scopedLive("fails on an artifact the node does not serve", () =>
    Effect.gen(function*() {
      const url = yield* artifactServer(yield* source, "app.mjs")
      const other = url.replace(/artifact\/[0-9a-f]{64}/, `artifact/${"0".repeat(64)}`)
      const error = yield* Effect.flip(fetchArtifact(other, yield* tempDir))
      assert.include(error.reason, `Block artifact/${"0".repeat(64)} not found`)
    }))

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
        "Cannot fetch ftp://host/app.js: unsupported scheme \"ftp:\" (use kindling://, file://, http://, https:// or an " +
          "absolute path)"
      )
      const notArtifact = yield* Effect.flip(fetchArtifact("kindling://host:7077/app.js", "/nowhere"))
      assert.strictEqual(notArtifact.reason, "not an artifact URL (kindling://host:port/artifact/<sha256>/<name>)")
      const escaping = yield* Effect.flip(fetchArtifact(`kindling://host:7077/artifact/${"a".repeat(64)}/..`, "/x"))
      assert.strictEqual(escaping.reason, "not an artifact URL (kindling://host:port/artifact/<sha256>/<name>)")
      const relative = yield* Effect.flip(fetchArtifact("dist/app.js", "/nowhere"))
      assert.strictEqual(relative.reason, "not an absolute path or a URL")
      const noName = yield* Effect.flip(fetchArtifact("https://example.com/", "/nowhere"))
      assert.strictEqual(noName.reason, "the URL path has no file name")
    }))
})
