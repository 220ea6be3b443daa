/**
 * An app's events in Spark's event-log format and back: `Encoder` turns the driver's events (`AppEvents`) into
 * Spark's listener events (keeping what Spark repeats in every event — a stage's info, a task's launch — from the
 * events that said it first), `Replay` turns a log's events back into the app's events and its description, for
 * the history server to fold into the same `AppStatus` the live UI shows.
 *
 * What Kindling's stream has and Spark's log has not is left out: executor heartbeats (Spark logs none either) and
 * executors whose launch failed. The two directions are `internal/eventLogEncoder.ts` and
 * `internal/eventLogReplay.ts`, with the names they share in `internal/eventLogNames.ts`.
 *
 * @since 0.1.0
 */
import type { AppEvents } from "@kindling/app"
import * as Encoding from "./internal/eventLogEncoder.js"
import * as Replaying from "./internal/eventLogReplay.js"
import type * as MonitoringApi from "./MonitoringApi.js"
import type { SparkEvent } from "./SparkEvents.js"
import type * as SparkEvents from "./SparkEvents.js"

type SparkTaskInfo = typeof SparkEvents.TaskInfo.Type

/**
 * What an encoder remembers: the stages jobs listed, the attempts submitted, the tasks running, where executors
 * are.
 *
 * @since 0.1.0
 * @category models
 */
export interface Encoder {
  readonly stages: Map<number, AppEvents.StageInfo>
  /** The stages that end a job: their tasks are Spark's `ResultTask`s. */
  readonly resultStages: Set<number>
  readonly submitted: Map<string, { readonly tasks: number; readonly time: number }>
  readonly tasks: Map<number, SparkTaskInfo>
  /** How many tasks each partition of a stage attempt has had: the next one's `Attempt`. */
  readonly launches: Map<string, number>
  /** Where each executor is, and the port it serves blocks on. */
  readonly hosts: Map<string, { readonly host: string; readonly port: number }>
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const makeEncoder = (): Encoder => ({
  stages: new Map(),
  resultStages: new Set(),
  submitted: new Map(),
  tasks: new Map(),
  launches: new Map(),
  hosts: new Map()
})

/**
 * The events that open a log: the format's version, the app's configuration and its start.
 *
 * @since 0.1.0
 */
export const header = (app: MonitoringApi.AppInfo): ReadonlyArray<SparkEvent> => [
  { Event: "SparkListenerLogStart", "Spark Version": app.version },
  // Spark's reader requires every section; the runtime's facts stand where Spark puts the JVM's.
  {
    Event: "SparkListenerEnvironmentUpdate",
    "JVM Information": { "Java Version": process.version, "Java Home": process.execPath, "Scala Version": "none" },
    "Spark Properties": Object.fromEntries(app.properties),
    "Hadoop Properties": {},
    "System Properties": {},
    "Metrics Properties": {},
    "Classpath Entries": {}
  },
  {
    Event: "SparkListenerApplicationStart",
    "App Name": app.name,
    "App ID": app.id,
    Timestamp: app.startTime,
    User: app.user
  }
]

/**
 * The event that closes the log of an app that ended.
 *
 * @since 0.1.0
 */
export const footer = (time: number, exitCode: number): SparkEvent => ({
  Event: "SparkListenerApplicationEnd",
  Timestamp: time,
  ExitCode: exitCode
})

/**
 * One of the app's events as Spark's (none for what Spark does not log).
 *
 * @since 0.1.0
 */
export const encode: (encoder: Encoder, event: AppEvents.AppEvent) => ReadonlyArray<SparkEvent> = Encoding.encode

/**
 * One of the app's events as the lines a log holds: the JSON of what `encode` gives, without newlines. Tasks'
 * starts and ends, most of a log, are written straight from the event, several times faster.
 *
 * @since 0.1.0
 */
export const encodeLines: (encoder: Encoder, event: AppEvents.AppEvent) => ReadonlyArray<string> = Encoding.encodeLines

// ---- replay -------------------------------------------------------------------------------------------------

/**
 * What a log said about its app, as it is read.
 *
 * @since 0.1.0
 * @category models
 */
export interface Replay {
  id: string | undefined
  name: string
  user: string
  startTime: number
  endTime: number | undefined
  exitCode: number | undefined
  version: string
  properties: ReadonlyArray<readonly [string, string]>
  /** The latest time an event carried: Spark's block events carry none and happen at it. */
  lastTime: number
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const makeReplay = (): Replay => ({
  id: undefined,
  name: "",
  user: "",
  startTime: 0,
  endTime: undefined,
  exitCode: undefined,
  version: "",
  properties: [],
  lastTime: 0
})

/**
 * One event of a log, folded into what is known of the app; answers the app's events it stands for.
 *
 * @since 0.1.0
 */
export const replay: (state: Replay, event: SparkEvent) => ReadonlyArray<AppEvents.AppEvent> = Replaying.replay

/**
 * What the monitoring API says about a replayed app.
 *
 * @since 0.1.0
 */
export const appInfo = (state: Replay, fallbackId: string): MonitoringApi.AppInfo => ({
  id: state.id ?? fallbackId,
  name: state.name,
  user: state.user,
  startTime: state.startTime,
  ...(state.endTime === undefined ? {} : { endTime: state.endTime }),
  version: state.version,
  properties: state.properties
})
