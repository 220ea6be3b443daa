/**
 * The submission client ↔ master conversation: what `kindling submit`, `kindling kill`, `kindling status` and
 * SDK tools ask a master. Each request is an ask; a master that is not ALIVE fails it with `MasterNotAlive`.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { ByteCount, DriverDescription, RemoteException } from "./Descriptions.js"
import { ArtifactRejected, DriverLaunchFailed, DriverNotFound, MasterNotAlive } from "./Errors.js"
import { DriverId, WorkerId } from "./Ids.js"
import { RefTo } from "./RpcAddress.js"
import { DriverState } from "./States.js"

/**
 * @since 0.1.0
 * @category replies
 */
export class SubmitDriverResponse extends Schema.TaggedClass<SubmitDriverResponse>()("SubmitDriverResponse", {
  master: RefTo<"Master">(),
  success: Schema.Boolean,
  driverId: Schema.OptionFromNullOr(DriverId),
  message: Schema.String
}, { description: "The master recorded the driver (success) and scheduled it" }) {}

/**
 * Record a driver, persist it, and schedule it. A description whose command no worker would run (a
 * `mainModule` that is not a driver entry of the installation) is refused with `DriverLaunchFailed`, without a
 * driver id.
 *
 * @since 0.1.0
 * @category submission client → master
 */
export class RequestSubmitDriver extends Schema.TaggedRequest<RequestSubmitDriver>()("RequestSubmitDriver", {
  payload: { driverDescription: DriverDescription },
  success: SubmitDriverResponse,
  failure: Schema.Union(MasterNotAlive, DriverLaunchFailed)
}, {
  description: "Record, persist and schedule a driver; a command that is not a driver entry of the installation " +
    "is refused"
}) {}

/**
 * @since 0.1.0
 * @category replies
 */
export class KillDriverResponse extends Schema.TaggedClass<KillDriverResponse>()("KillDriverResponse", {
  master: RefTo<"Master">(),
  driverId: DriverId,
  success: Schema.Boolean,
  message: Schema.String
}, { description: "The kill was carried out (waiting driver) or sent to the driver's worker" }) {}

/**
 * Kill a waiting or running driver. An unknown or finished driver fails with `DriverNotFound`.
 *
 * @since 0.1.0
 * @category submission client → master
 */
export class RequestKillDriver extends Schema.TaggedRequest<RequestKillDriver>()("RequestKillDriver", {
  payload: { driverId: DriverId },
  success: KillDriverResponse,
  failure: Schema.Union(MasterNotAlive, DriverNotFound)
}, { description: "Kill a waiting or running driver" }) {}

/**
 * Spark's `found` flag is kept for shape; a Kindling master answers an unknown id with `DriverNotFound`
 * instead of `found = false`.
 *
 * @since 0.1.0
 * @category replies
 */
export class DriverStatusResponse extends Schema.TaggedClass<DriverStatusResponse>()("DriverStatusResponse", {
  found: Schema.Boolean,
  state: Schema.OptionFromNullOr(DriverState),
  workerId: Schema.OptionFromNullOr(WorkerId),
  workerHostPort: Schema.OptionFromNullOr(Schema.String),
  exception: Schema.OptionFromNullOr(RemoteException)
}, { description: "A driver's state, its worker, and the exception it ended with, if any" }) {}

/**
 * Look a driver up among the active and the completed ones.
 *
 * @since 0.1.0
 * @category submission client → master
 */
export class RequestDriverStatus extends Schema.TaggedRequest<RequestDriverStatus>()("RequestDriverStatus", {
  payload: { driverId: DriverId },
  success: DriverStatusResponse,
  failure: Schema.Union(MasterNotAlive, DriverNotFound)
}, { description: "A driver's status, searched among active and completed drivers" }) {}

/**
 * @since 0.1.0
 * @category replies
 */
export class KillAllDriversResponse extends Schema.TaggedClass<KillAllDriversResponse>()("KillAllDriversResponse", {
  master: RefTo<"Master">(),
  success: Schema.Boolean,
  message: Schema.String
}, { description: "Every active driver was killed or sent a kill" }) {}

/**
 * Kill every active driver (Spark 4.0).
 *
 * @since 0.1.0
 * @category submission client → master
 */
export class RequestKillAllDrivers extends Schema.TaggedRequest<RequestKillAllDrivers>()("RequestKillAllDrivers", {
  payload: {},
  success: KillAllDriversResponse,
  failure: MasterNotAlive
}, { description: "Kill every active driver" }) {}

/**
 * Forget the completed drivers and apps (Spark 4.0); answers `true`.
 *
 * @since 0.1.0
 * @category submission client → master
 */
export class RequestClearCompletedDriversAndApps
  extends Schema.TaggedRequest<RequestClearCompletedDriversAndApps>()("RequestClearCompletedDriversAndApps", {
    payload: {},
    success: Schema.Boolean,
    failure: MasterNotAlive
  }, { description: "Forget completed drivers and apps" })
{}

/**
 * `true` unless the master is STANDBY (Spark 4.0); never fails, so load balancers can probe any master.
 *
 * @since 0.1.0
 * @category submission client → master
 */
export class RequestReadyz extends Schema.TaggedRequest<RequestReadyz>()("RequestReadyz", {
  payload: {},
  success: Schema.Boolean,
  failure: Schema.Never
}, { description: "Is the master ready (not STANDBY)?" }) {}

/**
 * @since 0.1.0
 * @category replies
 */
export class UploadArtifactResponse extends Schema.TaggedClass<UploadArtifactResponse>()("UploadArtifactResponse", {
  url: Schema.String
}, {
  description: "The artifact is stored on the master; `url` is what a driver description's `appUrl` names it by"
}) {}

/**
 * Store an app artifact on the master, which pulls it from the asking node's data plane (the block
 * `artifact/<sha256>`), checks its size and digest, and serves it to workers until no driver uses it.
 *
 * @since 0.1.0
 * @category submission client → master
 */
export class RequestUploadArtifact extends Schema.TaggedRequest<RequestUploadArtifact>()("RequestUploadArtifact", {
  payload: {
    /** The file name workers store it under (one path segment). */
    name: Schema.String,
    /** The SHA-256 of its bytes, as 64 lowercase hex digits. */
    sha256: Schema.String,
    /** Its size in bytes. */
    size: ByteCount
  },
  success: UploadArtifactResponse,
  failure: Schema.Union(MasterNotAlive, ArtifactRejected)
}, { description: "Pull an app artifact from the asking node and serve it to workers" }) {}

/**
 * Everything a submission client asks a master.
 *
 * @since 0.1.0
 * @category unions
 */
export const SubmissionRequest = Schema.Union(
  RequestSubmitDriver,
  RequestKillDriver,
  RequestDriverStatus,
  RequestKillAllDrivers,
  RequestClearCompletedDriversAndApps,
  RequestReadyz,
  RequestUploadArtifact
)
/**
 * @since 0.1.0
 * @category unions
 */
export type SubmissionRequest = typeof SubmissionRequest.Type

/**
 * The replies a master gives to submission requests.
 *
 * @since 0.1.0
 * @category unions
 */
export const SubmissionReply = Schema.Union(
  SubmitDriverResponse,
  KillDriverResponse,
  DriverStatusResponse,
  KillAllDriversResponse,
  UploadArtifactResponse
)
/**
 * @since 0.1.0
 * @category unions
 */
export type SubmissionReply = typeof SubmissionReply.Type
