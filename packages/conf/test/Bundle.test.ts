import { assert, describe, it } from "@effect/vitest"
import { build } from "esbuild"
import { fileURLToPath } from "node:url"

const bundle = (entry: string) =>
  build({
    entryPoints: [fileURLToPath(new URL(`../src/${entry}.ts`, import.meta.url))],
    bundle: true,
    platform: "browser",
    format: "esm",
    write: false,
    logLevel: "silent",
    metafile: true
  })

describe("@kindling/conf's main entry", () => {
  it("bundles for the browser: it imports no node: module, so the SDK's main entry can declare keys", async () => {
    const result = await bundle("index")
    assert.strictEqual(result.errors.length, 0)
    const inputs = Object.keys(result.metafile.inputs)
    assert.deepStrictEqual(inputs.filter((input) => input.startsWith("node:")), [])
  }, 60_000)

  it("the loader is only under @kindling/conf/node", async () => {
    const result = await bundle("node").then(() => "bundled", (error: Error) => error.message)
    assert.include(result, "node:fs")
  }, 60_000)
})
