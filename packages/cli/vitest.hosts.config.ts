// `pnpm test:hosts` (opt-in, as root): the binary distribution installed on three hosts (network namespaces, each
// with an OpenSSH server and a copy of its own) and operated over SSH, as an operator runs a cluster. Not in CI: it
// takes minutes.
import { defineConfig } from "vitest/config"
import shared from "../../vitest.shared.js"

export default defineConfig({
  ...shared,
  root: import.meta.dirname,
  test: {
    ...shared.test,
    include: ["test/**/*.hosts.ts"],
    maxWorkers: 1,
    minWorkers: 1
  }
})
