import { defineConfig } from "vitest/config"
import shared from "./vitest.shared.js"

// The tests `pnpm test:mutation` (stryker.config.mjs) runs against each mutant: the mutated modules' own tests
// only, and those MUTATION_TESTS names (comma-separated) for a core looked at alone. They need no socket, process
// or service, so a mutant is judged in a second or two; the package suites' other files would slow every mutant
// down without reading these modules.
export default defineConfig({
  ...shared,
  test: {
    ...shared.test,
    include: [
      "packages/driver/test/{TaskScheduler,ExecutorAllocation}.test.ts",
      "packages/data/test/{Csv,FieldValues}.test.ts",
      ...(process.env.MUTATION_TESTS?.split(",") ?? [])
    ]
  }
})
