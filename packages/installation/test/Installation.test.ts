import { NodeFileSystem } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Installation } from "@kindling/installation"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

const tempDir = Effect.acquireRelease(
  Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "kindling-installation-"))),
  (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
)

describe("Installation", () => {
  it("finds the provided packages the composing package sees, and leaves out those it does not", () => {
    // This package depends on effect and @effect/platform, not on the driver or the protocol.
    const packages = Installation.make(import.meta).packages()
    assert.deepStrictEqual(packages.map((p) => p.name), ["effect", "@effect/platform"])
    for (const { name, root } of packages) {
      assert.strictEqual(JSON.parse(Fs.readFileSync(Path.join(root, "package.json"), "utf8")).name, name)
      assert.strictEqual(Fs.realpathSync(root), root)
    }
  })

  it("resolves entry modules through the resolver it was made from", () => {
    const installation = Installation.make({
      url: import.meta.url,
      resolve: (specifier) => `file:///installed/${specifier}.js`
    })
    assert.strictEqual(installation.resolveModule("@kindling/executor/main"), "/installed/@kindling/executor/main.js")
  })

  it.live("links the packages into a directory's node_modules, replacing what was there", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const installation = Installation.make(import.meta)
      Fs.mkdirSync(Path.join(dir, "node_modules", "effect"), { recursive: true })
      Fs.writeFileSync(Path.join(dir, "node_modules", "effect", "stale"), "")
      yield* Installation.link(installation, dir)
      yield* Installation.link(installation, dir)
      for (const { name, root } of installation.packages()) {
        const target = Path.join(dir, "node_modules", name)
        assert.isTrue(Fs.lstatSync(target).isSymbolicLink())
        assert.strictEqual(Fs.realpathSync(target), root)
      }
    }).pipe(Effect.scoped, Effect.provide(NodeFileSystem.layer)))

  it.live("a directory that cannot hold the links is a LinkFailed naming the path", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = Path.join(dir, "not-a-directory")
      Fs.writeFileSync(file, "")
      const error = yield* Effect.flip(Installation.link(Installation.make(import.meta), file))
      assert.strictEqual(error._tag, "LinkFailed")
      assert.include(error.message, Path.join(file, "node_modules", "effect"))
    }).pipe(Effect.scoped, Effect.provide(NodeFileSystem.layer)))
})
