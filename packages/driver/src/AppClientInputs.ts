/**
 * The app client's local inputs: its registration retry timers, registrations that could not be delivered, the
 * checks of its registration and their timers, dynamic allocation's requests with their answers and timer, and
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
 * @since 0.1.0
 * @category schemas
 */
export const CheckUnanswered = Schema.TaggedStruct("CheckUnanswered", { reason: Schema.String }).annotations({
  description: "The master asked whether it still has the app did not answer: it is asked again 2 s later, five " +
    "times in all"
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const RetryCheck = Schema.TaggedStruct("RetryCheck", {}).annotations({
  description: "2 s after a check of the app's registration went unanswered: ask the master again"
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const RequestTotal = Schema.TaggedStruct("RequestTotal", { total: Schema.Int }).annotations({
  description: "Dynamic allocation wants this many executors in all: asked of the master at once, and again " +
    "every second until a master has taken it (again whenever the app registers or another master leads)"
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const KillExecutors = Schema.TaggedStruct("KillExecutors", { executorIds: Schema.Array(Schema.String) })
  .annotations({
    description: "Dynamic allocation gives these executors back: their kill is asked of the master at once, and " +
      "again every second until the master reports each gone"
  })

/**
 * @since 0.1.0
 * @category schemas
 */
export const TotalAnswered = Schema.TaggedStruct("TotalAnswered", {
  ask: Schema.Int.annotations({ description: "which request of a total this answers (they are numbered)" }),
  taken: Schema.Boolean.annotations({ description: "false when the master refused it or did not answer in time" })
}).annotations({ description: "The master's answer to a request of a total of executors" })

/**
 * @since 0.1.0
 * @category schemas
 */
export const SyncAllocation = Schema.TaggedStruct("SyncAllocation", {}).annotations({
  description: "Every second while the master may not have what dynamic allocation asked: ask it again"
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const Release = Schema.TaggedStruct("Release", {}).annotations({
  description: "The app is leaving: it wants no executor more (a total of 0), so that the master replaces none " +
    "of those it stops; the app client says so once a master took it, or after 5 s"
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const Leave = Schema.TaggedStruct("Leave", {}).annotations({
  description: "The driver has stopped its executors: once the master counts none of them (or after 5 s), the app " +
    "client unregisters the app"
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const LeaveTimeout = Schema.TaggedStruct("LeaveTimeout", {
  phase: Schema.Literal("releasing", "released", "draining", "left").annotations({
    description: "the wait it ends: for the master to take a total of 0, or to count no executor of the app"
  })
}).annotations({ description: "5 s after the app began a wait of its leaving: it leaves anyway" })

/**
 * Every local input of the app client.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Local = Schema.Union(
  RetryRegistration,
  RegistrationUndelivered,
  RetryMaster,
  Stop,
  AppUnknown,
  CheckUnanswered,
  RetryCheck,
  RequestTotal,
  KillExecutors,
  TotalAnswered,
  SyncAllocation,
  Release,
  Leave,
  LeaveTimeout
)
