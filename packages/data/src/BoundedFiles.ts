/**
 * The files a driver works on itself — listing and reading the heads of its inputs, making and finishing its output
 * directories, checkpoints — with a bound on each operation. A driver's thread is its event loop: a file system
 * that never answers (a hung network mount, a FIFO where a file was expected) would stall it for ever, deaf to
 * its executors, its UI and signals. Here each local operation runs on a thread of its own (`fileThread`) while
 * the driver waits at most `timeoutMillis` for it; one that takes longer fails with a `DiskError` of code
 * `ETIMEDOUT`, and the action it was for fails with it. Objects (`s3://`) have their own bound (`ObjectStore`).
 *
 * @since 0.1.0
 */
import { DiskError } from "@kindling/kernel/DiskError"
import type { Files, Reader, Writer } from "./Disk.js"
import { isObjectPath } from "./FilePaths.js"
import type { FileRequest, FileResponse, PathMethod } from "./internal/fileRequests.js"
import { ThreadCalls } from "./internal/threadCalls.js"
import type { S3Settings } from "./ObjectStore.js"
import * as Storage from "./Storage.js"

/**
 * The local file system and the object store `objectStore` names, as `Storage.files`, each local operation
 * bounded by `timeoutMillis`. The thread starts with the first operation.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (timeoutMillis: number, objectStore: S3Settings): Files => {
  const storage = Storage.files(objectStore)
  const calls = new ThreadCalls<FileRequest, FileResponse>({
    from: import.meta.url,
    entry: "fileThread",
    timeoutMillis,
    who: "the file system"
  })
  const ask = <A>(operation: string, path: string, request: FileRequest, transfer?: ReadonlyArray<ArrayBuffer>) => {
    const response = calls.call(operation, path, request, transfer)
    if (response._tag === "Failed") throw new DiskError(response)
    return response.value as A
  }
  const call = <M extends PathMethod>(method: M, operation: string) => (...args: Parameters<Files[M]>) => {
    const path = args[0] as string
    return isObjectPath(path)
      ? (storage[method] as unknown as (...args: Parameters<Files[M]>) => ReturnType<Files[M]>)(...args)
      : ask<ReturnType<Files[M]>>(operation, path, { _tag: "Call", method, args })
  }
  const open = (path: string, write: boolean) => ask<number>("open", path, { _tag: "Open", path, write })
  return {
    openRead: (path): Reader => {
      if (isObjectPath(path)) return storage.openRead(path)
      const handle = open(path, false)
      return {
        read: (buffer, offset, length, position) => {
          const bytes = ask<Uint8Array>("read", path, { _tag: "Read", handle, length, position })
          buffer.set(bytes, offset)
          return bytes.length
        },
        close: () => ask<void>("close", path, { _tag: "Close", handle })
      }
    },
    openWrite: (path): Writer => {
      if (isObjectPath(path)) return storage.openWrite(path)
      const handle = open(path, true)
      return {
        write: (bytes, position) => ask<void>("write", path, { _tag: "Write", handle, bytes, position }),
        close: () => ask<void>("close", path, { _tag: "Close", handle })
      }
    },
    readFile: call("readFile", "read"),
    writeFile: call("writeFile", "write"),
    rename: (from, to) => {
      if (isObjectPath(from) || isObjectPath(to)) return storage.rename(from, to)
      return ask<void>("rename", from, { _tag: "Call", method: "rename", args: [from, to] })
    },
    remove: call("remove", "remove"),
    makeDirectory: call("makeDirectory", "mkdir"),
    stat: call("stat", "stat"),
    list: call("list", "list")
  }
}
