/**
 * The configuration of an application: how it is submitted, the resources of its driver and executors, and how
 * its driver schedules tasks. `kindling submit` reads the submission and driver keys; the driver the others.
 *
 * @since 0.1.0
 */
import { type Conf, Key, Registry, ValueType } from "@kindling/conf"
import { ObjectStore } from "@kindling/data"
import { KernelConf, TlsConf } from "@kindling/kernel"
import { ProtocolConf } from "@kindling/rpc"
import type * as DriverCore from "./DriverCore.js"
import type * as ExecutorAllocation from "./ExecutorAllocation.js"

const minExecutors = Key.make("kindling.dynamicAllocation.minExecutors", ValueType.int({ min: 0 }), {
  default: "0",
  description: "Driver, with dynamic allocation: the fewest executors the app keeps."
})
const backlogTimeout = Key.make("kindling.dynamicAllocation.schedulerBacklogTimeout", ValueType.duration("ms"), {
  default: "1s",
  description: "Driver, with dynamic allocation: tasks that wait this long make the app ask for more executors."
})

// Dynamic allocation (Spark's spark.dynamicAllocation.*): the app asks the master for executors as its tasks wait
// and gives back those left idle.
const allocationKeys = {
  dynamicAllocation: Key.make("kindling.dynamicAllocation.enabled", ValueType.boolean, {
    default: "false",
    description: "Driver, on a cluster: size the app's executors to its backlog — ask the master for more while " +
      "tasks wait (1, 2, 4… more every sustainedSchedulerBacklogTimeout) and give back those idle past " +
      "executorIdleTimeout, between minExecutors and maxExecutors. Off in local modes."
  }),
  minExecutors,
  maxExecutors: Key.make("kindling.dynamicAllocation.maxExecutors", ValueType.int({ min: 0 }), {
    default: "2147483647",
    description: "Driver, with dynamic allocation: the most executors the app asks for."
  }),
  initialExecutors: Key.make("kindling.dynamicAllocation.initialExecutors", ValueType.int({ min: 0 }), {
    fallback: minExecutors,
    description: "Driver, with dynamic allocation: the executors the app starts with."
  }),
  executorAllocationRatio: Key.make(
    "kindling.dynamicAllocation.executorAllocationRatio",
    ValueType.number({ min: Number.MIN_VALUE, max: 1 }),
    {
      default: "1",
      description: "Driver, with dynamic allocation: the share of the executors its waiting and running tasks " +
        "could use that the app asks for (fewer executors, each running more of them in turn)."
    }
  ),
  schedulerBacklogTimeout: backlogTimeout,
  sustainedSchedulerBacklogTimeout: Key.make(
    "kindling.dynamicAllocation.sustainedSchedulerBacklogTimeout",
    ValueType.duration("ms"),
    {
      fallback: backlogTimeout,
      description: "Driver, with dynamic allocation: while tasks keep waiting, how often the app asks for more again."
    }
  ),
  executorIdleTimeout: Key.make("kindling.dynamicAllocation.executorIdleTimeout", ValueType.duration("ms"), {
    default: "60s",
    description: "Driver, with dynamic allocation: an executor that has run no task for this long is given back."
  }),
  cachedExecutorIdleTimeout: Key.make(
    "kindling.dynamicAllocation.cachedExecutorIdleTimeout",
    ValueType.duration("ms"),
    {
      description: "Driver, with dynamic allocation: the same for an executor that holds cached blocks (unset: never)."
    }
  ),
  shuffleTracking: Key.make("kindling.dynamicAllocation.shuffleTracking.enabled", ValueType.boolean, {
    default: "true",
    description: "Driver, with dynamic allocation: an executor holding map outputs a running job reads is kept " +
      "(for kindling.dynamicAllocation.shuffleTracking.timeout), since no shuffle service serves them once it goes."
  }),
  shuffleTrackingTimeout: Key.make(
    "kindling.dynamicAllocation.shuffleTracking.timeout",
    ValueType.duration("ms"),
    {
      description: "Driver, with shuffle tracking: how long an idle executor holding such map outputs is kept " +
        "(unset: as long as they are needed)."
    }
  )
}

const storageDecommission = Key.make("kindling.storage.decommission.enabled", ValueType.boolean, {
  default: "true",
  description: "Driver: a decommissioning executor's map outputs and cached blocks are copied to other executors " +
    "before it stops, so nothing of them is computed again. Off by default in Spark; here decommissioning only " +
    "happens when an operator asks for it, so it is on."
})

// Decommissioning (Spark's spark.executor.decommission.* and spark.storage.decommission.*): what an app does with
// the executors of a worker taken out of service.
const decommissionKeys = {
  storageDecommission,
  shuffleBlocksDecommission: Key.make("kindling.storage.decommission.shuffleBlocks.enabled", ValueType.boolean, {
    default: "true",
    description: "Driver, with kindling.storage.decommission.enabled: map outputs are copied."
  }),
  rddBlocksDecommission: Key.make("kindling.storage.decommission.rddBlocks.enabled", ValueType.boolean, {
    default: "true",
    description: "Driver, with kindling.storage.decommission.enabled: cached blocks are copied."
  }),
  decommissionPeerWait: Key.make("kindling.storage.decommission.peerWaitTimeout", ValueType.duration("ms"), {
    default: "30s",
    description: "Driver (not in Spark): how long a decommissioning executor with no other executor to copy its " +
      "blocks to waits for one before it stops and leaves them to be computed again."
  }),
  decommissionKillInterval: Key.make("kindling.executor.decommission.killInterval", ValueType.duration("ms"), {
    description: "Driver: tasks still running this long after their executor began decommissioning get a copy on " +
      "another executor (speculation on or not); the first to finish counts. Unset: they run to their end."
  }),
  decommissionForceKillTimeout: Key.make(
    "kindling.executor.decommission.forceKillTimeout",
    ValueType.duration("ms"),
    {
      description: "Driver: a decommissioning executor is stopped this long after its decommissioning began, " +
        "whatever it still runs or holds. Unset: it stops once drained and its blocks are copied."
    }
  )
}

/**
 * @since 0.1.0
 * @category keys
 */
export const keys = {
  master: Key.make("kindling.master", ValueType.string, {
    description: "Submission: the master URL, kindling://host:port[,host:port…] (--master)."
  }),
  appName: Key.make("kindling.app.name", ValueType.string, {
    description: "Submission: the application's name (--name)."
  }),
  driverHost: Key.make("kindling.driver.host", ValueType.string, {
    description: "Client mode: the address the driver listens on, which executors connect to; unset, this host's name."
  }),
  deployMode: Key.make("kindling.submit.deployMode", ValueType.literal("client", "cluster"), {
    default: "client",
    description: "Submission: run the driver in the submitting process (client) or on a worker (cluster)."
  }),
  waitAppCompletion: Key.make("kindling.standalone.submit.waitAppCompletion", ValueType.boolean, {
    default: "false",
    description: "Submission, cluster mode: wait until the driver finishes, not only until it is accepted."
  }),
  driverMemory: Key.make("kindling.driver.memory", ValueType.memory, {
    default: "1g",
    description: "Cluster mode: memory of the driver, charged against its worker's."
  }),
  driverCores: Key.make("kindling.driver.cores", ValueType.int({ min: 1 }), {
    default: "1",
    description: "Cluster mode: cores of the driver, charged against its worker's."
  }),
  driverSupervise: Key.make("kindling.driver.supervise", ValueType.boolean, {
    default: "false",
    description: "Cluster mode: restart the driver when it exits with a non-zero code."
  }),
  executorMemory: Key.make("kindling.executor.memory", ValueType.memory, {
    default: "1g",
    description: "Memory of each executor, charged against its worker's: the whole process's, of which the executor " +
      "sets aside what it holds once started and gives its tasks' spills a quarter of the rest, its fetches a fifth " +
      "and its cache three tenths (lowering the spill threshold and maxSizeInFlight when they ask for more)."
  }),
  executorCores: Key.make("kindling.executor.cores", ValueType.int({ min: 1 }), {
    description: "Cores of each executor; unset, an app gets one executor per worker with all its free cores."
  }),
  coresMax: Key.make("kindling.cores.max", ValueType.int({ min: 1 }), {
    description: "The most cores an application uses across the cluster; unset, kindling.deploy.defaultCores."
  }),
  executorHeartbeatInterval: Key.make("kindling.executor.heartbeatInterval", ValueType.duration("ms"), {
    default: "10s",
    description: "Executor: how often it reports to the driver that it is alive, with task metrics."
  }),
  reviveInterval: Key.make("kindling.scheduler.revive.interval", ValueType.duration("ms"), {
    default: "1s",
    description: "Driver: how often free executor cores are offered to waiting tasks."
  }),
  taskMaxFailures: Key.make("kindling.task.maxFailures", ValueType.int({ min: 1 }), {
    default: "4",
    description: "Driver: a task failing this many times fails its job."
  }),
  taskCpus: Key.make("kindling.task.cpus", ValueType.int({ min: 1 }), {
    default: "1",
    description: "Driver: cores each task takes on its executor."
  }),
  defaultParallelism: Key.make("kindling.default.parallelism", ValueType.int({ min: 1 }), {
    description: "Driver: the partitions of a shuffle given no count (reduceByKey, groupByKey, join, cogroup, " +
      "distinct, sortByKey, …; a join keeps a hash partitioning one of its datasets already has, as Spark's " +
      "defaultPartitioner does) and the slices of parallelize and range given none (Spark's " +
      "spark.default.parallelism). Unset: a shuffle takes as many partitions as the largest dataset it reads; " +
      "parallelize and range take N of local[N], or the cores of the app's executors on a cluster (at least 2)."
  }),
  fileTimeout: Key.make("kindling.driver.fileTimeout", ValueType.duration("ms"), {
    default: "30s",
    description: "Driver (not in Spark): the longest one operation on a local file the driver does itself (listing " +
      "inputs and reading their heads, making and finishing output and checkpoint directories) may take; one that " +
      "takes longer fails its action with ETIMEDOUT, so that a file system that does not answer (a hung mount, a " +
      "FIFO) stalls no driver."
  }),
  minRegisteredResourcesRatio: Key.make(
    "kindling.scheduler.minRegisteredResourcesRatio",
    ValueType.number({ min: 0, max: 1 }),
    {
      default: "0",
      description: "Driver, on a cluster: the share of kindling.cores.max that must have registered before the app " +
        "starts (waiting at most kindling.scheduler.maxRegisteredResourcesWaitingTime)."
    }
  ),
  maxRegisteredResourcesWaitingTime: Key.make(
    "kindling.scheduler.maxRegisteredResourcesWaitingTime",
    ValueType.duration("ms"),
    {
      default: "30s",
      description: "Driver: the longest the app waits for kindling.scheduler.minRegisteredResourcesRatio; also, a " +
        "job that has had no executor for this long makes the app warn that it has no resources."
    }
  ),
  uiEnabled: Key.make("kindling.ui.enabled", ValueType.boolean, {
    default: "true",
    description: "Driver: serve the app's web UI (jobs, stages, storage, environment, executors, /api/v1, metrics)."
  }),
  uiPort: Key.make("kindling.ui.port", ValueType.port, {
    default: "4040",
    description: "Driver: the app UI's port; when taken, the next free one (up to kindling.port.maxRetries); 0 " +
      "picks any."
  }),
  uiRetainedJobs: Key.make("kindling.ui.retainedJobs", ValueType.int({ min: 1 }), {
    default: "1000",
    description: "Driver: finished jobs the app UI remembers."
  }),
  uiRetainedStages: Key.make("kindling.ui.retainedStages", ValueType.int({ min: 1 }), {
    default: "1000",
    description: "Driver: finished stage attempts the app UI remembers."
  }),
  uiRetainedTasks: Key.make("kindling.ui.retainedTasks", ValueType.int({ min: 1 }), {
    default: "100000",
    description: "Driver: tasks per stage attempt the app UI remembers (finished ones are forgotten first)."
  }),
  eventLogEnabled: Key.make("kindling.eventLog.enabled", ValueType.boolean, {
    default: "false",
    description: "Driver: write the app's events to a log in Spark's event-log format, for the history server."
  }),
  eventLogDir: Key.make("kindling.eventLog.dir", ValueType.string, {
    default: "file:/tmp/kindling-events",
    description: "Driver: the folder event logs are written to (a path or a file: URL); it must exist."
  }),
  s3aEndpoint: Key.make("kindling.hadoop.fs.s3a.endpoint", ValueType.string, {
    description: "Object storage: the S3-compatible store s3:// paths are on (a URL); unset, AWS_ENDPOINT_URL_S3 or " +
      "AWS's own. The driver and its executors read it."
  }),
  s3aRegion: Key.make("kindling.hadoop.fs.s3a.endpoint.region", ValueType.string, {
    description: "Object storage: the region requests are signed for; unset, AWS_REGION or us-east-1."
  }),
  s3aAccessKey: Key.make("kindling.hadoop.fs.s3a.access.key", ValueType.string, {
    secret: true,
    description: "Object storage: the access key id; unset, AWS_ACCESS_KEY_ID."
  }),
  s3aSecretKey: Key.make("kindling.hadoop.fs.s3a.secret.key", ValueType.string, {
    secret: true,
    description: "Object storage: the secret access key; unset, AWS_SECRET_ACCESS_KEY."
  }),
  s3aSessionToken: Key.make("kindling.hadoop.fs.s3a.session.token", ValueType.string, {
    secret: true,
    description: "Object storage: a session token of temporary credentials; unset, AWS_SESSION_TOKEN."
  }),
  s3aPathStyleAccess: Key.make("kindling.hadoop.fs.s3a.path.style.access", ValueType.boolean, {
    description: "Object storage: the bucket in the path rather than the host name; unset, on when an endpoint is " +
      "given (as S3-compatible stores want)."
  }),
  eventLogCompress: Key.make("kindling.eventLog.compress", ValueType.boolean, {
    default: "false",
    description: "Driver: gzip the event log (`.gz`; Kindling's history server reads it, Spark's does not)."
  }),
  eventLogRollingEnabled: Key.make("kindling.eventLog.rolling.enabled", ValueType.boolean, {
    default: "false",
    description: "Driver: write the event log as a folder of files of about kindling.eventLog.rolling.maxFileSize " +
      "each (Spark's `eventlog_v2_<appId>` layout) instead of one file."
  }),
  eventLogRollingMaxFileSize: Key.make("kindling.eventLog.rolling.maxFileSize", ValueType.memory, {
    default: "128m",
    description: "Driver: the size past which a rolling event log goes on in a new file."
  }),
  showConsoleProgress: Key.make("kindling.ui.showConsoleProgress", ValueType.boolean, {
    description: "Driver: draw the console progress bar on stderr; unset, when stderr is a terminal."
  }),
  maxResultSize: Key.make("kindling.driver.maxResultSize", ValueType.memory, {
    default: "1g",
    description: "Driver: the most result bytes one job brings back; a job over it fails."
  }),
  maxDirectResultSize: Key.make("kindling.task.maxDirectResultSize", ValueType.int({ min: 1 }), {
    default: "1048576",
    description: "Executor: a task result of more bytes than this is fetched by the driver from the executor's " +
      "data plane instead of travelling in the task's status update."
  }),
  schedulerMode: Key.make("kindling.scheduler.mode", ValueType.literal("FIFO", "FAIR"), {
    default: "FIFO",
    description: "Driver: the order jobs get cores in: one after the other, or shared between pools."
  }),
  speculation: Key.make("kindling.speculation", ValueType.boolean, {
    default: "false",
    description: "Driver: launch a copy of a task that runs much longer than its stage's others."
  }),
  speculationInterval: Key.make("kindling.speculation.interval", ValueType.duration("ms"), {
    default: "100ms",
    description: "Driver: how often stragglers are looked for."
  }),
  speculationMultiplier: Key.make(
    "kindling.speculation.multiplier",
    ValueType.number({ min: 1, max: Number.MAX_VALUE }),
    {
      default: "1.5",
      description: "Driver: a straggler runs this many times longer than the median successful task."
    }
  ),
  speculationQuantile: Key.make("kindling.speculation.quantile", ValueType.number({ min: 0, max: 1 }), {
    default: "0.75",
    description: "Driver: the fraction of a stage's tasks that must be done before stragglers are looked for."
  }),
  speculationMinTaskRuntime: Key.make("kindling.speculation.minTaskRuntime", ValueType.duration("ms"), {
    default: "100ms",
    description: "Driver: a task is never a straggler before it has run this long."
  }),
  stageMaxConsecutiveAttempts: Key.make("kindling.stage.maxConsecutiveAttempts", ValueType.int({ min: 1 }), {
    default: "4",
    description: "Driver: a stage whose attempts fail this many times in a row on fetch failures fails its jobs."
  }),
  shuffleSpillThreshold: Key.make("kindling.shuffle.spill.threshold", ValueType.memory, {
    default: "64m",
    description: "Executor: the memory (as estimated) a task's shuffle write, aggregation or sort holds before it " +
      "spills to the local dir."
  }),
  queuedTasksPerCore: Key.make("kindling.scheduler.queuedTasksPerCore", ValueType.int({ min: 0 }), {
    default: "16",
    description: "Driver: tasks per core an executor is sent beyond those it can run at once, which wait there for " +
      "a core, so that the next task is at hand when one ends, and ends and launches cross the wire in batches. " +
      "Only a stage whose tasks prove short (most of those done took under 25 ms, so that at most some 0.4 s of " +
      "work waits per core at the default) is queued, and only once every free core is taken; 0 sends no more " +
      "than the free cores, as Spark. A waiting task's running time, which " +
      "speculation judges, starts when it takes a core; a decommissioned executor's waiting tasks run elsewhere."
  }),
  localityWait: Key.make("kindling.locality.wait", ValueType.duration("ms"), {
    default: "3s",
    description: "Driver: how long a task that would rather run where its persisted partition is waits for a core " +
      "there (then on that host) before it runs anywhere."
  }),
  reducerMaxSizeInFlight: Key.make("kindling.reducer.maxSizeInFlight", ValueType.memory, {
    default: "48m",
    description: "Executor: the most shuffle bytes it fetches at once, over all its reduce tasks."
  }),
  maxRemoteBlockSizeFetchToMem: Key.make("kindling.network.maxRemoteBlockSizeFetchToMem", ValueType.memory, {
    default: "1m",
    description: "Executor: a shuffle block fetched from another executor goes into memory up to this size, and " +
      "into a file of its local dir past it."
  }),
  ...allocationKeys,
  ...decommissionKeys
}

/**
 * @since 0.1.0
 * @category keys
 */
export const group = Registry.group({
  title: "Application",
  description: "Read by `kindling submit` and by the application's driver and executors.",
  keys
})

/**
 * Dynamic allocation's settings, or undefined when it is off.
 *
 * @since 0.1.0
 * @category constructors
 */
export const allocationConfig = (conf: Conf.Conf<AppKeys>): ExecutorAllocation.Config | undefined =>
  !conf.get(keys.dynamicAllocation) ? undefined : {
    minExecutors: conf.get(keys.minExecutors),
    maxExecutors: conf.get(keys.maxExecutors),
    initialExecutors: conf.get(keys.initialExecutors),
    // An executor's cores, when the app does not say, count as one task at a time, as Spark counts them.
    tasksPerExecutor: Math.max(1, Math.floor((conf.get(keys.executorCores) ?? 1) / conf.get(keys.taskCpus))),
    allocationRatio: conf.get(keys.executorAllocationRatio),
    backlogTimeoutMillis: conf.get(keys.schedulerBacklogTimeout),
    sustainedBacklogTimeoutMillis: conf.get(keys.sustainedSchedulerBacklogTimeout),
    idleTimeoutMillis: conf.get(keys.executorIdleTimeout),
    cachedIdleTimeoutMillis: conf.get(keys.cachedExecutorIdleTimeout) ?? Infinity,
    shuffleTracking: conf.get(keys.shuffleTracking),
    shuffleTrackingTimeoutMillis: conf.get(keys.shuffleTrackingTimeout) ?? Infinity
  }

/**
 * What decommissioning does with the app's executors.
 *
 * @since 0.1.0
 * @category constructors
 */
export const decommissionConfig = (conf: Conf.Conf<AppKeys>): NonNullable<DriverCore.Config["decommission"]> => {
  const migrate = conf.get(keys.storageDecommission)
  return {
    killIntervalMillis: conf.get(keys.decommissionKillInterval),
    forceKillTimeoutMillis: conf.get(keys.decommissionForceKillTimeout),
    migrateShuffles: migrate && conf.get(keys.shuffleBlocksDecommission),
    migrateBlocks: migrate && conf.get(keys.rddBlocksDecommission),
    peerWaitMillis: conf.get(keys.decommissionPeerWait)
  }
}

/**
 * The driver core's configuration; `maxFailures` is the mode's (`kindling.task.maxFailures` on a cluster, F of
 * `local[N,F]`, 1 in plain `local`, as Spark), `seed` the task scheduler's randomness (its shuffled offers), which
 * the shell draws: a configuration is a function of the settings alone.
 *
 * @since 0.1.0
 * @category constructors
 */
export const coreConfig = (conf: Conf.Conf<AppKeys>, maxFailures: number, seed: number): DriverCore.Config => ({
  dag: {
    maxConsecutiveAttempts: conf.get(keys.stageMaxConsecutiveAttempts),
    resubmitDelayMillis: 200
  },
  scheduler: {
    maxFailures,
    cpusPerTask: conf.get(keys.taskCpus),
    mode: conf.get(keys.schedulerMode),
    speculation: {
      enabled: conf.get(keys.speculation),
      multiplier: conf.get(keys.speculationMultiplier),
      quantile: conf.get(keys.speculationQuantile),
      minTaskRuntimeMillis: conf.get(keys.speculationMinTaskRuntime)
    },
    seed,
    localityWaitMillis: conf.get(keys.localityWait),
    queuedTasksPerCore: conf.get(keys.queuedTasksPerCore)
  },
  reviveIntervalMillis: conf.get(keys.reviveInterval),
  executorTimeoutMillis: conf.get(ProtocolConf.keys.networkTimeout),
  speculationIntervalMillis: conf.get(keys.speculationInterval),
  maxResultSize: conf.get(keys.maxResultSize) * 1024 * 1024,
  starvationWarningMillis: conf.get(keys.maxRegisteredResourcesWaitingTime),
  // What executors read at start-up (Spark's `RetrieveSparkAppConfig`): the milliseconds, as numbers.
  properties: [
    [keys.executorHeartbeatInterval.name, String(conf.get(keys.executorHeartbeatInterval))],
    [ProtocolConf.keys.networkTimeout.name, String(conf.get(ProtocolConf.keys.networkTimeout))],
    [ProtocolConf.keys.askTimeout.name, String(conf.get(ProtocolConf.keys.askTimeout))],
    [keys.maxDirectResultSize.name, String(conf.get(keys.maxDirectResultSize))],
    // Sizes in bytes, as numbers.
    [keys.executorMemory.name, String(conf.get(keys.executorMemory) * 1024 * 1024)],
    [keys.shuffleSpillThreshold.name, String(conf.get(keys.shuffleSpillThreshold) * 1024 * 1024)],
    [keys.reducerMaxSizeInFlight.name, String(conf.get(keys.reducerMaxSizeInFlight) * 1024 * 1024)],
    [keys.maxRemoteBlockSizeFetchToMem.name, String(conf.get(keys.maxRemoteBlockSizeFetchToMem) * 1024 * 1024)],
    [ProtocolConf.keys.shuffleServiceEnabled.name, String(conf.get(ProtocolConf.keys.shuffleServiceEnabled))],
    // The object store's settings (its keys among them: the driver's link to its executors is authenticated, and
    // encrypted where the cluster's network is): executors make their tasks' object store with them.
    ...s3aKeys.flatMap((key): Array<readonly [string, string]> => {
      const value = conf.get(key)
      return value === undefined ? [] : [[key.name, String(value)]]
    })
  ]
})

/**
 * The object store the `kindling.hadoop.fs.s3a.*` keys name, else AWS's usual variables in `environment` (the
 * process's, which the shell reading the configuration hands in): where the driver's own reads and writes of
 * `s3://` paths go, and in local mode its tasks'.
 *
 * @since 0.1.0
 * @category constructors
 */
export const objectStore = (
  conf: Conf.Conf<AppKeys>,
  environment: Readonly<Record<string, string | undefined>>
): ObjectStore.S3Settings =>
  ObjectStore.settingsOf(
    Object.fromEntries(s3aKeys.map((key) => {
      const value = conf.get(key)
      return [key.name, value === undefined ? undefined : String(value)]
    })),
    environment
  )

const s3aKeys = [
  keys.s3aEndpoint,
  keys.s3aRegion,
  keys.s3aAccessKey,
  keys.s3aSecretKey,
  keys.s3aSessionToken,
  keys.s3aPathStyleAccess
] as const

/**
 * Every key a driver reads: the app's, the protocol's and the kernel's.
 *
 * @since 0.1.0
 * @category models
 */
export type AppKeys =
  | Registry.KeyOf<typeof group>
  | Registry.KeyOf<typeof ProtocolConf.group>
  | Registry.KeyOf<typeof KernelConf.group>
  | Registry.KeyOf<typeof TlsConf.group>

/**
 * The registry of those keys, for a driver process that loads its configuration itself.
 *
 * @since 0.1.0
 * @category constants
 */
export const appRegistry: Registry.Registry<AppKeys> = Registry.make(
  group,
  ProtocolConf.group,
  KernelConf.group,
  TlsConf.group
)
