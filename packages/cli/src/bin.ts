#!/usr/bin/env node
// `kindling --version` is answered before anything else is loaded (the command's modules take most of its start-up);
// everything else is the command proper (`main.ts`), loaded as it is built or, for the commands that run no app in
// this process, as one bundle of it (`dist/commands/`, see tsup.config.ts), which starts several times quicker.
import * as Fs from "node:fs"
import { fileURLToPath } from "node:url"
import * as Release from "./Release.js"
import * as Routing from "./Routing.js"

const args = process.argv.slice(2)
const bundle = new URL("./commands/commands.js", import.meta.url)
if (args.length === 1 && args[0] === "--version") {
  process.stdout.write(`${Release.describe(Release.current())}\n`)
} else if (Routing.bundleServes(args) && Fs.existsSync(fileURLToPath(bundle))) {
  await import(bundle.href)
} else {
  await import("./main.js")
}
