/**
 * The configuration of an application: how it is submitted, the resources of its driver and executors, and how
 * its driver schedules tasks. `kindling submit` reads the submission and driver keys; the driver the others.
 *
 * @since 0.1.0
 */
import { Key, Registry, ValueType } from "@kindling/conf"

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
    description: "Memory of each executor, charged against its worker's."
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
  })
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
