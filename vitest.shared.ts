import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

const packages = fileURLToPath(new URL("./packages", import.meta.url))

// Tests import the workspace packages from their sources, so `pnpm test` never runs against a stale `dist/`
// (the same thing the `@kindling/source` export condition does for tsc and tsx).
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
    testTimeout: 30_000,
    hookTimeout: 30_000
  }
})
