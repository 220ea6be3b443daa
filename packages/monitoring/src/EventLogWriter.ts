/**
 * An app's event log (`kindling.eventLog.*`): its event stream written as it happens, one JSON line per event in
 * Spark's format (`EventLogCodec`), under Spark's file names, so that Kindling's history server and Spark's own
 * can read it.
 *
 * - One file, `<dir>/<appId>` (`.gz` when compressed), named `….inprogress` until the app ends; or, rolling, a
 *   folder `eventlog_v2_<appId>` of `events_<n>_<appId>` files of about `maxFileSize` bytes of events each (counted
 *   before compression) and an empty `appstatus_<appId>(.inprogress)` marker, as Spark's rolling writer lays it out.
 * - Compressed logs are gzip (`node:zlib`): each batch of lines is a gzip member of its own, so a log cut short by
 *   a crash still reads up to its last whole member.
 * - Lines are written in batches, each batch with one write: a crash loses at most the batch being written, and a
 *   reader never sees half a batch except at the very end of a log it knows to be in progress.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Url from "node:url"
import * as Zlib from "node:zlib"
import type { AppEvent } from "./AppEvents.js"
import * as EventLogCodec from "./EventLogCodec.js"
import type * as MonitoringApi from "./MonitoringApi.js"
import type { SparkEvent } from "./SparkEvents.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The folder logs go to: a path or a `file:` URL (`kindling.eventLog.dir`). */
  readonly dir: string
  /** gzip each log (`kindling.eventLog.compress`). */
  readonly compress: boolean
  /** Roll over to a new file past this many bytes (`kindling.eventLog.rolling.*`); one file when absent. */
  readonly rollingMaxFileSize?: number | undefined
  /** The app's configuration, as its Environment page shows it. */
  readonly properties: ReadonlyArray<readonly [string, string]>
}

/**
 * A running event log.
 *
 * @since 0.1.0
 * @category models
 */
export interface EventLog {
  /** Names the log and starts writing it: nothing is written before the app has its id. */
  readonly setAppId: (appId: string) => void
}

/**
 * The suffix of a log still being written.
 *
 * @since 0.1.0
 * @category constants
 */
export const inProgressSuffix = ".inprogress"

/**
 * The prefix of a rolling log's folder (Spark's `eventlog_v2_`).
 *
 * @since 0.1.0
 * @category constants
 */
export const rollingPrefix = "eventlog_v2_"

/**
 * A folder path from `kindling.eventLog.dir` (a path or a `file:` URL).
 *
 * @since 0.1.0
 */
export const directory = (dir: string): string => dir.startsWith("file:") ? Url.fileURLToPath(dir) : Path.resolve(dir)

const gzip = (text: Buffer) =>
  Effect.async<Buffer, Error>((resume) =>
    Zlib.gzip(text, (error, bytes) => resume(error === null ? Effect.succeed(bytes) : Effect.fail(error)))
  )

const append = (fd: number, bytes: Uint8Array) =>
  Effect.async<void, Error>((resume) =>
    Fs.write(fd, bytes, (error, written) =>
      resume(
        error !== null
          ? Effect.fail(error)
          : written < bytes.length
          ? append(fd, bytes.subarray(written))
          : Effect.void
      ))
  )

// The most events written at once.
const batchSize = 256

// The files one log is written to, and how far the current one has got.
interface Files {
  readonly appId: string
  fd: number
  path: string
  bytes: number
  index: number
}

const codecSuffix = (compress: boolean) => compress ? ".gz" : ""

const openLog = (dir: string, appId: string, options: Options): Files => {
  if (options.rollingMaxFileSize === undefined) {
    const path = Path.join(dir, `${appId}${codecSuffix(options.compress)}${inProgressSuffix}`)
    return { appId, fd: Fs.openSync(path, "wx"), path, bytes: 0, index: 1 }
  }
  const folder = Path.join(dir, `${rollingPrefix}${appId}`)
  Fs.mkdirSync(folder)
  Fs.closeSync(Fs.openSync(Path.join(folder, `appstatus_${appId}${inProgressSuffix}`), "wx"))
  return openRolled(folder, appId, 1, options)
}

const openRolled = (folder: string, appId: string, index: number, options: Options): Files => {
  const path = Path.join(folder, `events_${index}_${appId}${codecSuffix(options.compress)}`)
  return { appId, fd: Fs.openSync(path, "wx"), path, bytes: 0, index }
}

// Ends the log: its last file closed, and its name (or its folder's status marker) no longer in progress.
const closeLog = (files: Files, options: Options) => {
  Fs.closeSync(files.fd)
  if (options.rollingMaxFileSize === undefined) {
    Fs.renameSync(files.path, files.path.slice(0, -inProgressSuffix.length))
  } else {
    const marker = Path.join(Path.dirname(files.path), `appstatus_${files.appId}`)
    Fs.renameSync(`${marker}${inProgressSuffix}`, marker)
  }
}

/**
 * Starts the log of `app`, fed by `events` (subscribed before the app's first job); it is finished — its last
 * events and Spark's `ApplicationEnd` written, its name no longer in progress — when the scope closes. A log that
 * cannot be written is reported, and the app goes on without it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const start = (
  options: Options,
  app: Omit<MonitoringApi.AppInfo, "id" | "properties" | "endTime">,
  events: Queue.Dequeue<AppEvent>
): Effect.Effect<EventLog, never, Scope.Scope> =>
  Effect.gen(function*() {
    const dir = directory(options.dir)
    const named = yield* Deferred.make<string>()
    const encoder = EventLogCodec.makeEncoder()
    let appId: string | undefined
    let files: Files | undefined
    let failed = false

    // One write per batch (per file, when a rolling log moves on to the next one mid-batch), compressed and written
    // off the driver's thread; a write that fails stops the log (said once) and leaves the app alone.
    const write = (sparkEvents: ReadonlyArray<SparkEvent>) =>
      Effect.suspend(() => {
        if (files === undefined || failed || sparkEvents.length === 0) return Effect.void
        const pieces: Array<{ readonly files: Files; readonly text: Buffer; readonly last: boolean }> = []
        let pending: Array<string> = []
        let pendingBytes = 0
        const flush = (last: boolean) => {
          if (pending.length > 0 || last) pieces.push({ files: files!, text: Buffer.from(pending.join("")), last })
          files!.bytes += pendingBytes
          pending = []
          pendingBytes = 0
        }
        for (const event of sparkEvents) {
          const line = `${JSON.stringify(event)}\n`
          pending.push(line)
          pendingBytes += Buffer.byteLength(line)
          const max = options.rollingMaxFileSize
          if (max !== undefined && files.bytes + pendingBytes >= max) {
            flush(true)
            files = openRolled(Path.dirname(files.path), files.appId, files.index + 1, options)
          }
        }
        flush(false)
        return Effect.forEach(pieces, (piece) =>
          Effect.flatMap(
            options.compress && piece.text.length > 0 ? gzip(piece.text) : Effect.succeed(piece.text),
            (bytes) =>
              Effect.zipRight(
                bytes.length === 0 ? Effect.void : append(piece.files.fd, bytes),
                // A rolled-over file is closed once its last bytes are in.
                piece.last
                  ? Effect.try(() => Fs.closeSync(piece.files.fd))
                  : Effect.void
              )
          ), { discard: true }).pipe(
            Effect.catchAll((error) => {
              failed = true
              return Effect.logError(
                `The event log ${files?.path} cannot be written (${error.message}); the app goes on without it`
              )
            })
          )
      })
    const encodeAll = (batch: Iterable<AppEvent>) => [...batch].flatMap((event) => EventLogCodec.encode(encoder, event))

    // Opens the log once the app has its id (by the writing fiber, or by the finalizer of an app that ended at once).
    const open = Effect.suspend(() => {
      if (files !== undefined || failed || appId === undefined) return Effect.void
      const id = appId
      return Effect.try(() => openLog(dir, id, options)).pipe(
        Effect.matchEffect({
          onFailure: (error) => {
            failed = true
            return Effect.logError(
              `Cannot start the event log in ${dir} (${String(error.error)}); the app goes on without it`
            )
          },
          onSuccess: (opened) => {
            files = opened
            return Effect.logInfo(`Logging events to ${opened.path}`).pipe(
              Effect.zipRight(write(EventLogCodec.header({ ...app, id, properties: options.properties })))
            )
          }
        })
      )
    })

    // Run last (finalizers run in reverse), once the writing fiber is stopped: what is left is written, then the end.
    yield* Effect.addFinalizer((exit) =>
      Effect.gen(function*() {
        yield* open
        if (files === undefined) return
        const rest = yield* Queue.takeAll(events)
        const time = yield* Clock.currentTimeMillis
        yield* write([...encodeAll(rest), EventLogCodec.footer(time, Exit.isSuccess(exit) ? 0 : 1)])
        if (failed) return
        const last = files
        yield* Effect.try(() => closeLog(last, options)).pipe(
          Effect.catchAll((error) =>
            Effect.logError(`The event log ${last.path} cannot be closed: ${String(error.error)}`)
          )
        )
      })
    )
    yield* Effect.forkScoped(Effect.gen(function*() {
      yield* Deferred.await(named)
      yield* open
      if (files === undefined) return
      // Small batches, and a yield after each: the log shares the driver's thread, whose messages must not wait
      // behind a long write.
      yield* Effect.forever(
        Queue.takeBetween(events, 1, batchSize).pipe(
          Effect.flatMap((batch) => write(encodeAll(batch))),
          Effect.zipRight(Effect.yieldNow())
        )
      )
    }))
    return {
      setAppId: (id) => {
        appId = id
        Deferred.unsafeDone(named, Exit.succeed(id))
      }
    }
  })
