// A defect in the driver's core (injected by wrapping the core, as `Shell.CoreWrapper` lets a test do) ends the
// driver as a defect must: every job fails with a typed error naming the internal failure, later jobs fail at
// once, and the app fails whatever its main does with those errors. (On a cluster the app also leaves its master
// and frees its cores: the simulated cluster's test of the same defect checks that.)
import { assert, describe, it } from "@effect/vitest"
import { JobFailed, Kindling } from "@kindling/app"
import { AppModule, LocalMode } from "@kindling/driver"
import { Defects } from "@kindling/kernel/testing"
import type { ClusterMessages } from "@kindling/protocol"
import { Cause, Effect, Exit } from "effect"
import { pathToFileURL } from "node:url"
import { driverConfig } from "./fixtures/driverConfig.js"

// The driver's core throws at the first task that finishes; every other role runs as it is.
const throwingDriver = Defects.injected(
  "CoarseGrainedScheduler",
  (tag, input) =>
    tag === "StatusUpdates" &&
    (input as { readonly message: ClusterMessages.StatusUpdates }).message.updates.some((u) => u.state === "FINISHED")
)

const local = () =>
  LocalMode.layer({
    appName: "defect",
    threads: 2,
    driver: driverConfig(1),
    heartbeatIntervalMillis: 10_000,
    validateState: true
  })

// The app that catches its jobs' failures, in local[2].
const forgivingApp = AppModule.run({
  url: pathToFileURL(new URL("./fixtures/forgivingApp.ts", import.meta.url).pathname).href,
  args: [],
  runtime: local
})

describe("a driver whose core fails", () => {
  it.live("fails its job with a typed internal error, and every later job at once", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      const first = yield* Effect.flip(kc.range(0, 100, 1, 2).count())
      assert.instanceOf(first, JobFailed)
      assert.isTrue(first.internal)
      assert.include(first.reason, "the driver stopped on an internal error")
      assert.include(first.reason, "injected defect at StatusUpdates")
      const second = yield* Effect.flip(kc.parallelize([1, 2, 3]).collect())
      assert.isTrue(second instanceof JobFailed && second.internal === true)
      assert.include(yield* kc.fatalError, "injected defect")
    }).pipe(Effect.provide(local()), throwingDriver))

  it.live("fails its app even when the app's main catches its jobs' failures", () =>
    Effect.gen(function*() {
      const exit = yield* forgivingApp
      assert.isTrue(Exit.isFailure(exit))
      const error = Exit.isFailure(exit) ? Cause.failureOption(exit.cause) : undefined
      assert.isTrue(error?._tag === "Some" && error.value instanceof JobFailed && error.value.internal === true)
      assert.include(AppModule.describe((exit as Exit.Failure<unknown, unknown>).cause), "internal error")
    }).pipe(throwingDriver))

  it.live("an app whose driver is sound runs the same program to success", () =>
    Effect.map(forgivingApp, (exit) => assert.isTrue(Exit.isSuccess(exit))))

  // The local executor is the app's only one: when it stops on a defect of its own, no job can end, so they fail
  // (they used to wait for an executor that would never come).
  it.live("a local executor that stops on a defect fails the jobs, which do not wait for another", () =>
    Effect.gen(function*() {
      const kc = yield* Kindling
      const failed = yield* Effect.flip(kc.range(0, 100, 1, 2).count())
      assert.instanceOf(failed, JobFailed)
      assert.include(failed.reason, "The local executor stopped")
      assert.include(failed.reason, "injected defect at LaunchTasks")
      const next = yield* Effect.flip(kc.parallelize([1, 2, 3]).collect())
      assert.include(next.reason, "The local executor stopped")
    }).pipe(Effect.provide(local()), Defects.injected("Executor", (tag) => tag === "LaunchTasks")))
})
