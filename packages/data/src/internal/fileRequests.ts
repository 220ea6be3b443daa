// What the driver's thread asks of its file thread (`BoundedFiles`), and the answers: the local file system's
// operations of `Disk.Files`, with the files it opens held there by number.
import type { Files } from "../Disk.js"

/** The operations of `Files` that take paths and give back data. */
export type PathMethod = "readFile" | "writeFile" | "rename" | "remove" | "makeDirectory" | "stat" | "list"

export type FileRequest =
  | { readonly _tag: "Call"; readonly method: PathMethod; readonly args: Parameters<Files[PathMethod]> }
  | { readonly _tag: "Open"; readonly path: string; readonly write: boolean }
  | { readonly _tag: "Read"; readonly handle: number; readonly length: number; readonly position: number }
  | { readonly _tag: "Write"; readonly handle: number; readonly bytes: Uint8Array; readonly position: number }
  | { readonly _tag: "Close"; readonly handle: number }

export type FileResponse =
  | { readonly _tag: "Done"; readonly value: unknown }
  /** A `DiskError`'s fields. */
  | {
    readonly _tag: "Failed"
    readonly operation: string
    readonly path: string
    readonly code: string
    readonly reason: string
  }
