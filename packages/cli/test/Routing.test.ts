// Which build of the command serves a command line: the bundle for the commands that run no app in this process,
// the built modules for everything else (an app run here must share `effect` and `@kindling/*` with the driver).
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Routing from "../src/Routing.js"
import { run } from "./fixtures/cluster.js"

describe("Routing.bundleServes", () => {
  it("the bundle serves status, kill, decommission, help and a submission to the cluster", () => {
    for (
      const line of [
        [],
        ["--help"],
        ["help"],
        ["status", "--master", "kindling://h:7077"],
        ["kill", "driver-1", "--master", "kindling://h:7077"],
        ["decommission", "worker-1"],
        ["submit", "--master", "kindling://h:7077", "--deploy-mode", "cluster", "app.ts"],
        ["submit", "--deploy-mode=cluster", "app.ts"]
      ]
    ) assert.isTrue(Routing.bundleServes(line), line.join(" "))
  })

  it("the roles, and a submission that may run its app here, run unbundled", () => {
    for (
      const line of [
        ["master"],
        ["worker", "kindling://h:7077"],
        ["history"],
        ["conformance"],
        ["submit", "--master", "local[2]", "app.ts"],
        ["submit", "--master", "kindling://h:7077", "app.ts"],
        ["submit", "--master", "kindling://h:7077", "--deploy-mode", "client", "app.ts"],
        // What follows the app is the app's own.
        ["submit", "--master", "local[2]", "app.ts", "--deploy-mode", "cluster"],
        ["submit", "--wait", "app.ts", "--deploy-mode=cluster"],
        ["submit", "--name", "--deploy-mode", "app.ts"]
      ]
    ) assert.isFalse(Routing.bundleServes(line), line.join(" "))
  })
})

describe("Routing.submitFlags", () => {
  it.live("are the options of kindling submit that take no value, as its help shows them", () =>
    Effect.gen(function*() {
      const help = yield* run(["submit", "--help"])
      assert.strictEqual(help.code, 0, help.stderr)
      const usage = help.stdout.split("\n").find((line) => line.includes("[--master"))!
      const flags = [...usage.matchAll(/\[(--[a-z-]+)\]/g)].map((match) => match[1]!)
      assert.isNotEmpty(flags)
      for (const flag of flags) assert.isTrue(Routing.submitFlags.has(flag), flag)
      // Every option with a value shows it: none of those is taken for a flag.
      for (const option of usage.matchAll(/\[(--[a-z-]+) [^\]]+\]/g)) {
        assert.isFalse(Routing.submitFlags.has(option[1]!), option[1])
      }
    }))
})
