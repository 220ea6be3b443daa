import * as Os from "node:os"
import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

const packages = fileURLToPath(new URL("./packages", import.meta.url))

// Tests import the workspace packages from their sources, so `pnpm test` never runs against a stale `dist/`
// (the same thing the `@kindling/source` export condition does for tsc and tsx).
// Every deadline of the suite is scaled by one factor (packages/protocol/src/Deadlines.ts): TEST_SLOWDOWN
// when set, otherwise measured here from the load on the machine as the suite starts — at least 2, as the suite's
// own test files load the machine too, and more for every process already waiting for a core. The test processes
// inherit it.
if (process.env.TEST_SLOWDOWN === undefined) {
  const waiting = Os.loadavg()[0]! / Os.availableParallelism()
  process.env.TEST_SLOWDOWN = (Math.round((2 + waiting) * 10) / 10).toString()
}
const slowdown = Math.max(1, Number(process.env.TEST_SLOWDOWN) || 1)

export default defineConfig({
  resolve: {
    alias: [
      { find: /^@kindling\/([a-z]+)$/, replacement: `${packages}/$1/src/index.ts` },
      // The one sub-path whose module is named otherwise (see its package.json's exports).
      { find: /^@kindling\/protocol\/records$/, replacement: `${packages}/protocol/src/Records.ts` },
      { find: /^@kindling\/([a-z]+)\/(.+)$/, replacement: `${packages}/$1/src/$2.ts` }
    ]
  },
  test: {
    include: ["test/**/*.test.ts"],
    setupFiles: [fileURLToPath(new URL("./vitest.setup.ts", import.meta.url))],
    testTimeout: 30_000 * slowdown,
    hookTimeout: 30_000 * slowdown
  }
})
