/**
 * The files an app's paths name: `s3://` and `s3a://` paths are objects (`ObjectStore`), others the local file
 * system's (`LocalFiles`). What a task thread, an executor and a driver read and write datasets through, each
 * made with the object store's settings its shell read from the configuration.
 *
 * @since 0.1.0
 */
import { fromCause } from "@kindling/kernel/DiskError"
import type { Files } from "./Disk.js"
import { isObjectPath } from "./FilePaths.js"
import * as LocalFiles from "./LocalFiles.js"
import * as ObjectStore from "./ObjectStore.js"

/**
 * Local files and the objects of the store `objectStore` names, each path to the one it names.
 *
 * @since 0.1.0
 * @category constructors
 */
export const files = (objectStore: ObjectStore.S3Settings): Files => {
  const objects = ObjectStore.files(objectStore)
  const on = (path: string): Files => (isObjectPath(path) ? objects : LocalFiles.files)
  return {
    openRead: (path) => on(path).openRead(path),
    openWrite: (path) => on(path).openWrite(path),
    readFile: (path) => on(path).readFile(path),
    writeFile: (path, bytes) => on(path).writeFile(path, bytes),
    rename: (from, to) => {
      if (isObjectPath(from) !== isObjectPath(to)) {
        throw fromCause("rename", from, Object.assign(new Error(`${to} is on another file system`), { code: "EXDEV" }))
      }
      on(from).rename(from, to)
    },
    remove: (path) => on(path).remove(path),
    makeDirectory: (path) => on(path).makeDirectory(path),
    stat: (path) => on(path).stat(path),
    list: (path) => on(path).list(path)
  }
}
