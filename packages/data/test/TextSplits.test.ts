import { assert, describe, it } from "@effect/vitest"
import { LocalFiles, TextSplits } from "@kindling/data"
import { FastCheck as fc } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

describe("TextSplits", () => {
  it("however a file is cut into byte ranges, every line is read exactly once, in order", () => {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "kindling-splits-"))
    const file = Path.join(dir, "input.txt")
    try {
      fc.assert(
        fc.property(
          fc.array(fc.stringMatching(/^[a-z é]{0,12}$/), { maxLength: 30 }),
          fc.constantFrom("\n", "\r\n"),
          fc.boolean(),
          fc.array(fc.nat(), { maxLength: 8 }),
          (lines, terminator, finalNewline, cuts) => {
            const text = lines.join(terminator) + (finalNewline && lines.length > 0 ? terminator : "")
            Fs.writeFileSync(file, text)
            const size = Fs.statSync(file).size
            const bounds = [...new Set([0, ...cuts.map((c) => (size === 0 ? 0 : c % (size + 1))), size])].sort((a, b) =>
              a - b
            )
            const read: Array<string> = []
            for (let i = 0; i + 1 < bounds.length; i++) {
              read.push(...TextSplits.lines(LocalFiles.files, file, bounds[i]!, bounds[i + 1]! - bounds[i]!))
            }
            // A trailing terminator ends the last line; it does not start an empty one.
            const expected = text.split(terminator)
            if (expected.at(-1) === "") expected.pop()
            assert.deepStrictEqual(read, expected)
          }
        ),
        { numRuns: 300 }
      )
    } finally {
      Fs.rmSync(dir, { recursive: true })
    }
  })
})
