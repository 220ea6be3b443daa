/**
 * Errors that cross the wire. Each is a `Schema.TaggedError`, so a handler's failure arrives at the asker as the
 * same typed value, and each has a `message` an operator can read.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { AppId, DriverId } from "./Ids.js"
import { RecoveryState } from "./States.js"

// The prefix Spark puts in front of every "master is not alive" answer; clients match on the typed error, the
// text is kept for people who grep logs.
const notAlivePrefix = "Current state is not alive"

/**
 * The master is STANDBY, RECOVERING or COMPLETING_RECOVERY and does not accept submissions, kills or queries.
 *
 * @since 0.1.0
 * @category errors
 */
export class MasterNotAlive extends Schema.TaggedError<MasterNotAlive>()("MasterNotAlive", {
  state: RecoveryState,
  /** What was refused, in the message's words ("accept driver submissions", "report driver status", …). */
  action: Schema.optionalWith(Schema.String, { exact: true })
}, {
  description:
    "The master is STANDBY, RECOVERING or COMPLETING_RECOVERY and does not accept submissions, kills or queries."
}) {
  override get message(): string {
    return `${notAlivePrefix}: ${this.state}. Can only ${this.action ?? "accept driver submissions"} in ALIVE state.`
  }
}

/**
 * No active or completed driver has this id (or, for a kill, it has already finished).
 *
 * @since 0.1.0
 * @category errors
 */
export class DriverNotFound extends Schema.TaggedError<DriverNotFound>()("DriverNotFound", {
  driverId: DriverId,
  detail: Schema.optionalWith(Schema.String, { exact: true })
}, { description: "No active or completed driver has this id (or, for a kill, it has already finished)." }) {
  override get message(): string {
    return `Driver ${this.driverId} ${this.detail ?? "does not exist"}`
  }
}

/**
 * @since 0.1.0
 * @category errors
 */
export class AppNotFound extends Schema.TaggedError<AppNotFound>()("AppNotFound", { appId: AppId }, {
  description: "The master knows no application with this id."
}) {
  override get message(): string {
    return `Application ${this.appId} is not known to the master`
  }
}

/**
 * The driver rejected an executor's registration (duplicate id, or excluded after failures).
 *
 * @since 0.1.0
 * @category errors
 */
export class ExecutorRegistrationRejected
  extends Schema.TaggedError<ExecutorRegistrationRejected>()("ExecutorRegistrationRejected", {
    executorId: Schema.String,
    reason: Schema.String
  }, { description: "The driver rejected an executor’s registration (duplicate id, or excluded after failures)." })
{
  override get message(): string {
    return `Registration of executor ${this.executorId} rejected: ${this.reason}`
  }
}

/**
 * A driver cannot be launched: a worker could not prepare or start it (bad artifact URL, unstartable command),
 * or a master refused the submission at once because no worker would run its command. A refused submission has
 * no driver id.
 *
 * @since 0.1.0
 * @category errors
 */
export class DriverLaunchFailed extends Schema.TaggedError<DriverLaunchFailed>()("DriverLaunchFailed", {
  driverId: Schema.optionalWith(DriverId, { exact: true }),
  reason: Schema.String
}, {
  description: "A driver cannot be launched: a worker could not prepare or start it (bad artifact URL, " +
    "unstartable command), or the master refused the submission because no worker would run its command " +
    "(then without driverId)."
}) {
  override get message(): string {
    return `Driver ${this.driverId ?? "submission"} could not be launched: ${this.reason}`
  }
}

/**
 * A master would not store an uploaded artifact: too large, a malformed digest or name, or the bytes fetched
 * from the uploader were not the ones announced.
 *
 * @since 0.1.0
 * @category errors
 */
export class ArtifactRejected extends Schema.TaggedError<ArtifactRejected>()("ArtifactRejected", {
  name: Schema.String,
  reason: Schema.String
}, {
  description: "A master would not store an uploaded artifact: too large, a malformed digest or name, or the " +
    "bytes fetched from the uploader were not the ones announced."
}) {
  override get message(): string {
    return `The artifact ${this.name} was rejected: ${this.reason}`
  }
}

/**
 * A worker could not start an executor process (among other reasons, a command whose `mainModule` is not the
 * installation's executor entry).
 *
 * @since 0.1.0
 * @category errors
 */
export class ExecutorLaunchFailed extends Schema.TaggedError<ExecutorLaunchFailed>()("ExecutorLaunchFailed", {
  appId: AppId,
  execId: Schema.Int,
  reason: Schema.String
}, { description: "A worker could not start an executor process (e.g. a mainModule that is not an executor entry)." }) {
  override get message(): string {
    return `Executor ${this.appId}/${this.execId} could not be launched: ${this.reason}`
  }
}

/**
 * The shared-secret handshake failed: a wrong or missing secret on either side.
 *
 * @since 0.1.0
 * @category errors
 */
export class AuthenticationFailed extends Schema.TaggedError<AuthenticationFailed>()("AuthenticationFailed", {
  peer: Schema.String,
  reason: Schema.String
}, { description: "The shared-secret handshake failed: a wrong or missing secret on either side." }) {
  override get message(): string {
    return `Authentication with ${this.peer} failed: ${this.reason}`
  }
}

/**
 * The two nodes speak different protocol versions; the connection is refused before any message.
 *
 * @since 0.1.0
 * @category errors
 */
export class ProtocolVersionMismatch extends Schema.TaggedError<ProtocolVersionMismatch>()("ProtocolVersionMismatch", {
  peer: Schema.String,
  local: Schema.Int,
  remote: Schema.Int
}, { description: "The two nodes speak different protocol versions; the connection is refused before any message." }) {
  override get message(): string {
    return `Protocol version mismatch with ${this.peer}: this node speaks ${this.local}, the peer ${this.remote}`
  }
}

/**
 * Bytes that are not a valid frame, envelope or message. The node logs it and carries on.
 *
 * @since 0.1.0
 * @category errors
 */
export class MalformedFrame extends Schema.TaggedError<MalformedFrame>()("MalformedFrame", {
  reason: Schema.String
}, { description: "Bytes that are not a valid frame, envelope or message. The node logs it and carries on." }) {
  override get message(): string {
    return `Malformed frame: ${this.reason}`
  }
}

/**
 * A frame longer than the configured maximum (128 MiB by default), refused by the sender and the receiver.
 *
 * @since 0.1.0
 * @category errors
 */
export class FrameTooLarge extends Schema.TaggedError<FrameTooLarge>()("FrameTooLarge", {
  size: Schema.Int,
  maxSize: Schema.Int
}, {
  description:
    "A frame longer than the configured maximum (128 MiB by default), refused by the sender and the receiver."
}) {
  override get message(): string {
    return `Frame of ${this.size} bytes exceeds the maximum of ${this.maxSize} bytes`
  }
}

/**
 * An ask got no reply in time.
 *
 * @since 0.1.0
 * @category errors
 */
export class AskTimeout extends Schema.TaggedError<AskTimeout>()("AskTimeout", {
  endpoint: Schema.String,
  request: Schema.String,
  timeoutMillis: Schema.Int
}, { description: "An ask got no reply in time." }) {
  override get message(): string {
    return `No reply to ${this.request} from ${this.endpoint} within ${this.timeoutMillis} ms`
  }
}

/**
 * The node was reached but has no endpoint by that name.
 *
 * @since 0.1.0
 * @category errors
 */
export class EndpointNotFound extends Schema.TaggedError<EndpointNotFound>()("EndpointNotFound", {
  endpoint: Schema.String
}, { description: "The node was reached but has no endpoint by that name." }) {
  override get message(): string {
    return `No endpoint ${this.endpoint}`
  }
}

/**
 * No connection to a peer could be made: nothing listens there, its host does not answer within the lookup
 * timeout, or the handshake never came.
 *
 * @since 0.1.0
 * @category errors
 */
export class ConnectFailed extends Schema.TaggedError<ConnectFailed>()("ConnectFailed", {
  peer: Schema.String,
  reason: Schema.String
}, { description: "No connection to the peer could be made." }) {
  override get message(): string {
    return `Cannot connect to ${this.peer}: ${this.reason}`
  }
}

/**
 * The connection to a peer, once made, broke before the reply arrived, or the peer refused it.
 *
 * @since 0.1.0
 * @category errors
 */
export class ConnectionLost extends Schema.TaggedError<ConnectionLost>()("ConnectionLost", {
  peer: Schema.String,
  reason: Schema.String
}, { description: "The connection to a peer, once made, broke before the reply arrived, or the peer refused it." }) {
  override get message(): string {
    return `Connection to ${this.peer} lost: ${this.reason}`
  }
}

/**
 * A handler failed with something that is not one of its declared errors, or died. The asker gets the text;
 * the handler's node logs the whole cause.
 *
 * @since 0.1.0
 * @category errors
 */
export class RemoteHandlerError extends Schema.TaggedError<RemoteHandlerError>()("RemoteHandlerError", {
  endpoint: Schema.String,
  request: Schema.String,
  reason: Schema.String
}, {
  description:
    "A handler failed with something that is not one of its declared errors, or died. The asker gets the text; the handler’s node logs the whole cause."
}) {
  override get message(): string {
    return `${this.endpoint} failed to handle ${this.request}: ${this.reason}`
  }
}

/**
 * The server has no block by that id (or no longer has it: a lost executor's shuffle output, say).
 *
 * @since 0.1.0
 * @category errors
 */
export class BlockNotFound extends Schema.TaggedError<BlockNotFound>()("BlockNotFound", {
  blockId: Schema.String
}, { description: "The server has no block by that id (or no longer has it)." }) {
  override get message(): string {
    return `Block ${this.blockId} not found`
  }
}

/**
 * The server will not serve the block: the requester is not allowed to have it, the offset is beyond its end,
 * or reading it failed.
 *
 * @since 0.1.0
 * @category errors
 */
export class TransferRefused extends Schema.TaggedError<TransferRefused>()("TransferRefused", {
  blockId: Schema.String,
  reason: Schema.String
}, {
  description: "The server will not serve the block: the requester is not allowed to have it, the offset is " +
    "beyond its end, or reading it failed."
}) {
  override get message(): string {
    return `Transfer of block ${this.blockId} refused: ${this.reason}`
  }
}

/**
 * Bytes of a block arrived damaged: a chunk whose CRC-32 does not match, out of place or beyond the credit, or
 * a stream that ended at another size than it reached. The fetcher refetches from the last verified offset.
 *
 * @since 0.1.0
 * @category errors
 */
export class BlockCorrupted extends Schema.TaggedError<BlockCorrupted>()("BlockCorrupted", {
  blockId: Schema.String,
  offset: Schema.NonNegativeInt,
  reason: Schema.String
}, {
  description: "Bytes of a block arrived damaged (checksum, placement or size); the fetcher refetches from the " +
    "last verified offset."
}) {
  override get message(): string {
    return `Block ${this.blockId} corrupted at offset ${this.offset}: ${this.reason}`
  }
}

/**
 * A map output a reduce task needs is not registered with the driver (its map task has not run, or ran on an
 * executor since lost): the reduce task fails with a fetch failure and the map partition runs again.
 *
 * @since 0.1.0
 * @category errors
 */
export class MapOutputMissing extends Schema.TaggedError<MapOutputMissing>()("MapOutputMissing", {
  shuffleId: Schema.NonNegativeInt,
  mapIndex: Schema.NonNegativeInt
}, { description: "A map output a reduce task needs is not registered with the driver." }) {
  override get message(): string {
    return `Missing an output location for shuffle ${this.shuffleId} partition ${this.mapIndex}`
  }
}

/**
 * What the RpcEnv itself may fail an ask or send with, apart from the handler's declared errors.
 *
 * @since 0.1.0
 * @category errors
 */
export const RpcError = Schema.Union(
  AuthenticationFailed,
  ProtocolVersionMismatch,
  MalformedFrame,
  FrameTooLarge,
  AskTimeout,
  EndpointNotFound,
  ConnectFailed,
  ConnectionLost,
  RemoteHandlerError
)
/**
 * @since 0.1.0
 * @category errors
 */
export type RpcError = typeof RpcError.Type

/**
 * A fetch gave up: the last of its attempts failed with `lastError` (a lost connection or corrupted bytes after
 * every retry, or a failed handshake, which is not retried).
 *
 * @since 0.1.0
 * @category errors
 */
export class TransferFailed extends Schema.TaggedError<TransferFailed>()("TransferFailed", {
  blockId: Schema.String,
  peer: Schema.String,
  attempts: Schema.Int,
  lastError: Schema.Union(BlockCorrupted, RpcError)
}, {
  description: "A fetch gave up: the last of its attempts failed with lastError (a lost connection or corrupted " +
    "bytes after every retry, or a failed handshake)."
}) {
  override get message(): string {
    const attempts = this.attempts === 1 ? "1 attempt" : `${this.attempts} attempts`
    return `Transfer of block ${this.blockId} from ${this.peer} failed after ${attempts}: ${this.lastError.message}`
  }
}

/**
 * What a server may answer a fetch with (in a `fetchFailed` envelope).
 *
 * @since 0.1.0
 * @category errors
 */
export const FetchFailure = Schema.Union(BlockNotFound, TransferRefused)
/**
 * @since 0.1.0
 * @category errors
 */
export type FetchFailure = typeof FetchFailure.Type

/**
 * What a fetch may fail with.
 *
 * @since 0.1.0
 * @category errors
 */
export type TransferError = BlockNotFound | TransferRefused | TransferFailed

/**
 * Every error of the protocol; the docs generator and the test kit iterate over it.
 *
 * @since 0.1.0
 * @category errors
 */
export const all = {
  MasterNotAlive,
  DriverNotFound,
  AppNotFound,
  ExecutorRegistrationRejected,
  DriverLaunchFailed,
  ExecutorLaunchFailed,
  ArtifactRejected,
  AuthenticationFailed,
  ProtocolVersionMismatch,
  MalformedFrame,
  FrameTooLarge,
  AskTimeout,
  EndpointNotFound,
  ConnectionLost,
  RemoteHandlerError,
  BlockNotFound,
  TransferRefused,
  BlockCorrupted,
  TransferFailed,
  MapOutputMissing
} as const
