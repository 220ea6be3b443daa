/**
 * The SDK's node-free entries bundle for the browser with a real bundler, and the Node adapters do not: the
 * module-graph check in Architecture.test.ts says no `node:` import is reached, this says a browser build works.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deadlines } from "@kindling/protocol/testing"
import { build } from "esbuild"
import { fileURLToPath } from "node:url"

const bundleForBrowser = (entry: string) =>
  build({
    entryPoints: [fileURLToPath(new URL(`../packages/${entry}`, import.meta.url))],
    bundle: true,
    platform: "browser",
    format: "esm",
    // Sibling packages from their sources, as the tests see them (no build needed).
    conditions: ["@kindling/source"],
    write: false,
    logLevel: "silent",
    metafile: true
  })

describe("the SDK in a browser", () => {
  for (const entry of ["protocol/src/index.ts", "rpc/src/index.ts"]) {
    it(`${entry} bundles for the browser: it imports no node: module`, async () => {
      const result = await bundleForBrowser(entry)
      assert.strictEqual(result.errors.length, 0)
      const inputs = Object.keys(result.metafile.inputs)
      assert.isFalse(
        inputs.some((input) => input.startsWith("node:")),
        inputs.filter((i) => i.startsWith("node:")).join()
      )
      assert.isTrue(inputs.some((input) => input.includes("msgpackr")))
    }, Deadlines.scaled(60_000))
  }

  it("the TCP transport is only under @kindling/rpc/node", async () => {
    const result = await bundleForBrowser("rpc/src/node.ts").then(
      () => "bundled",
      // Every error, not the message's first few: the entry needs several node: modules besides node:net.
      (error: { readonly errors: ReadonlyArray<{ readonly text: string }> }) =>
        error.errors.map((e) => e.text).join("\n")
    )
    assert.include(result, "node:net")
  }, Deadlines.scaled(60_000))
})
