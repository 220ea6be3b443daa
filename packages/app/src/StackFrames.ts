/**
 * The frames of a stack trace, as V8 writes them (`    at parseLine (/app/logs.ts:12:7)`), read out of an error's
 * text: where the app's code called an operation (`CallSites`), and what a failure's summary keeps of a trace — the
 * error's own lines and the app's frames, not Kindling's, effect's or Node's (the driver's `AppModule.summary`).
 *
 * @since 0.1.0
 */
import { fileURLToPath } from "node:url"

/**
 * One frame: the function (when it has a name), the file (a path; a `file:` URL is made one) and line.
 *
 * @since 0.1.0
 * @category models
 */
export interface Frame {
  readonly fn: string | undefined
  readonly file: string
  readonly line: string
  /** The frame as written, trimmed. */
  readonly text: string
}

const frameLine = /^\s+at /

/**
 * The frame a line of a stack trace is, if it is one with a place in a file (`at new Promise (<anonymous>)` has
 * none).
 *
 * @since 0.1.0
 */
export const parse = (text: string): Frame | undefined => {
  const match = /^\s*at (?:(.*?) \()?(.+?):(\d+):\d+\)?$/.exec(text)
  if (match === null) return undefined
  const [, fn, location, line] = match as unknown as [string, string | undefined, string, string]
  const file = location.startsWith("file://") ? fileURLToPath(location) : location
  return { fn, file, line, text: text.trim() }
}

/**
 * `text` with only the frames whose file `keep` keeps (frames without a file go too): the error's own lines —
 * its class and message, its causes — stay as they are.
 *
 * @since 0.1.0
 */
export const keeping = (text: string, keep: (file: string) => boolean): string =>
  text.split("\n").filter((line) => {
    if (!frameLine.test(line)) return true
    const frame = parse(line)
    return frame !== undefined && keep(frame.file)
  }).join("\n")

/**
 * `text` without its frames: the error's class and message (and its causes' lines).
 *
 * @since 0.1.0
 */
export const withoutFrames = (text: string): string => keeping(text, () => false)
