/**
 * The driver's side of shared variables, for every app of this process: the value of each broadcast (and its
 * encoding, which the app's driver serves to executors), and the value of each accumulator — what the driver
 * added, and what successful tasks added, merged. It is the driver's scope of `SharedVariables`.
 *
 * @since 0.1.0
 */
import { Records, SharedVariables } from "@kindling/protocol"
import * as Crypto from "node:crypto"

const broadcasts = new Map<number, { readonly value: unknown; readonly bytes: Uint8Array; readonly token: string }>()
const accumulators = new Map<number, { readonly kind: SharedVariables.AccumulatorKind; value: unknown }>()
let nextBroadcast = 0
let nextAccumulator = 0

SharedVariables.setDriverScope({
  broadcastValue: (broadcast) => {
    const entry = broadcasts.get(broadcast.id)
    if (entry === undefined) throw new Error(`Broadcast ${broadcast.id} was destroyed (its app has stopped)`)
    return entry.value
  },
  add: (accumulator, value) => {
    const entry = accumulators.get(accumulator.id)
    if (entry !== undefined) entry.value = SharedVariables.added(entry.kind, entry.value, value)
  },
  accumulatorValue: (accumulator) => accumulators.get(accumulator.id)?.value ?? SharedVariables.zero(accumulator.kind)
})

/**
 * A new broadcast of `value` (encoded now: later changes to the value are not seen by tasks).
 *
 * @since 0.1.0
 */
export const broadcast = <T>(value: T): SharedVariables.Broadcast<T> => {
  const id = nextBroadcast++
  const token = Crypto.randomBytes(16).toString("hex")
  broadcasts.set(id, { value, bytes: Records.encode(value), token })
  return new SharedVariables.Broadcast<T>(id, token)
}

/**
 * The encoded value of a broadcast, if `token` is its token.
 *
 * @since 0.1.0
 */
export const broadcastBytes = (id: number, token: string): Uint8Array | undefined => {
  const entry = broadcasts.get(id)
  return entry?.token === token ? entry.bytes : undefined
}

/**
 * A new accumulator, at zero.
 *
 * @since 0.1.0
 */
export const accumulator = <In, Out>(
  kind: SharedVariables.AccumulatorKind,
  name: string
): SharedVariables.Accumulator<In, Out> => {
  const id = nextAccumulator++
  accumulators.set(id, { kind, value: SharedVariables.zero(kind) })
  return new SharedVariables.Accumulator<In, Out>(id, kind, name)
}

/**
 * What a successful task added, merged in.
 *
 * @since 0.1.0
 */
export const merge = (updates: ReadonlyArray<readonly [number, unknown]>): void => {
  for (const [id, value] of updates) {
    const entry = accumulators.get(id)
    if (entry !== undefined) entry.value = SharedVariables.merge(entry.kind, entry.value, value)
  }
}

/**
 * Forgets shared variables of an app that stopped.
 *
 * @since 0.1.0
 */
export const destroy = (
  ids: { readonly broadcasts: Iterable<number>; readonly accumulators: Iterable<number> }
): void => {
  for (const id of ids.broadcasts) broadcasts.delete(id)
  for (const id of ids.accumulators) accumulators.delete(id)
}
