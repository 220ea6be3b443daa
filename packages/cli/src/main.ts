// The `kindling` command, once `bin.ts` has found that it is asked for more than its version.
import * as ValidationError from "@effect/cli/ValidationError"
// The modules, not the barrel: the barrel loads HTTP, sockets and workers too, a good part of the start-up time.
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import type { Teardown } from "@effect/platform/Runtime"
import { DiskOperations, NodeLogging } from "@kindling/kernel"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { run } from "./Cli.js"

// A reader that goes away (`kindling … | head`) makes writes to its pipe fail with EPIPE: the command stops as it
// would on SIGTERM — what it runs is interrupted and cleans up (a local cluster's folders, executors) — rather
// than die of the unhandled error with all of it left behind. Later writes to the closed pipe are dropped.
let readerGone = false
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error
    if (readerGone) return
    readerGone = true
    process.kill(process.pid, "SIGTERM")
  })
}

// A command stopped by a signal exits with the shell's code for it (130, 143), so a script does not take a submit it
// stopped for one that succeeded; a service sets its own code (0) as it stops. Effect's default would be 0 for both.
let signalled: number | undefined
process.once("SIGINT", () => (signalled ??= 130))
process.once("SIGTERM", () => (signalled ??= 143))
const teardown: Teardown = (exit, onExit) => {
  if (Exit.isFailure(exit) && !Cause.isInterruptedOnly(exit.cause)) return onExit(1)
  const set = typeof process.exitCode === "number" ? process.exitCode : undefined
  onExit(set ?? (Exit.isFailure(exit) ? signalled ?? 0 : 0))
}

run(process.argv).pipe(
  // @effect/cli has already printed what was wrong with the command line; only the exit code is left to set.
  Effect.catchIf(ValidationError.isValidationError, () =>
    Effect.sync(() => {
      process.exitCode = 2
    })),
  // Every directory made the way nodes make them (see `DiskOperations.nodeFileSystem`).
  Effect.provide(DiskOperations.nodeFileSystem),
  Effect.provide(NodeContext.layer),
  Effect.provide(NodeLogging.layer),
  NodeRuntime.runMain({ disablePrettyLogger: true, teardown })
)
