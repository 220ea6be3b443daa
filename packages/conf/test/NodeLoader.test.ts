import { assert, describe, it } from "@effect/vitest"
import { NodeLoader } from "@kindling/conf/node"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { registry, resources, timing } from "./fixtures/keys.js"

const temporaryDirectory = Effect.acquireRelease(
  Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "kindling-conf-"))),
  (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
)

const write = (file: string, text: string) => {
  Fs.mkdirSync(Path.dirname(file), { recursive: true })
  Fs.writeFileSync(file, text)
  return file
}

const problemsOf = (options: NodeLoader.Options) =>
  NodeLoader.load(registry, options).pipe(
    Effect.flip,
    Effect.map((error) => error.problems)
  )

describe("NodeLoader", () => {
  it.scoped("reads kindling-defaults.conf from KINDLING_CONF_DIR, else from KINDLING_HOME/conf", () =>
    Effect.gen(function*() {
      const dir = yield* temporaryDirectory
      write(Path.join(dir, "confdir", "kindling-defaults.conf"), "kindling.example.cores 2\n")
      write(Path.join(dir, "home", "conf", "kindling-defaults.conf"), "kindling.example.cores 3\n")
      const fromConfDir = yield* NodeLoader.load(registry, {
        env: { KINDLING_CONF_DIR: Path.join(dir, "confdir"), KINDLING_HOME: Path.join(dir, "home") }
      })
      assert.strictEqual(fromConfDir.get(resources.cores), 2)
      const fromHome = yield* NodeLoader.load(registry, { env: { KINDLING_HOME: Path.join(dir, "home") } })
      assert.strictEqual(fromHome.get(resources.cores), 3)
      assert.strictEqual(
        fromHome.entries.find((entry) => entry.key === "kindling.example.cores")?.source,
        Path.join(dir, "home", "conf", "kindling-defaults.conf")
      )
    }))

  it.scoped("a missing defaults file is no problem; a missing --properties-file is", () =>
    Effect.gen(function*() {
      const dir = yield* temporaryDirectory
      const conf = yield* NodeLoader.load(registry, { env: { KINDLING_CONF_DIR: dir } })
      assert.strictEqual(conf.get(timing.timeout), 60_000)
      const missing = Path.join(dir, "missing.conf")
      const problems = yield* problemsOf({ env: { KINDLING_CONF_DIR: dir }, propertiesFile: missing })
      assert.deepStrictEqual(problems, [{ _tag: "UnreadableFile", source: missing, reason: "it does not exist" }])
    }))

  it.scoped("--properties-file replaces the defaults file", () =>
    Effect.gen(function*() {
      const dir = yield* temporaryDirectory
      write(Path.join(dir, "kindling-defaults.conf"), "kindling.example.cores 2\nkindling.example.maxRetries 1\n")
      const file = write(Path.join(dir, "other.conf"), "kindling.example.cores 5\n")
      const conf = yield* NodeLoader.load(registry, { env: { KINDLING_CONF_DIR: dir }, propertiesFile: file })
      assert.strictEqual(conf.get(resources.cores), 5)
      assert.strictEqual(conf.get(resources.retries), 10)
    }))

  it.scoped("file < environment < --conf < flags, key by key", () =>
    Effect.gen(function*() {
      const dir = yield* temporaryDirectory
      const file = write(
        Path.join(dir, "kindling-defaults.conf"),
        "kindling.example.timeout 1s\nkindling.example.maxRetries 1\nkindling.example.cores 1\nkindling.example.name f\n"
      )
      const conf = yield* NodeLoader.load(registry, {
        env: {
          KINDLING_CONF_DIR: dir,
          KINDLING_EXAMPLE_TIMEOUT: "2s",
          KINDLING_EXAMPLE_MAXRETRIES: "2",
          KINDLING_EXAMPLE_CORES: "2"
        },
        conf: ["kindling.example.timeout=3s", "kindling.example.maxRetries=3"],
        flags: { "kindling.example.timeout": "4s", "kindling.example.ui.port": undefined }
      })
      assert.strictEqual(conf.get(resources.name), "f")
      assert.strictEqual(conf.get(resources.cores), 2)
      assert.strictEqual(conf.get(resources.retries), 3)
      assert.strictEqual(conf.get(timing.timeout), 4_000)
      assert.strictEqual(conf.get(resources.uiPort), 8080)
      const sources = Object.fromEntries(conf.entries.map((entry) => [entry.key, entry.source]))
      assert.strictEqual(sources["kindling.example.name"], file)
      assert.strictEqual(sources["kindling.example.cores"], "environment")
      assert.strictEqual(sources["kindling.example.maxRetries"], "--conf")
      assert.strictEqual(sources["kindling.example.timeout"], "command-line flags")
    }))

  it.scoped("reports the problems of every source together, each where it was set", () =>
    Effect.gen(function*() {
      const dir = yield* temporaryDirectory
      const file = write(Path.join(dir, "kindling-defaults.conf"), "kindling.example.timeout abc\n=x\n")
      const problems = yield* problemsOf({ env: { KINDLING_CONF_DIR: dir }, conf: ["novalue"] })
      assert.deepStrictEqual(problems, [
        { _tag: "MalformedEntry", source: file, line: 2, text: "=x" },
        { _tag: "MalformedEntry", source: "--conf", text: "novalue" }
      ])
      Fs.writeFileSync(file, "kindling.example.timeout abc\n")
      const unknownAndInvalid = yield* problemsOf({
        env: { KINDLING_CONF_DIR: dir, KINDLING_EXAMPLE_TIMOUT: "1s" },
        conf: ["kindling.example.cores=0"]
      })
      assert.deepStrictEqual(unknownAndInvalid.map((p) => [p._tag, "source" in p ? p.source : undefined]), [
        ["InvalidValue", file],
        ["UnknownKey", "environment"],
        ["InvalidValue", "--conf"]
      ])
    }))

  it.scoped("unknown keys fail by default and are skipped with unknownKeys: ignore", () =>
    Effect.gen(function*() {
      const dir = yield* temporaryDirectory
      write(Path.join(dir, "kindling-defaults.conf"), "kindling.other.role 1\nkindling.example.cores 4\n")
      const options = { env: { KINDLING_CONF_DIR: dir, KINDLING_OTHER_KEY: "x" }, conf: ["kindling.other.flag=y"] }
      const refused = yield* problemsOf(options)
      assert.deepStrictEqual(refused.map((p) => p._tag), ["UnknownKey", "UnknownKey", "UnknownKey"])
      const conf = yield* NodeLoader.load(registry, { ...options, unknownKeys: "ignore" })
      assert.strictEqual(conf.get(resources.cores), 4)
    }))

  it("the defaults file is under KINDLING_HOME, else the current directory", () => {
    assert.strictEqual(
      NodeLoader.defaultsFile({ KINDLING_HOME: "/opt/kindling" }),
      "/opt/kindling/conf/kindling-defaults.conf"
    )
    assert.strictEqual(NodeLoader.defaultsFile({}), Path.join(process.cwd(), "conf", "kindling-defaults.conf"))
    assert.strictEqual(NodeLoader.home({}), process.cwd())
  })
})
