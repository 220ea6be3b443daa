import { assert, describe, it } from "@effect/vitest"
import { build } from "esbuild"
import { fileURLToPath } from "node:url"

describe("@kindling/protocol's main entry", () => {
  it("bundles for the browser: it imports no node: module", async () => {
    const result = await build({
      entryPoints: [fileURLToPath(new URL("../src/index.ts", import.meta.url))],
      bundle: true,
      platform: "browser",
      format: "esm",
      // Sibling packages from their sources, as the tests see them (no build needed).
      conditions: ["@kindling/source"],
      write: false,
      logLevel: "silent",
      metafile: true
    })
    assert.strictEqual(result.errors.length, 0)
    const inputs = Object.keys(result.metafile.inputs)
    assert.isFalse(
      inputs.some((input) => input.startsWith("node:")),
      inputs.filter((i) => i.startsWith("node:")).join()
    )
    assert.isTrue(inputs.some((input) => input.includes("msgpackr")))
  }, 60_000)

  it("the TCP transport is only under @kindling/protocol/node", async () => {
    const result = await build({
      entryPoints: [fileURLToPath(new URL("../src/node.ts", import.meta.url))],
      bundle: true,
      platform: "browser",
      format: "esm",
      write: false,
      logLevel: "silent"
    }).then(
      () => "bundled",
      // Every error, not the message's first few: the entry needs several node: modules besides node:net.
      (error: { readonly errors: ReadonlyArray<{ readonly text: string }> }) =>
        error.errors.map((e) => e.text).join("\n")
    )
    assert.include(result, "node:net")
  }, 60_000)
})
