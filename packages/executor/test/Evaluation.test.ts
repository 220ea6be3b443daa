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

  it("a task needs the app module when it calls its functions or may read records of its classes, not otherwise", () => {
    const slice = { _tag: "Slice", items: [{ _tag: "NamedFunction", name: "a record, not a function" }] } as const
    const closure = { _tag: "ClosureFunction", id: "app.ts:1:1", captured: {}, functions: {}, env: undefined } as const
    const needs = (task: Evaluation.Task) => Evaluation.needsAppModule(task)
    // Records of its own, functions as source text: nothing of the module.
    assert.isFalse(needs({ plan: slice, result: { _tag: "Count" } }))
    assert.isFalse(needs({
      plan: { _tag: "Map", fn: { _tag: "SourceFunction", source: "(x) => x", env: null }, child: slice },
      result: { _tag: "Collect" }
    }))
    // A function of the module, however deep in the plan or its result.
    assert.isTrue(needs({ plan: { _tag: "Filter", fn: closure, child: slice }, result: { _tag: "Count" } }))
    assert.isTrue(needs({ plan: slice, result: { _tag: "Aggregate", zero: 0, seqOp: closure } }))
    // Records made elsewhere, which may be of the module's classes.
    const shuffle = { shuffleId: 0, token: "t" }
    assert.isTrue(needs({
      plan: { _tag: "ShuffleRead", shuffle, reduceId: 0, read: { _tag: "Records" } },
      result: { _tag: "Collect" }
    }))
    assert.isTrue(needs({
      plan: { _tag: "Glom", child: { _tag: "Cached", rddId: 1, partition: 0, level: "MEMORY_ONLY", child: slice } },
      result: { _tag: "Count" }
    }))
  })
})
