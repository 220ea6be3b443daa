import { assert, describe, it } from "@effect/vitest"
import { ObjectStore, Storage } from "@kindling/data"
import { DiskError } from "@kindling/kernel"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

// An endpoint nothing listens on: a request that reached it would fail with EIO, not with what is asserted here.
const files = Storage.files(ObjectStore.settingsOf({ "kindling.hadoop.fs.s3a.endpoint": "http://127.0.0.1:9" }))

describe("Storage.files", () => {
  it("takes a local path to the local file system", () => {
    const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "kindling-storage-"))
    try {
      files.makeDirectory(Path.join(root, "a/b"))
      files.writeFile(Path.join(root, "a/b/f"), new TextEncoder().encode("hello"))
      files.rename(Path.join(root, "a/b/f"), Path.join(root, "a/g"))
      assert.deepStrictEqual([...files.list(Path.join(root, "a"))].sort(), ["b", "g"])
      assert.deepStrictEqual(files.stat(Path.join(root, "a/g")), { kind: "file", size: 5 })
      assert.strictEqual(new TextDecoder().decode(files.readFile(Path.join(root, "a/g"))), "hello")
    } finally {
      Fs.rmSync(root, { recursive: true, force: true })
    }
  })

  it("refuses a rename between a local path and an object as EXDEV, before asking the store", () => {
    for (const [from, to] of [["/tmp/kindling-storage-x", "s3://bucket/x"], ["s3a://bucket/x", "/tmp/x"]] as const) {
      try {
        files.rename(from, to)
        assert.fail("no error")
      } catch (error) {
        assert.instanceOf(error, DiskError.DiskError)
        assert.deepStrictEqual([error.code, error.operation, error.path], ["EXDEV", "rename", from])
      }
    }
  })
})
