#!/usr/bin/env node
// `kindling --version` is answered before anything else is loaded (the command's modules take most of its start-up);
// everything else is the command proper (`main.ts`).
import * as Release from "./Release.js"

if (process.argv.length === 3 && process.argv[2] === "--version") {
  process.stdout.write(`${Release.describe(Release.current())}\n`)
} else {
  await import("./main.js")
}
