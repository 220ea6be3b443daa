import { defineConfig } from "vitest/config"

// Tests import sibling packages from their sources (the `@kindling/source` export condition),
// so `pnpm test` never depends on a stale `dist/`.
export default defineConfig({
  resolve: { conditions: ["@kindling/source"] },
  test: {
    include: ["test/**/*.test.ts"],
    setupFiles: [new URL("./vitest.setup.ts", import.meta.url).pathname],
    testTimeout: 30_000,
    hookTimeout: 30_000
  }
})
