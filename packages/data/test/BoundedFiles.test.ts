import { assert, describe, it } from "@effect/vitest"
import { BoundedFiles, ObjectStore } from "@kindling/data"
import { DiskError } from "@kindling/kernel"
import { Deadlines } from "@kindling/protocol/testing"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

const failure = (run: () => unknown): DiskError.DiskError => {
  try {
    run()
  } catch (error) {
    assert.instanceOf(error, DiskError.DiskError)
    return error as DiskError.DiskError
  }
  return assert.fail("no error")
}

// Opens the FIFO for writing, which frees a thread waiting to read it. On a busy machine the thread may not have
// opened it yet (no reader: ENXIO): it will, and then waits for this writer.
const releaseReader = (fifo: string) => {
  for (const giveUpAt = Date.now() + Deadlines.scaled(10_000); Date.now() < giveUpAt;) {
    try {
      return Fs.closeSync(Fs.openSync(fifo, Fs.constants.O_WRONLY | Fs.constants.O_NONBLOCK))
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENXIO") throw error
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20)
    }
  }
}

describe("BoundedFiles", () => {
  it("does what the local file system does, on its own thread, failing with the DiskError the system gave", () => {
    const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "kindling-bounded-"))
    try {
      const files = BoundedFiles.make(30_000, ObjectStore.settingsOf({}))
      const dir = Path.join(root, "a", "b")
      files.makeDirectory(dir)
      files.writeFile(Path.join(dir, "one"), new TextEncoder().encode("first"))
      const writer = files.openWrite(Path.join(dir, "two"))
      writer.write(new TextEncoder().encode("second"), 0)
      writer.close()
      assert.deepStrictEqual([...files.list(dir)].sort(), ["one", "two"])
      assert.deepStrictEqual(files.stat(Path.join(dir, "two")), { kind: "file", size: 6 })
      assert.deepStrictEqual(files.stat(dir), { kind: "directory", size: files.stat(dir)!.size })
      assert.strictEqual(files.stat(Path.join(dir, "none")), undefined)
      files.rename(Path.join(dir, "two"), Path.join(dir, "three"))
      assert.strictEqual(new TextDecoder().decode(files.readFile(Path.join(dir, "one"))), "first")
      const reader = files.openRead(Path.join(dir, "three"))
      const buffer = new Uint8Array(10)
      assert.strictEqual(reader.read(buffer, 2, 4, 1), 4)
      assert.strictEqual(new TextDecoder().decode(buffer.subarray(2, 6)), "econ")
      assert.strictEqual(reader.read(buffer, 0, 4, 6), 0)
      reader.close()
      files.remove(Path.join(root, "a"))
      assert.isFalse(Fs.existsSync(Path.join(root, "a")))
      const missing = failure(() => files.readFile(Path.join(root, "none")))
      assert.deepStrictEqual([missing.code, missing.operation, missing.path], [
        "ENOENT",
        "read",
        Path.join(root, "none")
      ])
      assert.strictEqual(failure(() => files.makeDirectory("/proc/kindling-bounded/x")).code, "ENOENT")
    } finally {
      Fs.rmSync(root, { recursive: true, force: true })
    }
  })

  it("an operation the file system does not answer in time fails with ETIMEDOUT; the next gets a thread of its own", () => {
    const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "kindling-bounded-"))
    const fifo = Path.join(root, "fifo")
    ChildProcess.execFileSync("mkfifo", [fifo])
    // The bound covers the thread's start, which on a busy machine, from the sources, takes a while.
    const bound = Deadlines.scaled(500)
    const files = BoundedFiles.make(bound, ObjectStore.settingsOf({}))
    try {
      // Opening a FIFO for reading waits for a writer: there is none.
      const stuck = failure(() => files.readFile(fifo))
      assert.deepStrictEqual([stuck.code, stuck.operation, stuck.path], ["ETIMEDOUT", "read", fifo])
      assert.strictEqual(
        stuck.message,
        `ETIMEDOUT: the file system did not answer within ${bound / 1000} s, read '${fifo}'`
      )
      assert.deepStrictEqual(files.stat(root), { kind: "directory", size: Fs.statSync(root).size })
    } finally {
      // A writer lets the stuck thread go, so that this process can end.
      releaseReader(fifo)
      Fs.rmSync(root, { recursive: true, force: true })
    }
  })
})
