// What the driver's thread and its event log's thread (`eventLogThread.ts`) tell each other.
import type { AppEvents } from "@kindling/app"
import type { SparkEvent } from "../SparkEvents.js"

export type ToLogThread =
  /** The app has its id: the log is named, and opens with these events. */
  | { readonly _tag: "Open"; readonly appId: string; readonly header: ReadonlyArray<SparkEvent> }
  | { readonly _tag: "Events"; readonly events: ReadonlyArray<AppEvents.AppEvent> }
  /** The app has ended: its last events, then the end, and the log is no longer in progress. */
  | { readonly _tag: "Close"; readonly events: ReadonlyArray<AppEvents.AppEvent>; readonly footer: SparkEvent }

export type FromLogThread =
  | { readonly _tag: "Opened"; readonly path: string }
  | { readonly _tag: "Failed"; readonly reason: string }
  | { readonly _tag: "Closed" }
