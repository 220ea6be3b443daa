import { assert, describe, it } from "@effect/vitest"
import { Directories } from "@kindling/installation"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

const codeOf = (run: () => void): { readonly code: unknown; readonly message: string } => {
  try {
    run()
  } catch (error) {
    return { code: (error as NodeJS.ErrnoException).code, message: (error as Error).message }
  }
  return assert.fail("no error")
}

describe("Directories.makeSync", () => {
  it("makes the missing parents, and an existing directory is no failure", () => {
    const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "kindling-directories-"))
    try {
      const deep = Path.join(root, "a", "b", "c")
      Directories.makeSync(deep)
      Directories.makeSync(deep)
      assert.isTrue(Fs.statSync(deep).isDirectory())
    } finally {
      Fs.rmSync(root, { recursive: true })
    }
  })

  // Node 20's recursive mkdir never returns here, at full CPU: mkdir in /proc fails with ENOENT though /proc exists.
  it("under /proc, where no directory can be made, fails at once with ENOENT naming /proc", () => {
    const failed = codeOf(() => Directories.makeSync("/proc/kindling-test/deeper"))
    assert.strictEqual(failed.code, "ENOENT")
    assert.strictEqual(failed.message, "ENOENT: no directory can be made in /proc, mkdir '/proc/kindling-test'")
  })

  it("under a file fails with ENOTDIR, and where a file is with EEXIST", () => {
    const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "kindling-directories-"))
    try {
      const file = Path.join(root, "file")
      Fs.writeFileSync(file, "")
      assert.strictEqual(codeOf(() => Directories.makeSync(Path.join(file, "a", "b"))).code, "ENOTDIR")
      assert.strictEqual(codeOf(() => Directories.makeSync(file)).code, "EEXIST")
    } finally {
      Fs.rmSync(root, { recursive: true })
    }
  })
})
