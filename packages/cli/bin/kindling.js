#!/usr/bin/env node
// The `kindling` command: the build's entry, from a file of its own that is in the package before any build, so
// that installing a fresh clone links the command without a warning; until `pnpm build` it says what to do.
import { existsSync } from "node:fs"
import { fileURLToPath } from "node:url"

const entry = new URL("../dist/bin.js", import.meta.url)
if (!existsSync(entry)) {
  process.stderr.write(`kindling: ${fileURLToPath(entry)} is not built yet; run 'pnpm build'\n`)
  process.exit(1)
}
await import(entry.href)
