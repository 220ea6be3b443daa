/**
 * The app client's local inputs: its registration retry timer and the driver's word that the app is done. They
 * never cross a connection; as schemas they document the app client's core in the protocol reference, and
 * `AppClientCore.Local` is derived from them.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * @since 0.1.0
 * @category schemas
 */
export const RetryRegistration = Schema.TaggedStruct("RetryRegistration", {}).annotations({
  description: "Every 20 s until the app is registered: register with every master again; the third time, give up"
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const Stop = Schema.TaggedStruct("Stop", {}).annotations({
  description: "The app is done: the app client unregisters it"
})

/**
 * Every local input of the app client.
 *
 * @since 0.1.0
 * @category schemas
 */
/**
 * @since 0.1.0
 * @category schemas
 */
export const AppUnknown = Schema.TaggedStruct("AppUnknown", { reason: Schema.String }).annotations({
  description: "After the connection to its master closed, that master, leading, no longer lists the app: it " +
    "removed it while the two could not talk, and its word was lost. The app is dead"
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const Local = Schema.Union(RetryRegistration, Stop, AppUnknown)
