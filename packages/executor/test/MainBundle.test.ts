// What an executor process loads before it registers: its bundle (`dist/main.js`, built from the packages'
// sources) holds none of the messages only the master, the workers and the clients exchange, whose schema
// classes would each be built as it starts.
import { assert, describe, it } from "@effect/vitest"
import * as Esbuild from "esbuild"
import { fileURLToPath } from "node:url"

const executorDir = fileURLToPath(new URL("..", import.meta.url))

describe("the executor's bundle", () => {
  it("leaves out the messages of the other roles", { timeout: 60_000 }, async () => {
    const built = await Esbuild.build({
      absWorkingDir: executorDir,
      entryPoints: ["src/main.ts"],
      outfile: "main.js",
      write: false,
      bundle: true,
      format: "esm",
      platform: "node",
      target: "node20",
      conditions: ["@kindling/source"],
      external: ["@bokuweb/zstd-wasm"],
      logLevel: "silent",
      metafile: true
    })
    const bundled = Object.keys(Object.values(built.metafile.outputs)[0]!.inputs)
    assert.isTrue(bundled.some((input) => input.endsWith("protocol/src/ClusterMessages.ts")))
    for (const messages of ["WorkerMessages", "SubmissionMessages", "AppClientMessages", "QueryMessages"]) {
      assert.isFalse(bundled.some((input) => input.endsWith(`protocol/src/${messages}.ts`)), messages)
    }
  })
})
