import { assert, describe, it } from "@effect/vitest"
import { LocalFiles, ObjectStore } from "@kindling/data"
import { Evaluation, TaskContext } from "@kindling/executor"
import { Records } from "@kindling/protocol"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

describe("Evaluation", () => {
  it("a part of saveAsTextFile that cannot be written fails its task with a DiskError naming the file", () => {
    const localDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "kindling-evaluation-test-"))
    try {
      // The output directory lies under a regular file: ENOTDIR, even for root.
      Fs.writeFileSync(Path.join(localDir, "file"), "x")
      const dir = Path.join(localDir, "file", "out")
      const context = TaskContext.fromInputs(
        { localDir, spillThreshold: 1 << 20, objectStore: ObjectStore.settingsOf({}), shuffleInputs: [], cached: [] },
        LocalFiles.files,
        { stageId: 0, stageAttemptNumber: 0, partitionId: 0, attemptNumber: 0, taskAttemptId: 0 }
      )
      const outcome = Records.decode(
        Evaluation.outcomeOf(
          {
            plan: { _tag: "Slice", items: ["a", "b"] },
            result: { _tag: "SaveAs", dir, file: "part-00000", format: { _tag: "Text" } }
          },
          new Evaluation.Functions(() => undefined),
          context
        ).bytes
      ) as { readonly _tag: string; readonly className: string; readonly message: string }
      assert.strictEqual(outcome._tag, "TaskFailure")
      assert.strictEqual(outcome.className, "DiskError")
      assert.match(outcome.message, /^ENOTDIR: not a directory, mkdir '(.*)'$/)
      assert.isTrue(outcome.message.includes(`${dir}/_temporary`), outcome.message)
    } finally {
      Fs.rmSync(localDir, { recursive: true, force: true })
    }
  })
})
