#!/usr/bin/env node
import * as ValidationError from "@effect/cli/ValidationError"
// The modules, not the barrel: the barrel loads HTTP, sockets and workers too, a good part of the start-up time.
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { NodeLogging } from "@kindling/kernel"
import * as Effect from "effect/Effect"
import { run } from "./Cli.js"

run(process.argv).pipe(
  // @effect/cli has already printed what was wrong with the command line; only the exit code is left to set.
  Effect.catchIf(ValidationError.isValidationError, () =>
    Effect.sync(() => {
      process.exitCode = 2
    })),
  Effect.provide(NodeContext.layer),
  Effect.provide(NodeLogging.layer),
  NodeRuntime.runMain({ disablePrettyLogger: true })
)
