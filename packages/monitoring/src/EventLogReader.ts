/**
 * Reading event logs back (Kindling's or Spark's, plain or gzip, one file or rolling): each log folded into the
 * app's description and an `AppStatus`, and read again as it grows — only the lines not yet folded are.
 *
 * A log is read up to its last complete line: a line cut short by a crash, or by a writer still at work, is left
 * for the next read. A log still named `.inprogress` (or whose rolling status marker is) is incomplete: its app
 * is running, or crashed before it could end its log.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Zlib from "node:zlib"
import * as AppStatus from "./AppStatus.js"
import * as EventLogCodec from "./EventLogCodec.js"
import { inProgressSuffix, rollingPrefix } from "./EventLogWriter.js"
import * as SparkEvents from "./SparkEvents.js"

/**
 * One app's log, as read so far.
 *
 * @since 0.1.0
 * @category models
 */
export interface AppLog {
  /** The log's name in its folder, without `.inprogress`. */
  readonly key: string
  readonly replay: EventLogCodec.Replay
  readonly status: AppStatus.AppStatus
  /** The log was ended by its app. */
  complete: boolean
  /** Lines that are neither JSON nor an event of a known kind in the shape Spark writes it. */
  badLines: number
  /**
   * By file: how far it is folded in — a plain file to a byte offset (only what follows is read again), a gzip
   * one to a line (it is read from its start) — and its size then (a file that has not changed is not read).
   */
  readonly files: Map<string, { readonly offset: number; readonly lines: number; readonly size: number }>
}

// By kind: a line is checked against its own event's schema only. The schemas have no transformations (what is
// written is what is read), so checking a line's shape is enough: nothing is copied.
const guards = new Map(
  Object.values(SparkEvents.events).map((schema) => [
    schema.fields.Event.literals[0] as string,
    Schema.is(schema as Schema.Schema<SparkEvents.SparkEvent, unknown>)
  ])
)

/**
 * The log's key for a name in the log folder, or undefined for a name that is not a log.
 *
 * @since 0.1.0
 */
export const keyOf = (name: string): string | undefined => {
  if (name.startsWith(".")) return undefined
  return name.endsWith(inProgressSuffix) ? name.slice(0, -inProgressSuffix.length) : name
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const make = (key: string, retention?: AppStatus.Retention): AppLog => ({
  key,
  replay: EventLogCodec.makeReplay(),
  status: AppStatus.make(retention),
  complete: false,
  badLines: 0,
  files: new Map()
})

const isGzip = (path: string) => path.endsWith(".gz") || path.endsWith(`.gz${inProgressSuffix}`)

// Folds one line in (a blank line, or an event of a kind Kindling does not read, changes nothing).
const foldLine = (log: AppLog, line: string): void => {
  if (line.trim() === "") return
  let json: unknown
  try {
    json = JSON.parse(line)
  } catch {
    log.badLines++
    return
  }
  const name = typeof json === "object" && json !== null ? (json as { Event?: unknown }).Event : undefined
  // Spark's other events (SQL, resource profiles, …) are skipped, as Spark's reader skips what it does not know.
  const guard = typeof name === "string" ? guards.get(name) : undefined
  if (guard === undefined) return
  if (!guard(json)) {
    log.badLines++
    return
  }
  for (const event of EventLogCodec.replay(log.replay, json)) AppStatus.apply(log.status, event)
}

// Folds what a file has gained since it was last read. The last piece of what is read is a line not yet ended (or
// "" after the last newline): it waits for the next read.
const foldFile = (log: AppLog, path: string, size: number) => {
  const known = log.files.get(path) ?? { offset: 0, lines: 0, size: -1 }
  if (known.size === size) return
  if (isGzip(path)) {
    // A gzip file read as far as its data goes (a member cut short gives what it has).
    const text = Zlib.gunzipSync(Fs.readFileSync(path), { finishFlush: Zlib.constants.Z_SYNC_FLUSH }).toString("utf8")
    const lines = text.split("\n")
    const whole = lines.length - 1
    for (let i = known.lines; i < whole; i++) foldLine(log, lines[i]!)
    log.files.set(path, { ...known, lines: Math.max(whole, known.lines), size })
    return
  }
  const gained = Buffer.alloc(Math.max(0, size - known.offset))
  const fd = Fs.openSync(path, "r")
  try {
    Fs.readSync(fd, gained, 0, gained.length, known.offset)
  } finally {
    Fs.closeSync(fd)
  }
  const end = gained.lastIndexOf(0x0a) + 1
  for (const line of gained.subarray(0, end).toString("utf8").split("\n").slice(0, -1)) foldLine(log, line)
  log.files.set(path, { ...known, offset: known.offset + end, size })
}

// A rolling log's event files, in order.
const rolledFiles = (folder: string): ReadonlyArray<string> =>
  Fs.readdirSync(folder)
    .filter((name) => name.startsWith("events_"))
    .map((name) => ({ name, index: Number(name.split("_")[1]) }))
    .filter((file) => Number.isInteger(file.index))
    .sort((a, b) => a.index - b.index)
    .map((file) => file.name)

/**
 * Reads what `entry` (a file or a rolling log's folder in the log folder, by its current name) has gained.
 *
 * @since 0.1.0
 */
export const refresh = (log: AppLog, dir: string, entry: string): void => {
  const path = Path.join(dir, entry)
  if (entry.startsWith(rollingPrefix)) {
    const names = Fs.readdirSync(path)
    for (const name of rolledFiles(path)) foldFile(log, Path.join(path, name), Fs.statSync(Path.join(path, name)).size)
    log.complete = names.some((name) => name.startsWith("appstatus_") && !name.endsWith(inProgressSuffix))
    return
  }
  // A log renamed when its app ended is the same file: what was read of it under its old name stays read.
  const previous = log.files.get(`${path}${inProgressSuffix}`)
  if (!log.files.has(path) && previous !== undefined) {
    log.files.clear()
    log.files.set(path, { ...previous, size: -1 })
  }
  foldFile(log, path, Fs.statSync(path).size)
  log.complete = !entry.endsWith(inProgressSuffix)
}

/**
 * Reads a whole log (a file or a rolling log's folder).
 *
 * @since 0.1.0
 */
export const read = (path: string, retention?: AppStatus.Retention): AppLog => {
  const entry = Path.basename(path)
  const log = make(keyOf(entry) ?? entry, retention)
  refresh(log, Path.dirname(path), entry)
  return log
}
