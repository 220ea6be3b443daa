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
import { Packr } from "msgpackr"

const packr = new Packr({ moreTypes: true, structuredClone: true })

/**
 * @since 0.1.0
 */
export const encode = (value: unknown): Uint8Array => packr.pack(value)

/**
 * Throws on bytes that are not such an encoding.
 *
 * @since 0.1.0
 */
export const decode = (bytes: Uint8Array): unknown => packr.unpack(bytes)
