// The master's persisted records as stored text, the same in every store: one JSON document per app, driver and
// worker, named `<kind>_<id>` as Spark names its files and znodes.
import { QueryMessages } from "@kindling/protocol"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { Record, Stored } from "../MasterCore.js"

const codecs = {
  app: Schema.parseJson(QueryMessages.ApplicationInfo),
  driver: Schema.parseJson(QueryMessages.DriverInfo),
  worker: Schema.parseJson(QueryMessages.WorkerInfo)
} as const

const kinds = Object.keys(codecs) as ReadonlyArray<Record["kind"]>

// Ids are ours (`app-…`, `driver-…`, `worker-<host>-<port>`), but a name must never leave its directory.
export const recordName = (kind: Record["kind"], id: string) => `${kind}_${encodeURIComponent(id)}`

// The kind of a stored name, or undefined for a name that is no record.
export const kindOf = (name: string): Record["kind"] | undefined => kinds.find((k) => name.startsWith(`${k}_`))

export const encodeRecord = (record: Record): Effect.Effect<string, string> =>
  Schema.encode(codecs[record.kind] as Schema.Schema<typeof record.value, string>)(record.value).pipe(
    Effect.mapError((error) => error.message)
  )

// A record that cannot be read is named with the gist of what is wrong, never with its bytes echoed at length.
const oneLine = (text: string) => {
  const line = text.split("\n").find((l) => l.trim() !== "") ?? text
  return line.length > 200 ? `${line.slice(0, 200)}…` : line
}

export const decodeRecord = (kind: Record["kind"], text: string): Effect.Effect<Record, string> =>
  Schema.decodeUnknown(codecs[kind] as Schema.Schema<Record["value"], string>)(text).pipe(
    Effect.map((value) => ({ kind, value }) as Record),
    Effect.mapError((error) => oneLine(error.message))
  )

// What a store holds, as a newly elected master recovers it: registration order matters to scheduling, and the
// ids sort by submission time and counter.
export const toStored = (records: ReadonlyArray<Record>): Stored => {
  const stored = {
    apps: records.flatMap((r) => (r.kind === "app" ? [r.value] : [])),
    drivers: records.flatMap((r) => (r.kind === "driver" ? [r.value] : [])),
    workers: records.flatMap((r) => (r.kind === "worker" ? [r.value] : []))
  }
  stored.apps.sort((a, b) => a.startTime - b.startTime || a.id.localeCompare(b.id))
  stored.drivers.sort((a, b) => a.startTime - b.startTime || a.id.localeCompare(b.id))
  return stored
}
