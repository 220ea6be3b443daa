/**
 * The body of a driver's file thread: it carries out the local file operations of the thread that started it, one
 * at a time, and answers each on its port (see `BoundedFiles`). A failed operation answers with its `DiskError`'s
 * fields.
 *
 * Running this module is the point of importing it, so the package barrel does not re-export it.
 *
 * @since 0.1.0
 */
import { fromCause } from "@kindling/kernel/DiskError"
import type { Reader, Writer } from "./Disk.js"
import type { FileRequest, FileResponse } from "./internal/fileRequests.js"
import { serve } from "./internal/threadCalls.js"
import { files } from "./LocalFiles.js"

// The files open, by the number the caller holds.
const open = new Map<number, Reader | Writer>()
let nextHandle = 0

const handled = (handle: number) => {
  const file = open.get(handle)
  if (file === undefined) throw new Error(`no open file ${handle}`)
  return file
}

const run = (request: FileRequest): unknown => {
  switch (request._tag) {
    case "Call":
      return (files[request.method] as (...args: ReadonlyArray<unknown>) => unknown)(...request.args)
    case "Open": {
      const handle = nextHandle++
      open.set(handle, request.write ? files.openWrite(request.path) : files.openRead(request.path))
      return handle
    }
    case "Read": {
      const buffer = new Uint8Array(request.length)
      const read = (handled(request.handle) as Reader).read(buffer, 0, request.length, request.position)
      return buffer.subarray(0, read)
    }
    case "Write":
      return (handled(request.handle) as Writer).write(request.bytes, request.position)
    case "Close": {
      const file = handled(request.handle)
      open.delete(request.handle)
      return file.close()
    }
  }
}

const pathOf = (request: FileRequest): string =>
  request._tag === "Call" ? String(request.args[0]) : request._tag === "Open" ? request.path : `#${request.handle}`

serve<FileRequest, FileResponse>((request) => {
  try {
    return Promise.resolve({ _tag: "Done", value: run(request) })
  } catch (error) {
    const { code, operation, path, reason } = fromCause(request._tag.toLowerCase(), pathOf(request), error)
    return Promise.resolve({ _tag: "Failed", operation, path, code, reason })
  }
})
