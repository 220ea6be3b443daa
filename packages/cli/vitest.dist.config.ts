// `pnpm test:dist`: the binary distribution unpacked and run as an operator runs it on one host (CI runs it after
// `pnpm dist` has made the tarball).
import { defineConfig } from "vitest/config"
import shared from "../../vitest.shared.js"

export default defineConfig({
  ...shared,
  root: import.meta.dirname,
  test: {
    ...shared.test,
    include: ["test/**/*.dist.ts"],
    maxWorkers: 1,
    minWorkers: 1
  }
})
