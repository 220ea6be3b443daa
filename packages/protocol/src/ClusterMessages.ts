/**
 * The driver ↔ executor conversation (Spark's coarse-grained cluster messages): executor registration, task
 * launch, kill and status, heartbeats, decommissioning.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { ByteCount, Count, Megabytes, ResourceRequirement, Resources } from "./Descriptions.js"
import { ExecutorRegistrationRejected, MapOutputMissing } from "./Errors.js"
import { ExecutorId } from "./Ids.js"
import { RefTo, RpcAddress } from "./RpcAddress.js"
import { TaskState } from "./States.js"
import { TaskNeeds } from "./TaskPlan.js"

/**
 * Raw bytes: MessagePack `bin` on the wire.
 *
 * @since 0.1.0
 * @category schema
 */
export const Bytes = Schema.Uint8ArrayFromSelf.annotations({
  identifier: "Bytes",
  jsonSchema: { type: "string", contentEncoding: "binary", description: "MessagePack bin" }
})

const Properties = Schema.Record({ key: Schema.String, value: Schema.String })

const StorageLevel = Schema.Literal("MEMORY_ONLY", "MEMORY_AND_DISK", "DISK_ONLY")

/**
 * What one executor and one task of a resource profile need.
 *
 * @since 0.1.0
 * @category models
 */
export class ResourceProfile extends Schema.Class<ResourceProfile>("ResourceProfile")({
  id: Count,
  executorCores: Schema.OptionFromNullOr(Count),
  executorMemoryMb: Schema.OptionFromNullOr(Megabytes),
  executorResources: Schema.Array(ResourceRequirement),
  taskCpus: Count,
  taskResources: Schema.Array(ResourceRequirement)
}, { description: "What one executor and one task of a resource profile need" }) {}

/**
 * The driver's configuration, as an executor fetches it at start-up (Spark's `SparkAppConfig`).
 *
 * @since 0.1.0
 * @category replies
 */
export class AppConfig extends Schema.TaggedClass<AppConfig>()("AppConfig", {
  properties: Schema.Array(Schema.Tuple(Schema.String, Schema.String)),
  ioEncryptionKey: Schema.OptionFromNullOr(Bytes),
  delegationTokens: Schema.OptionFromNullOr(Bytes),
  resourceProfile: ResourceProfile
}, { description: "The driver's configuration for its executors" }) {}

/**
 * Asked by an executor at start-up (Spark's `RetrieveSparkAppConfig`).
 *
 * @since 0.1.0
 * @category executor → driver
 */
export class RetrieveAppConfig extends Schema.TaggedRequest<RetrieveAppConfig>()("RetrieveAppConfig", {
  payload: { resourceProfileId: Count },
  success: AppConfig,
  failure: Schema.Never
}, { description: "Fetch the driver's configuration at executor start-up" }) {}

/**
 * An executor registers with its driver; a duplicate or excluded executor is rejected.
 *
 * @since 0.1.0
 * @category executor → driver
 */
export class RegisterExecutor extends Schema.TaggedRequest<RegisterExecutor>()("RegisterExecutor", {
  payload: {
    executorId: ExecutorId,
    executorRef: RefTo<"Executor">(),
    hostname: Schema.String,
    cores: Count,
    logUrls: Properties,
    attributes: Properties,
    resources: Resources,
    resourceProfileId: Count,
    /**
     * Its worker's shuffle service, which serves its map outputs (Kindling's own; Spark's executor registers with
     * the service instead): with one, they outlive the executor.
     */
    shuffleService: Schema.optionalWith(RpcAddress, { exact: true })
  },
  success: Schema.Boolean,
  failure: ExecutorRegistrationRejected
}, { description: "An executor registers with its driver" }) {}

/**
 * The executor is ready; only now does the driver offer it tasks.
 *
 * @since 0.1.0
 * @category executor → driver
 */
export class LaunchedExecutor extends Schema.TaggedClass<LaunchedExecutor>()("LaunchedExecutor", {
  executorId: ExecutorId
}, { description: "The executor is ready for tasks" }) {}

/**
 * A task attempt's new state; `data` is the serialized result or failure once it has ended.
 *
 * @since 0.1.0
 * @category models
 */
export class TaskStatus extends Schema.Class<TaskStatus>("TaskStatus")({
  taskId: Count,
  state: TaskState,
  data: Bytes,
  resources: Resources
}, { description: "A task attempt's new state; data holds the result or failure" }) {}

/**
 * Task attempts changed state (Spark's `StatusUpdate`, one per task there): an executor reports the ends that
 * came in one turn of its event loop in one message. `RUNNING` is accepted but need not be sent — the driver
 * counts an attempt running from its launch, and heartbeats list the attempts still running — so Kindling's
 * executor reports only ends.
 *
 * @since 0.1.0
 * @category executor → driver
 */
export class StatusUpdates extends Schema.TaggedClass<StatusUpdates>()("StatusUpdates", {
  executorId: ExecutorId,
  updates: Schema.Array(TaskStatus)
}, { description: "Task attempts changed state; each carries its result or failure once ended" }) {}

/**
 * The executor is being decommissioned; the driver answers whether it took note.
 *
 * @since 0.1.0
 * @category executor → driver
 */
export class ExecutorDecommissioning extends Schema.TaggedRequest<ExecutorDecommissioning>()(
  "ExecutorDecommissioning",
  { payload: { executorId: ExecutorId }, success: Schema.Boolean, failure: Schema.Never },
  { description: "The executor is being decommissioned" }
) {}

/**
 * A map task finished pushing its shuffle blocks.
 *
 * @since 0.1.0
 * @category executor → driver
 */
export class ShufflePushCompletion extends Schema.TaggedClass<ShufflePushCompletion>()("ShufflePushCompletion", {
  shuffleId: Count,
  shuffleMergeId: Count,
  mapIndex: Count
}, { description: "A map task finished pushing its shuffle blocks" }) {}

/**
 * Asked by an executor that suspects the driver forgot it.
 *
 * @since 0.1.0
 * @category executor → driver
 */
export class IsExecutorAlive extends Schema.TaggedRequest<IsExecutorAlive>()("IsExecutorAlive", {
  payload: { executorId: ExecutorId },
  success: Schema.Boolean,
  failure: Schema.Never
}, { description: "Does the driver still know this executor?" }) {}

/**
 * Why an executor went away: its process exited (with a code), was lost, or was decommissioned.
 *
 * @since 0.1.0
 * @category models
 */
export class ExecutorLossReason extends Schema.Class<ExecutorLossReason>("ExecutorLossReason")({
  message: Schema.String,
  exitCode: Schema.OptionFromNullOr(Schema.Int),
  exitCausedByApp: Schema.Boolean,
  workerHost: Schema.OptionFromNullOr(Schema.String)
}, { description: "Why an executor went away" }) {}

/**
 * Sent by an executor that hit a fatal error, and internally by the driver when it drops an executor.
 *
 * @since 0.1.0
 * @category executor → driver
 */
export class RemoveExecutor extends Schema.TaggedClass<RemoveExecutor>()("RemoveExecutor", {
  executorId: ExecutorId,
  reason: ExecutorLossReason
}, { description: "Drop an executor, for the given reason" }) {}

/**
 * Metrics of one running task, as of the heartbeat.
 *
 * @since 0.1.0
 * @category models
 */
export class TaskMetricsUpdate extends Schema.Class<TaskMetricsUpdate>("TaskMetricsUpdate")({
  taskId: Count,
  metrics: Schema.Record({ key: Schema.String, value: Schema.Finite }).annotations({
    description: "`executorRunTime`: ms since the task started; `recordsRead`: records read from its sources so " +
      "far (when the executor can tell). A receiver ignores keys it does not know."
  })
}, { description: "Metrics of one running task" }) {}

/**
 * @since 0.1.0
 * @category replies
 */
export class HeartbeatResponse extends Schema.TaggedClass<HeartbeatResponse>()("HeartbeatResponse", {
  reregisterBlockManager: Schema.Boolean
}, { description: "The driver's answer to an executor heartbeat" }) {}

/**
 * Spark's `Heartbeat` to the driver's `HeartbeatReceiver`, renamed because the worker's `Heartbeat` has the
 * name; sent every `kindling.executor.heartbeatInterval` with the metrics of running tasks.
 *
 * @since 0.1.0
 * @category executor → driver
 */
export class ExecutorHeartbeat extends Schema.TaggedRequest<ExecutorHeartbeat>()("ExecutorHeartbeat", {
  payload: {
    executorId: ExecutorId,
    taskMetrics: Schema.Array(TaskMetricsUpdate),
    executorMetrics: Schema.Record({ key: Schema.String, value: Schema.Finite }).annotations({
      description: "The executor process's memory in bytes: `processRss`, `heapUsed`, `heapTotal`, `external`, " +
        "`arrayBuffers`. A receiver ignores keys it does not know."
    })
  },
  success: HeartbeatResponse,
  failure: Schema.Never
}, { description: "An executor is alive; carries running tasks' metrics" }) {}

/**
 * Where one map task's output for a reduce partition is, and its size in bytes: the data plane of executor
 * `executorId` at `address` serves it as block `shuffle/<token>/<shuffleId>/<mapIndex>/<reduceId>`.
 *
 * @since 0.1.0
 * @category models
 */
export class MapOutputLocation extends Schema.Class<MapOutputLocation>("MapOutputLocation")({
  mapIndex: Count,
  executorId: ExecutorId,
  address: RpcAddress,
  size: ByteCount,
  /**
   * `address` is the shuffle service of the executor's worker, which serves the block as
   * `shuffle-service/<appId>/<executorId>/…`; else it is the executor's.
   */
  shuffleService: Schema.optionalWith(Schema.Boolean, { exact: true })
}, { description: "Where one map output block is, and its size in bytes" }) {}

/**
 * @since 0.1.0
 * @category replies
 */
export class MapOutputStatuses extends Schema.TaggedClass<MapOutputStatuses>()("MapOutputStatuses", {
  shuffleId: Count,
  reduceId: Count,
  /** One per map partition, in map order; empty blocks included (size 0), so a reader knows it has them all. */
  locations: Schema.Array(MapOutputLocation)
}, { description: "Where every map output of a shuffle for one reduce partition is" }) {}

/**
 * Asked by a reduce task's executor before it fetches (Spark's `GetMapOutputStatuses` to the map output
 * tracker, which lives in the driver's scheduler here). Fails with `MapOutputMissing` while a map partition has
 * no registered output.
 *
 * @since 0.1.0
 * @category executor → driver
 */
export class GetMapOutputStatuses extends Schema.TaggedRequest<GetMapOutputStatuses>()("GetMapOutputStatuses", {
  payload: { shuffleId: Count, reduceId: Count },
  success: MapOutputStatuses,
  failure: MapOutputMissing
}, { description: "Where are the map outputs of a shuffle for one reduce partition?" }) {}

/**
 * An executor stored a block of a persisted dataset (Spark's `UpdateBlockInfo` to the block manager master, which
 * lives in the driver's scheduler here): where it is, at what level, and its bytes in memory and on disk. Sent
 * before the status update of the task that stored it, so a job submitted after that task prefers this
 * executor for the block.
 *
 * @since 0.1.0
 * @category executor → driver
 */
export class UpdateBlockInfo extends Schema.TaggedClass<UpdateBlockInfo>()("UpdateBlockInfo", {
  executorId: ExecutorId,
  blockId: Schema.String,
  storageLevel: StorageLevel,
  memSize: ByteCount,
  diskSize: ByteCount
}, { description: "An executor stored a block of a persisted dataset" }) {}

/**
 * A shuffle an executor wrote map outputs of, with the shuffle's token (what its blocks are served under).
 *
 * @since 0.1.0
 * @category models
 */
export const ShuffleToken = Schema.Struct({
  shuffleId: Count,
  token: Schema.String
}).annotations({ identifier: "ShuffleToken", description: "A shuffle and the token its blocks are served under" })
/**
 * @since 0.1.0
 * @category models
 */
export type ShuffleToken = typeof ShuffleToken.Type

/**
 * A cached block an executor holds, at its storage level.
 *
 * @since 0.1.0
 * @category models
 */
export const HeldBlock = Schema.Struct({
  blockId: Schema.String,
  storageLevel: StorageLevel
}).annotations({ identifier: "HeldBlock", description: "A cached block and its storage level" })
/**
 * @since 0.1.0
 * @category models
 */
export type HeldBlock = typeof HeldBlock.Type

/**
 * A decommissioning executor has no task running any more (Kindling's own; Spark's executors migrate on their
 * own): it serves its shuffle files and cached blocks under `token` (blocks `migration/<token>/…`) and waits for
 * the driver to have them moved to peers, then to stop it.
 *
 * @since 0.1.0
 * @category executor → driver
 */
export class ReadyToMigrate extends Schema.TaggedClass<ReadyToMigrate>()("ReadyToMigrate", {
  executorId: ExecutorId,
  token: Schema.String,
  /** The shuffles it wrote map outputs of. */
  shuffles: Schema.Array(ShuffleToken),
  /** The cached blocks it holds. */
  blocks: Schema.Array(HeldBlock)
}, { description: "A decommissioning executor's tasks are over: its blocks can be moved" }) {}

/**
 * A map output an executor is to copy from a decommissioning one.
 *
 * @since 0.1.0
 * @category models
 */
export const MigratingMapOutput = Schema.Struct({
  shuffleId: Count,
  mapIndex: Count,
  /** The shuffle's token, under which the receiver serves the output from then on. */
  token: Schema.String
}).annotations({
  identifier: "MigratingMapOutput",
  description: "A map output to copy from a decommissioning executor"
})
/**
 * @since 0.1.0
 * @category models
 */
export type MigratingMapOutput = typeof MigratingMapOutput.Type

/**
 * What an executor copied from a decommissioning one (the answer to one `MigrateBlocks`): the map outputs it now
 * serves, the cached blocks it now holds (each also told with `UpdateBlockInfo`), and why the others were not.
 *
 * @since 0.1.0
 * @category executor → driver
 */
export class BlocksMigrated extends Schema.TaggedClass<BlocksMigrated>()("BlocksMigrated", {
  executorId: ExecutorId,
  from: ExecutorId,
  mapOutputs: Schema.Array(Schema.Struct({ shuffleId: Count, mapIndex: Count })),
  blocks: Schema.Array(Schema.String),
  failures: Schema.Array(Schema.String)
}, { description: "Map outputs and cached blocks copied from a decommissioning executor" }) {}

/**
 * Everything an executor sends to its driver.
 *
 * @since 0.1.0
 * @category unions
 */
export const ExecutorToDriver = Schema.Union(
  RetrieveAppConfig,
  RegisterExecutor,
  LaunchedExecutor,
  StatusUpdates,
  ExecutorDecommissioning,
  ShufflePushCompletion,
  IsExecutorAlive,
  RemoveExecutor,
  ExecutorHeartbeat,
  GetMapOutputStatuses,
  UpdateBlockInfo,
  ReadyToMigrate,
  BlocksMigrated
)
/**
 * @since 0.1.0
 * @category unions
 */
export type ExecutorToDriver = typeof ExecutorToDriver.Type

/**
 * One task attempt to run. The fields are Spark's `TaskDescription`; `serializedTask` holds the partition's plan, and
 * `needs` (ours) what the executor does for it besides handing it to a task thread.
 *
 * @since 0.1.0
 * @category models
 */
export class TaskDescription extends Schema.Class<TaskDescription>("TaskDescription")({
  taskId: Count,
  attemptNumber: Count,
  name: Schema.String,
  index: Count,
  partitionId: Count,
  stageId: Count,
  stageAttemptId: Count,
  cpus: Count,
  properties: Properties,
  resources: Resources,
  serializedTask: Bytes,
  /** What the executor gathers before the task runs, and serves after: it never decodes `serializedTask`. */
  needs: TaskNeeds
}, { description: "One task attempt to run" }) {}

/**
 * Run these task attempts (Spark's `LaunchTask`, one per task there): everything one round of offers gave this
 * executor, in one message, in the order they were launched.
 *
 * @since 0.1.0
 * @category driver → executor
 */
export class LaunchTasks extends Schema.TaggedClass<LaunchTasks>()("LaunchTasks", {
  executorId: ExecutorId,
  tasks: Schema.Array(TaskDescription)
}, { description: "Run these task attempts" }) {}

/**
 * @since 0.1.0
 * @category driver → executor
 */
export class KillTask extends Schema.TaggedClass<KillTask>()("KillTask", {
  taskId: Count,
  executor: ExecutorId,
  interruptThread: Schema.Boolean,
  reason: Schema.String
}, { description: "Kill a running task attempt" }) {}

/**
 * The executor stops (it then shuts itself down).
 *
 * @since 0.1.0
 * @category driver → executor
 */
export class StopExecutor extends Schema.TaggedClass<StopExecutor>()("StopExecutor", {}, {
  description: "Stop the executor"
}) {}

/**
 * The executor's worker is being decommissioned (Spark's `DecommissionExecutor`): it is offered no new task; the
 * tasks it runs finish, then it sends `ReadyToMigrate` and serves its blocks until the driver stops it.
 *
 * @since 0.1.0
 * @category driver → executor
 */
export class DecommissionExecutor extends Schema.TaggedClass<DecommissionExecutor>()("DecommissionExecutor", {}, {
  description: "Decommission the executor: finish running tasks, then offer its blocks for migration"
}) {}

/**
 * @since 0.1.0
 * @category driver → executor
 */
export class UpdateDelegationTokens extends Schema.TaggedClass<UpdateDelegationTokens>()("UpdateDelegationTokens", {
  tokens: Bytes
}, { description: "New delegation tokens for the executor" }) {}

/**
 * Drop the cached blocks of dataset `rddId` (Spark's `RemoveRdd`): the app unpersisted it.
 *
 * @since 0.1.0
 * @category driver → executor
 */
export class RemoveRdd extends Schema.TaggedClass<RemoveRdd>()("RemoveRdd", {
  rddId: Count
}, { description: "Drop the cached blocks of a dataset" }) {}

/**
 * Another executor of the app is lost (its worker was removed, say): fetches from it fail at once, now and later,
 * and their tasks end in `FetchFailed`, so that its map outputs are computed again without waiting for those
 * fetches to time out. Kindling's own: Spark's executors find out only when their fetches give up.
 *
 * @since 0.1.0
 * @category driver → executor
 */
export class PeerLost extends Schema.TaggedClass<PeerLost>()("PeerLost", {
  executorId: ExecutorId,
  address: RpcAddress
}, { description: "Another executor of the app is lost: fail fetches from it at once" }) {}

/**
 * Copy these map outputs and cached blocks from a decommissioning executor, which serves them under `token`
 * (Kindling's own): the receiver answers with one `BlocksMigrated`, and serves or holds what it copied from then on.
 *
 * @since 0.1.0
 * @category driver → executor
 */
export class MigrateBlocks extends Schema.TaggedClass<MigrateBlocks>()("MigrateBlocks", {
  from: ExecutorId,
  address: RpcAddress,
  token: Schema.String,
  mapOutputs: Schema.Array(MigratingMapOutput),
  blocks: Schema.Array(HeldBlock)
}, { description: "Copy map outputs and cached blocks from a decommissioning executor" }) {}

/**
 * Everything a driver sends to its executors.
 *
 * @since 0.1.0
 * @category unions
 */
export const DriverToExecutor = Schema.Union(
  LaunchTasks,
  KillTask,
  StopExecutor,
  DecommissionExecutor,
  UpdateDelegationTokens,
  RemoveRdd,
  PeerLost,
  MigrateBlocks
)
/**
 * @since 0.1.0
 * @category unions
 */
export type DriverToExecutor = typeof DriverToExecutor.Type

/**
 * The replies a driver gives to executor asks.
 *
 * @since 0.1.0
 * @category unions
 */
export const DriverReply = Schema.Union(AppConfig, HeartbeatResponse, MapOutputStatuses)
/**
 * @since 0.1.0
 * @category unions
 */
export type DriverReply = typeof DriverReply.Type
