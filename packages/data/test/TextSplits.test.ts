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

  it("lines across the ends of the 1 MiB chunks a file is read in, and lines longer than a chunk, are read whole", () => {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "kindling-splits-"))
    const file = Path.join(dir, "input.txt")
    try {
      fc.assert(
        fc.property(
          fc.array(fc.oneof(fc.nat(300_000), fc.constantFrom(0, 1_048_575, 1_048_576, 1_500_000)), {
            minLength: 1,
            maxLength: 8
          }),
          fc.constantFrom("\n", "\r\n"),
          fc.array(fc.nat(), { maxLength: 3 }),
          (lengths, terminator, cuts) => {
            const lines = lengths.map((length, i) => `${i}é${"ab".repeat(length >> 1)}`)
            const text = lines.join(terminator) + terminator
            Fs.writeFileSync(file, text)
            const size = Fs.statSync(file).size
            const bounds = [...new Set([0, ...cuts.map((c) => c % (size + 1)), size])].sort((a, b) => a - b)
            const read: Array<string> = []
            for (let i = 0; i + 1 < bounds.length; i++) {
              read.push(...TextSplits.lines(LocalFiles.files, file, bounds[i]!, bounds[i + 1]! - bounds[i]!))
            }
            assert.deepStrictEqual(read, lines)
            // One split of the whole file uses all of its bytes and gives all of its lines.
            let tally: TextSplits.Tally | undefined
            for (const _ of TextSplits.lineBatches(LocalFiles.files, file, 0, size, (done) => (tally = done))) {
              // read to the end
            }
            assert.deepStrictEqual(tally, { bytes: size, records: lines.length })
          }
        ),
        { numRuns: 25 }
      )
    } finally {
      Fs.rmSync(dir, { recursive: true })
    }
  })
})
