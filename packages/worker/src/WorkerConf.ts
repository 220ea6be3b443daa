/**
 * The configuration the worker reads: its web UI, the cleanup of old work directories, how it stops and
 * supervises what it runs, and how it registers with the masters. Its heartbeat interval follows
 * `kindling.worker.timeout`, which the master reads too (`ProtocolConf`).
 *
 * @since 0.1.0
 */
import { type Conf, Key, Registry, ValueType } from "@kindling/conf"
import { ProtocolConf } from "@kindling/rpc"
import type * as Runners from "./Runners.js"
import type * as Worker from "./Worker.js"

/**
 * @since 0.1.0
 * @category keys
 */
export const keys = {
  uiPort: Key.make("kindling.worker.ui.port", ValueType.port, {
    default: "8081",
    description: "Port of the web UI."
  }),
  cleanupEnabled: Key.make("kindling.worker.cleanup.enabled", ValueType.boolean, {
    default: "false",
    description: "Periodically delete the work directories of applications that have stopped."
  }),
  cleanupInterval: Key.make("kindling.worker.cleanup.interval", ValueType.duration("s"), {
    default: "1800s",
    description: "How often the cleanup runs (the first run is one interval after start)."
  }),
  cleanupAppDataTtl: Key.make("kindling.worker.cleanup.appDataTtl", ValueType.duration("s"), {
    default: "604800s",
    description: "The cleanup deletes an application's directory once no file in it is newer than this."
  }),
  uiRetainedExecutors: Key.make("kindling.worker.ui.retainedExecutors", ValueType.int({ min: 0 }), {
    default: "1000",
    description: "Finished executors kept for the UI; when full, the oldest tenth is dropped."
  }),
  uiRetainedDrivers: Key.make("kindling.worker.ui.retainedDrivers", ValueType.int({ min: 0 }), {
    default: "1000",
    description: "Finished drivers kept for the UI; when full, the oldest tenth is dropped."
  }),
  driverTerminateTimeout: Key.make("kindling.worker.driverTerminateTimeout", ValueType.duration("ms"), {
    default: "10s",
    description: "How long a killed driver may take to exit before it is killed forcibly."
  }),
  driverFencingEnabled: Key.make("kindling.worker.driverFencing.enabled", ValueType.boolean, {
    default: "true",
    description: "Fence supervised drivers (not in Spark), so that two copies of one never run at once: a worker " +
      "that no leading master has acknowledged for kindling.worker.driverFencing.lease stops them, and a master " +
      "relaunches a lost worker's supervised drivers only after that lease plus kindling.worker." +
      "driverTerminateTimeout. Off: Spark's behaviour, where a cut-off copy runs on beside its relaunch."
  }),
  driverFencingLease: Key.make("kindling.worker.driverFencing.lease", ValueType.duration("ms"), {
    description: "The fencing lease (see kindling.worker.driverFencing.enabled). Unset: twice " +
      "kindling.worker.timeout, longer than a failover to a standby master."
  }),
  decommissionEnabled: Key.make("kindling.decommission.enabled", ValueType.boolean, {
    default: "true",
    description: "Whether a worker can be decommissioned (kindling decommission, the master UI's /workers/kill, " +
      "or kindling.worker.decommission.signal): it then takes no new work, its executors finish their tasks and " +
      "move their blocks to peers, and it exits once empty. Off by default in Spark; here it happens only when " +
      "an operator asks, so it is on."
  }),
  decommissionSignal: Key.make("kindling.worker.decommission.signal", ValueType.string, {
    default: "PWR",
    description:
      "The signal (without SIG) that makes a worker decommission itself, as Spark's decommission-worker.sh sends."
  }),
  executorTerminateTimeout: Key.make("kindling.worker.executorTerminateTimeout", ValueType.duration("ms"), {
    default: "10s",
    description: "How long a killed executor may take to exit before it is killed forcibly (fixed in Spark)."
  }),
  executorStateSyncMaxAttempts: Key.make("kindling.worker.executorStateSync.maxAttempts", ValueType.int({ min: 1 }), {
    default: "5",
    description: "Tries to tell the master an executor's state before the worker exits."
  }),
  registerInitialInterval: Key.make("kindling.worker.register.initialInterval", ValueType.duration("s"), {
    default: "10s",
    description: "Interval of the first registration retries, times a random 0.5–1.5 (fixed in Spark)."
  }),
  registerInitialAttempts: Key.make("kindling.worker.register.initialAttempts", ValueType.int({ min: 1 }), {
    default: "6",
    description: "Registration attempts at the initial interval before the prolonged one (fixed in Spark)."
  }),
  registerProlongedInterval: Key.make("kindling.worker.register.prolongedInterval", ValueType.duration("s"), {
    default: "60s",
    description: "Interval of the later registration retries, times the same random factor (fixed in Spark)."
  }),
  registerMaxAttempts: Key.make("kindling.worker.register.maxAttempts", ValueType.int({ min: 1 }), {
    default: "16",
    description: "Registration attempts in all before the worker gives up and exits (fixed in Spark)."
  }),
  superviseInitialBackoff: Key.make("kindling.worker.supervise.initialBackoff", ValueType.duration("s"), {
    default: "1s",
    description: "First wait before restarting a failed supervised driver; it doubles (fixed in Spark)."
  })
}

/**
 * @since 0.1.0
 * @category keys
 */
export const group = Registry.group({
  title: "Worker",
  description: "Read by `kindling worker`.",
  keys
})

/**
 * The keys a worker reads: its own and the protocol's.
 *
 * @since 0.1.0
 * @category keys
 */
export type WorkerKeys = Registry.KeyOf<typeof group> | Registry.KeyOf<typeof ProtocolConf.group>

/**
 * The worker's settings, but for who and where it is and what it offers, which its shell knows.
 *
 * @since 0.1.0
 * @category constructors
 */
export const workerConfig = (conf: Conf.Conf<WorkerKeys>): Pick<
  Worker.Options,
  | "workerTimeoutMillis"
  | "registration"
  | "cleanup"
  | "retainedExecutors"
  | "retainedDrivers"
  | "executorStateSyncMaxAttempts"
  | "askTimeoutMillis"
  | "driverFencing"
  | "decommissionEnabled"
  | "superviseInitialBackoffMillis"
> => ({
  workerTimeoutMillis: conf.get(ProtocolConf.keys.workerTimeout),
  registration: {
    initialIntervalMillis: conf.get(keys.registerInitialInterval),
    initialAttempts: conf.get(keys.registerInitialAttempts),
    prolongedIntervalMillis: conf.get(keys.registerProlongedInterval),
    maxAttempts: conf.get(keys.registerMaxAttempts)
  },
  cleanup: {
    enabled: conf.get(keys.cleanupEnabled),
    intervalMillis: conf.get(keys.cleanupInterval),
    appDataTtlMillis: conf.get(keys.cleanupAppDataTtl)
  },
  retainedExecutors: conf.get(keys.uiRetainedExecutors),
  retainedDrivers: conf.get(keys.uiRetainedDrivers),
  executorStateSyncMaxAttempts: conf.get(keys.executorStateSyncMaxAttempts),
  askTimeoutMillis: conf.get(ProtocolConf.keys.askTimeout),
  // The lease is twice the worker timeout when unset: longer than a failover to a standby (about the ZooKeeper
  // session timeout), so that drivers are stopped only when their worker is really cut off.
  driverFencing: conf.get(keys.driverFencingEnabled)
    ? {
      leaseMillis: conf.get(keys.driverFencingLease) ?? 2 * conf.get(ProtocolConf.keys.workerTimeout),
      terminateMillis: conf.get(keys.driverTerminateTimeout)
    }
    : undefined,
  decommissionEnabled: conf.get(keys.decommissionEnabled),
  superviseInitialBackoffMillis: conf.get(keys.superviseInitialBackoff)
})

/**
 * How the worker's runners stop what they run.
 *
 * @since 0.1.0
 * @category constructors
 */
export const runnerTimeouts = (conf: Conf.Conf<WorkerKeys>): Pick<
  Runners.ProcessOptions,
  "driverTerminateTimeoutMillis" | "executorTerminateTimeoutMillis"
> => ({
  driverTerminateTimeoutMillis: conf.get(keys.driverTerminateTimeout),
  executorTerminateTimeoutMillis: conf.get(keys.executorTerminateTimeout)
})
