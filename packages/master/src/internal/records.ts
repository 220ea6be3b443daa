// The master's persisted records as stored text, the same in every store: one JSON document per app, driver and
// worker, named `<kind>_<id>` as Spark names its files and znodes, and sealed when the cluster has a secret
// (`StoreTrust`).
import { QueryMessages } from "@kindling/protocol"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import type { Record, Stored } from "../MasterCore.js"
import { type Seal, sealRemedy, UntrustedStore } from "../StoreTrust.js"

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

// The stored text of a record: its JSON, sealed.
export const encodeRecord = (record: Record, seal: Seal): Effect.Effect<string, string> =>
  Schema.encode(codecs[record.kind] as Schema.Schema<typeof record.value, string>)(record.value).pipe(
    Effect.mapBoth({
      onFailure: (error) => error.message,
      onSuccess: (json) => seal.seal(recordName(record.kind, record.value.id), json)
    })
  )

// A record that cannot be read is named with the gist of what is wrong, never with its bytes echoed at length.
const oneLine = (text: string) => {
  const line = text.split("\n").find((l) => l.trim() !== "") ?? text
  return line.length > 200 ? `${line.slice(0, 200)}…` : line
}

// The record stored as `text` at `path`, under `name` (of kind `kind`): its seal opened (else the store is not to be
// trusted), its JSON decoded by its schema and its id the one its name says (a record under another record's name
// would replace it on recovery) — else it is `malformed`.
export const decodeRecord = <E>(
  stored: { readonly kind: Record["kind"]; readonly name: string; readonly path: string; readonly text: string },
  seal: Seal,
  malformed: (reason: string) => E
): Effect.Effect<Record, E | UntrustedStore> =>
  Either.match(seal.open(stored.name, stored.text), {
    onLeft: (reason) => Effect.fail(new UntrustedStore({ path: stored.path, reason, remedy: sealRemedy })),
    onRight: (json) =>
      Schema.decodeUnknown(codecs[stored.kind] as Schema.Schema<Record["value"], string>)(json).pipe(
        Effect.mapError((error) => oneLine(error.message)),
        Effect.filterOrFail(
          (value) => recordName(stored.kind, value.id) === stored.name,
          (value) => `it holds ${stored.kind} ${JSON.stringify(value.id)}`
        ),
        Effect.mapBoth({ onFailure: malformed, onSuccess: (value) => ({ kind: stored.kind, value }) as Record })
      )
  })

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
