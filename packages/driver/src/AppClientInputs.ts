/**
 * The app client's local inputs: its registration retry timers, registrations that could not be delivered and
 * the driver's word that the app is done. They never cross a connection; as schemas they document the app client's core in the protocol reference, and
 * `AppClientCore.Local` is derived from them.
 *
 * @since 0.1.0
 */
import { RpcAddress } from "@kindling/protocol"
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
 * @since 0.1.0
 * @category schemas
 */
export const RegistrationUndelivered = Schema.TaggedStruct("RegistrationUndelivered", {
  master: RpcAddress.RpcAddress,
  reason: Schema.String,
  connected: Schema.Boolean.annotations({
    description: "whether a connection to the master had been made (and was lost), or none could be"
  })
}).annotations({
  description: "A registration could not be sent to a master: with no connection made, it is tried again 1 s " +
    "later, twice; once every master has failed so and none was ever reached, the app is dead"
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const RetryMaster = Schema.TaggedStruct("RetryMaster", { master: RpcAddress.RpcAddress }).annotations({
  description: "1 s after a registration found no connection to a master: register with it again"
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const AppUnknown = Schema.TaggedStruct("AppUnknown", { reason: Schema.String }).annotations({
  description: "After the connection to its master closed, that master, leading, no longer lists the app: it " +
    "removed it while the two could not talk, and its word was lost. The app is dead"
})

/**
 * Every local input of the app client.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Local = Schema.Union(RetryRegistration, RegistrationUndelivered, RetryMaster, Stop, AppUnknown)
