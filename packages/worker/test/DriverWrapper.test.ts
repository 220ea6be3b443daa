import { assert, describe, it } from "@effect/vitest"
import { Deadlines } from "@kindling/protocol/testing"
import { Effect } from "effect"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { resolveFixture, tempDir } from "./fixtures/support.js"

const root = fileURLToPath(new URL("../../..", import.meta.url))

// Runs the wrapper from its sources, as a worker would run the built one, with a bound on how long it may take.
const wrapper = (appPath: string, args: ReadonlyArray<string> = []) =>
  Effect.async<{ readonly code: number | null; readonly stderr: string }>((resume) => {
    const child = ChildProcess.execFile(
      process.execPath,
      [
        "--conditions=@kindling/source",
        "--import",
        "tsx",
        "packages/worker/src/DriverWrapper.ts",
        "kindling://Worker@127.0.0.1:7078",
        appPath,
        ...args
      ],
      { cwd: root, timeout: 15_000 },
      (_error, _stdout, stderr) => resume(Effect.succeed({ code: child.exitCode, stderr }))
    )
  })

describe("DriverWrapper", () => {
  it.scopedLive("runs the default export with the app arguments and exits with 0", () =>
    Effect.gen(function*() {
      const out = Path.join(yield* tempDir, "out.txt")
      const { code, stderr } = yield* wrapper(resolveFixture("app-writes"), [out, "written by the app"])
      assert.strictEqual(stderr, "")
      assert.strictEqual(code, 0)
      assert.strictEqual(Fs.readFileSync(out, "utf8"), "written by the app")
    }), Deadlines.scaled(20_000))

  it.live("exits with 1 and prints the error when the program throws", () =>
    Effect.gen(function*() {
      const { code, stderr } = yield* wrapper(resolveFixture("app-throws"))
      assert.strictEqual(code, 1)
      assert.include(stderr, "Error: boom from the app")
      assert.include(stderr, "app-throws.mjs")
    }), Deadlines.scaled(20_000))

  it.live("exits with 1 and says what is wrong when there is no default export function", () =>
    Effect.gen(function*() {
      const app = resolveFixture("app-no-default")
      const { code, stderr } = yield* wrapper(app)
      assert.strictEqual(code, 1)
      assert.strictEqual(
        stderr,
        `The app module ${app} must have a default export that is a function ` +
          "(args: ReadonlyArray<string>) => void | Promise<void>; it has none\n"
      )
    }), Deadlines.scaled(20_000))

  it.live("exits with 1 when the app module cannot be loaded", () =>
    Effect.gen(function*() {
      const { code, stderr } = yield* wrapper("/nowhere/app.mjs")
      assert.strictEqual(code, 1)
      assert.include(stderr, "Cannot load the app module /nowhere/app.mjs")
    }), Deadlines.scaled(20_000))
})
