import { assert, describe } from "@effect/vitest"
import { Runners } from "@kindling/worker"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { installation, live, tempDir } from "./fixtures/support.js"

describe("Runners", () => {
  live("a work dir sweep that cannot read the work dir fails with a DiskError naming it", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const workDir = Path.join(dir, "work")
      const runners = yield* Runners.makeProcesses({
        workDir,
        localDir: Path.join(dir, "local"),
        driverTerminateTimeoutMillis: 1000,
        executorTerminateTimeoutMillis: 1000,
        installation: installation()
      })
      // The work dir replaced by a regular file: ENOTDIR, even for root (whom a read-only directory would not stop).
      Fs.rmSync(workDir, { recursive: true })
      Fs.writeFileSync(workDir, "")
      const error = yield* Effect.flip(runners.cleanupWorkDir([], 0))
      assert.strictEqual(error._tag, "DiskError")
      assert.deepInclude(error, { operation: "list", path: workDir, code: "ENOTDIR" })
      assert.strictEqual(error.message, `ENOTDIR: not a directory, list '${workDir}'`)
    }))
})
