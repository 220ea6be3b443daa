// The files of one event log, written synchronously by the log's own thread (`eventLogThread.ts`): one file, or
// Spark's rolling layout; each batch of lines with one write (one gzip member when compressed).
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Zlib from "node:zlib"
import { inProgressSuffix, rollingPrefix } from "./eventLogNames.js"

/** How a log is laid out (`kindling.eventLog.compress`, `kindling.eventLog.rolling.*`). */
export interface Layout {
  readonly compress: boolean
  /** Roll over to a new file past this many bytes; one file when absent. */
  readonly rollingMaxFileSize: number | undefined
}

/** The file a log is being written to, and how far it has got. */
export interface Files {
  readonly appId: string
  readonly fd: number
  readonly path: string
  /** The bytes written to it, counted for a rolling layout only. */
  bytes: number
  readonly index: number
}

const codecSuffix = (compress: boolean) => compress ? ".gz" : ""

export const open = (dir: string, appId: string, layout: Layout): Files => {
  if (layout.rollingMaxFileSize === undefined) {
    const path = Path.join(dir, `${appId}${codecSuffix(layout.compress)}${inProgressSuffix}`)
    return { appId, fd: Fs.openSync(path, "wx"), path, bytes: 0, index: 1 }
  }
  const folder = Path.join(dir, `${rollingPrefix}${appId}`)
  Fs.mkdirSync(folder)
  Fs.closeSync(Fs.openSync(Path.join(folder, `appstatus_${appId}${inProgressSuffix}`), "wx"))
  return openRolled(folder, appId, 1, layout)
}

const openRolled = (folder: string, appId: string, index: number, layout: Layout): Files => {
  const path = Path.join(folder, `events_${index}_${appId}${codecSuffix(layout.compress)}`)
  return { appId, fd: Fs.openSync(path, "wx"), path, bytes: 0, index }
}

const writeAll = (fd: number, bytes: Uint8Array) => {
  for (let written = 0; written < bytes.length;) written += Fs.writeSync(fd, bytes, written)
}

const writeText = (files: Files, text: string, layout: Layout) => {
  if (text.length === 0) return
  const bytes = Buffer.from(text)
  writeAll(files.fd, layout.compress ? Zlib.gzipSync(bytes) : bytes)
}

/**
 * Writes events' lines (JSON, `EventLogCodec.encodeLines`), rolling over to the next file (the full one closed)
 * past the layout's size; returns the file the log goes on in.
 */
export const write = (files: Files, lines: ReadonlyArray<string>, layout: Layout): Files => {
  let current = files
  let pending = ""
  for (const text of lines) {
    const line = `${text}\n`
    pending += line
    // Counted only when it matters: a log of one file never rolls over.
    const max = layout.rollingMaxFileSize
    if (max === undefined) continue
    current.bytes += Buffer.byteLength(line)
    if (current.bytes >= max) {
      writeText(current, pending, layout)
      pending = ""
      Fs.closeSync(current.fd)
      current = openRolled(Path.dirname(current.path), current.appId, current.index + 1, layout)
    }
  }
  writeText(current, pending, layout)
  return current
}

/** Ends the log: its last file closed, and its name (or its folder's status marker) no longer in progress. */
export const close = (files: Files, layout: Layout) => {
  Fs.closeSync(files.fd)
  if (layout.rollingMaxFileSize === undefined) {
    Fs.renameSync(files.path, files.path.slice(0, -inProgressSuffix.length))
  } else {
    const marker = Path.join(Path.dirname(files.path), `appstatus_${files.appId}`)
    Fs.renameSync(`${marker}${inProgressSuffix}`, marker)
  }
}
