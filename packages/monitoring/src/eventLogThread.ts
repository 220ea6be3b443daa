/**
 * The thread an event log is written on (`EventLogWriter`): it turns the app's events into Spark's and writes them
 * as JSON lines, so that none of that costs the driver's thread, which only hands the events over in batches.
 *
 * @since 0.1.0
 */
import type { AppEvents } from "@kindling/app"
import { parentPort, workerData } from "node:worker_threads"
import * as EventLogCodec from "./EventLogCodec.js"
import * as EventLogFiles from "./internal/eventLogFiles.js"
import type { FromLogThread, ToLogThread } from "./internal/eventLogThreadMessages.js"
import type { SparkEvent } from "./SparkEvents.js"

const { dir, layout } = workerData as { readonly dir: string; readonly layout: EventLogFiles.Layout }
const encoder = EventLogCodec.makeEncoder()
let files: EventLogFiles.Files | undefined
let failed = false

const tell = (message: FromLogThread) => parentPort!.postMessage(message)

// A log that cannot be written stops (said once); the app goes on without it.
const attempt = (what: string, body: () => void) => {
  if (failed) return
  try {
    body()
  } catch (error) {
    failed = true
    tell({ _tag: "Failed", reason: `${what}: ${error instanceof Error ? error.message : String(error)}` })
  }
}

const write = (lines: ReadonlyArray<string>) =>
  attempt(`The event log ${files?.path} cannot be written`, () => {
    if (files !== undefined) files = EventLogFiles.write(files, lines, layout)
  })

const linesOf = (events: ReadonlyArray<AppEvents.AppEvent>) =>
  events.flatMap((event) => EventLogCodec.encodeLines(encoder, event))
const sparkLines = (events: ReadonlyArray<SparkEvent>) => events.map((event) => JSON.stringify(event))

parentPort!.on("message", (message: ToLogThread) => {
  switch (message._tag) {
    case "Open":
      attempt(`Cannot start the event log in ${dir}`, () => {
        files = EventLogFiles.open(dir, message.appId, layout)
        tell({ _tag: "Opened", path: files.path })
      })
      write(sparkLines(message.header))
      return
    case "Events":
      write(linesOf(message.events))
      return
    case "Close":
      write([...linesOf(message.events), ...sparkLines([message.footer])])
      attempt(`The event log ${files?.path} cannot be closed`, () => {
        if (files !== undefined) EventLogFiles.close(files, layout)
      })
      tell({ _tag: "Closed" })
      return
  }
})
