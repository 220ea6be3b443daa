#!/usr/bin/env node
import * as ValidationError from "@effect/cli/ValidationError"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import * as Effect from "effect/Effect"
import { run } from "./Cli.js"
import { logging } from "./Settings.js"

run(process.argv).pipe(
  // @effect/cli has already printed what was wrong with the command line; only the exit code is left to set.
  Effect.catchIf(ValidationError.isValidationError, () =>
    Effect.sync(() => {
      process.exitCode = 2
    })),
  Effect.provide(NodeContext.layer),
  Effect.provide(logging),
  NodeRuntime.runMain({ disablePrettyLogger: true })
)
