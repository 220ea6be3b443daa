// `pnpm test:partitions`: the partition tests that `pnpm test` runs, and the matrix of cuts it leaves out for their
// length (some twenty minutes). One file at a time: the matrix's cuts are timed.
import { defineConfig } from "vitest/config"
import shared from "../../vitest.shared.js"

export default defineConfig({
  ...shared,
  root: import.meta.dirname,
  test: {
    ...shared.test,
    include: ["test/Partitions.test.ts", "test/**/*.partitions.ts"],
    maxWorkers: 1,
    minWorkers: 1
  }
})
