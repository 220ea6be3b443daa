#!/usr/bin/env node
import * as ValidationError from "@effect/cli/ValidationError"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import * as Effect from "effect/Effect"
import { run } from "./Cli.js"
import { logging } from "./Settings.js"

// `kindling submit [options] APP [ARGS…]`: everything after APP belongs to the app, even what looks like an
// option, as with spark-submit. @effect/cli stops reading options at `--`, so one goes in after APP.
const submitOptionsWithValue = new Set([
  "--master",
  "--deploy-mode",
  "--name",
  "--driver-cores",
  "--driver-memory",
  "--conf",
  "--properties-file"
])
const separateAppArgs = (argv: ReadonlyArray<string>): ReadonlyArray<string> => {
  const command = argv.indexOf("submit", 2)
  if (command !== 2 || argv.includes("--")) return argv
  for (let i = command + 1; i < argv.length; i++) {
    const token = argv[i]!
    if (submitOptionsWithValue.has(token)) i++
    else if (!token.startsWith("-")) return [...argv.slice(0, i + 1), "--", ...argv.slice(i + 1)]
  }
  return argv
}

run(separateAppArgs(process.argv)).pipe(
  // @effect/cli has already printed what was wrong with the command line; only the exit code is left to set.
  Effect.catchIf(ValidationError.isValidationError, () =>
    Effect.sync(() => {
      process.exitCode = 2
    })),
  Effect.provide(NodeContext.layer),
  Effect.provide(logging),
  NodeRuntime.runMain({ disablePrettyLogger: true })
)
