/**
 * The encoding of an app's values — the records, environments and zero values inside a task, and a task's
 * result: MessagePack with msgpackr's structured-clone extensions, so that a `Map`, `Set`, `Date`, `BigInt`,
 * typed array or a value with cycles arrives as it was sent (two exceptions: -0 arrives as 0, as through JSON, and an own key named `__proto__` arrives as `__proto_`, so
 * that no record can set its own prototype). (Protocol messages use plain MessagePack; this is
 * only for what the app itself puts in a dataset.) It imports nothing but msgpackr, so a task thread can load it
 * alone: `@kindling/protocol/records`.
 *
 * @since 0.1.0
 */
import { addExtension, Packr } from "msgpackr"
import { Accumulator, Broadcast, TaskContext, taskContext } from "./SharedVariables.js"

const packr = new Packr({ moreTypes: true, structuredClone: true })

// Broadcasts met while encoding, when someone is collecting them (`encodeCollecting`).
let collecting: Map<number, Broadcast<unknown>> | undefined

// Shared variables travel as references: a broadcast as [id, token], an accumulator as [id, kind, name].
addExtension({
  Class: Broadcast,
  type: 0x21,
  write: (broadcast: Broadcast<unknown>) => {
    collecting?.set(broadcast.id, broadcast)
    return [broadcast.id, broadcast.token]
  },
  read: ([id, token]: [number, string]) => new Broadcast(id, token)
})
addExtension({
  Class: Accumulator,
  type: 0x22,
  write: (accumulator: Accumulator<unknown, unknown>) => [accumulator.id, accumulator.kind, accumulator.name],
  read: ([id, kind, name]: [number, "long" | "collection", string]) => new Accumulator(id, kind, name)
})
// The task context is the same everywhere: it travels as its tag alone.
addExtension({
  Class: TaskContext,
  type: 0x23,
  write: () => 0,
  read: () => taskContext
})

/**
 * The shared variables, for a task thread that loads this entry alone.
 *
 * @since 0.1.0
 */
export * as SharedVariables from "./SharedVariables.js"

/**
 * @since 0.1.0
 */
export const encode = (value: unknown): Uint8Array => packr.pack(value)

/**
 * Encodes `value`, and says which broadcast variables it refers to.
 *
 * @since 0.1.0
 */
export const encodeCollecting = (
  value: unknown
): { readonly bytes: Uint8Array; readonly broadcasts: ReadonlyArray<Broadcast<unknown>> } => {
  collecting = new Map()
  try {
    const bytes = packr.pack(value)
    return { bytes, broadcasts: [...collecting.values()] }
  } finally {
    collecting = undefined
  }
}

/**
 * Throws on bytes that are not such an encoding.
 *
 * @since 0.1.0
 */
export const decode = (bytes: Uint8Array): unknown => packr.unpack(bytes)
