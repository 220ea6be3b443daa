/**
 * The configuration the master reads: how long it keeps dead workers and finished work, recovery, scheduling,
 * its web UI and REST ports, and uploaded artifacts.
 *
 * @since 0.1.0
 */
import { type Conf, Key, Problem, Registry, ValueType } from "@kindling/conf"
import type { KernelConf } from "@kindling/kernel"
import { ProtocolConf } from "@kindling/rpc"
import * as Either from "effect/Either"
import * as Path from "node:path"
import type * as ArtifactStore from "./ArtifactStore.js"
import type * as MasterCore from "./MasterCore.js"

// Spark's list of patterns: comma-separated, each matching a whole app resource.
const appResourcePatterns: ValueType.ValueType<ReadonlyArray<RegExp>> = {
  _tag: "string",
  decode: (raw) => {
    const patterns: Array<RegExp> = []
    for (const pattern of raw.split(",").map((part) => part.trim()).filter((part) => part !== "")) {
      try {
        patterns.push(new RegExp(`^(?:${pattern})$`))
      } catch (error) {
        return Either.left(`${JSON.stringify(pattern)} is not a regular expression: ${(error as Error).message}`)
      }
    }
    return Either.right(patterns)
  }
}

/**
 * @since 0.1.0
 * @category keys
 */
export const keys = {
  deadWorkerPersistence: Key.make("kindling.dead.worker.persistence", ValueType.int({ min: 0 }), {
    default: "15",
    description: "A DEAD worker stays listed until its last heartbeat is (this + 1) worker timeouts old."
  }),
  recoveryMode: Key.make("kindling.deploy.recoveryMode", ValueType.literal("NONE", "FILESYSTEM", "ZOOKEEPER"), {
    default: "NONE",
    description: "NONE forgets everything on restart; FILESYSTEM persists apps, drivers and workers to a directory; " +
      "ZOOKEEPER elects a leader among several masters and persists to ZooKeeper."
  }),
  zooKeeperUrl: Key.make("kindling.deploy.zookeeper.url", ValueType.string, {
    default: "",
    description: "The ZooKeeper ensemble of recovery mode ZOOKEEPER: host:port[,host:port…]."
  }),
  zooKeeperDirectory: Key.make("kindling.deploy.zookeeper.dir", ValueType.string, {
    default: "/kindling",
    description: "The znode under which ZOOKEEPER recovery keeps its election (leader_election) and records " +
      "(master_status)."
  }),
  zooKeeperSessionTimeout: Key.make("kindling.deploy.zookeeper.sessionTimeout", ValueType.duration("ms"), {
    default: "4s",
    description: "The ZooKeeper session timeout a master asks for: a leader that stops answering for this long " +
      "loses its leadership, and a standby takes over after it. The server bounds it by 2 to 20 of its ticks " +
      "(4 s to 40 s with Debian's tickTime of 2 s)."
  }),
  recoveryDirectory: Key.make("kindling.deploy.recoveryDirectory", ValueType.string, {
    default: "",
    description: "The directory FILESYSTEM recovery writes to."
  }),
  recoveryTimeout: Key.make("kindling.deploy.recoveryTimeout", ValueType.duration("s"), {
    fallback: ProtocolConf.keys.workerTimeout,
    description: "How long recovery waits for workers and apps to answer before dropping them (Spark 4.0)."
  }),
  retainedApplications: Key.make("kindling.deploy.retainedApplications", ValueType.int({ min: 0 }), {
    default: "200",
    description: "Finished applications kept for the UI; when full, the oldest tenth is dropped."
  }),
  retainedDrivers: Key.make("kindling.deploy.retainedDrivers", ValueType.int({ min: 0 }), {
    default: "200",
    description: "Finished drivers kept for the UI; when full, the oldest tenth is dropped."
  }),
  spreadOut: Key.make("kindling.deploy.spreadOut", ValueType.boolean, {
    default: "true",
    description: "Spread an application's executors over as many workers as possible instead of packing them."
  }),
  defaultCores: Key.make("kindling.deploy.defaultCores", ValueType.coresOrInfinite, {
    default: "infinite",
    description: "The cores an application may use when it does not set kindling.cores.max."
  }),
  maxExecutorRetries: Key.make("kindling.deploy.maxExecutorRetries", ValueType.int(), {
    default: "10",
    description: "An app with no running executor fails after this many executor failures; negative disables."
  }),
  uiDecommissionAllowMode: Key.make(
    "kindling.master.ui.decommission.allow.mode",
    ValueType.literal("LOCAL", "ALLOW", "DENY"),
    {
      default: "LOCAL",
      description: "Who may decommission workers with POST /workers/kill/?host=… on the master's web UI: LOCAL " +
        "only requests from this machine's loopback, ALLOW anyone who reaches the UI, DENY no one."
    }
  ),
  historyUiUrl: Key.make("kindling.history.ui.url", ValueType.string, {
    default: "",
    description: "The history server's address (http://host:18080): the master UI links finished apps to their " +
      "pages there."
  }),
  uiPort: Key.make("kindling.master.ui.port", ValueType.port, {
    default: "8080",
    description: "Port of the web UI."
  }),
  restEnabled: Key.make("kindling.master.rest.enabled", ValueType.boolean, {
    default: "false",
    description: "Run the REST submission server."
  }),
  restPort: Key.make("kindling.master.rest.port", ValueType.port, {
    default: "6066",
    description: "Port of the REST submission server; when taken, the next free one (up to kindling.port.maxRetries)."
  }),
  restHost: Key.make("kindling.master.rest.host", ValueType.string, {
    description: "The address the REST submission server listens on; unset, the master's. Without " +
      "kindling.authenticate.secret it starts only on a loopback address, unless kindling.authenticate=false is set."
  }),
  restAllowedAppResourcePatterns: Key.make("kindling.master.rest.allowedAppResourcePatterns", appResourcePatterns, {
    default: "",
    description: "Comma-separated regular expressions; when set, the REST server refuses an appResource that fully " +
      "matches none of them (Spark 4.3). Empty: every app location is allowed."
  }),
  restMaxRequestBodySize: Key.make("kindling.master.rest.maxRequestBodySize", ValueType.memory, {
    default: "100m",
    description: "The largest REST request body; a larger one is answered with 413 (Spark 4.3)."
  }),
  artifactDirectory: Key.make("kindling.master.artifact.dir", ValueType.string, {
    default: "",
    description: "Where uploaded app artifacts are kept; empty: `artifacts` in the recovery directory with " +
      "FILESYSTEM recovery (so recovered drivers can be relaunched), otherwise a temporary directory."
  }),
  artifactMaxSize: Key.make("kindling.master.artifact.maxSize", ValueType.memory, {
    default: "256m",
    description: "The largest app artifact a submission client may upload."
  }),
  artifactRetention: Key.make("kindling.master.artifact.retention", ValueType.duration("s"), {
    default: "10min",
    description: "How long an uploaded artifact is kept once no driver the master remembers uses it."
  })
}

/**
 * @since 0.1.0
 * @category keys
 */
export const group = Registry.group({
  title: "Master",
  description: "Read by `kindling master`.",
  keys
})

/**
 * The keys a master reads: its own and those of the layers below it.
 *
 * @since 0.1.0
 * @category keys
 */
export type MasterKeys =
  | Registry.KeyOf<typeof group>
  | Registry.KeyOf<typeof ProtocolConf.group>
  | Registry.KeyOf<typeof KernelConf.group>

/**
 * The master core's settings, but for where it is (`self`, its UI's and REST port's addresses, known once bound)
 * and `seed`, the randomness its shell draws.
 *
 * @since 0.1.0
 * @category constructors
 */
export const coreConfig = (
  conf: Conf.Conf<MasterKeys>
): Omit<MasterCore.Config, "self" | "webUiUrl" | "webUiPort" | "restPort" | "seed"> => ({
  workerTimeoutMillis: conf.get(ProtocolConf.keys.workerTimeout),
  deadWorkerPersistence: conf.get(keys.deadWorkerPersistence),
  recoveryTimeoutMillis: conf.get(keys.recoveryTimeout),
  retainedApplications: conf.get(keys.retainedApplications),
  retainedDrivers: conf.get(keys.retainedDrivers),
  spreadOut: conf.get(keys.spreadOut),
  defaultCores: conf.get(keys.defaultCores),
  maxExecutorRetries: conf.get(keys.maxExecutorRetries)
})

/**
 * Where uploaded artifacts are kept (`kindling.master.artifact.dir`, else beside the FILESYSTEM recovery records,
 * else a temporary directory), how large one may be and how long one no driver uses is kept.
 *
 * @since 0.1.0
 * @category constructors
 */
export const artifactOptions = (conf: Conf.Conf<MasterKeys>): ArtifactStore.Options => {
  const directory = conf.get(keys.artifactDirectory)
  return {
    directory: directory !== ""
      ? directory
      : conf.get(keys.recoveryMode) === "FILESYSTEM"
      ? Path.join(conf.get(keys.recoveryDirectory), "artifacts")
      : undefined,
    maxSize: conf.get(keys.artifactMaxSize) * 2 ** 20,
    retentionMillis: conf.get(keys.artifactRetention)
  }
}

/**
 * The recovery store a master keeps its records in and learns that it leads from, as the configuration names it:
 * none, a directory, or ZooKeeper (its URL, directory and session timeout); with the cluster's secret when
 * authentication is on, which seals the records and makes the znodes the masters' alone.
 *
 * @since 0.1.0
 * @category models
 */
export type Recovery =
  | { readonly _tag: "NONE" }
  | { readonly _tag: "FILESYSTEM"; readonly directory: string; readonly secret: string | undefined }
  | {
    readonly _tag: "ZOOKEEPER"
    readonly url: string
    readonly directory: string
    readonly sessionTimeoutMillis: number
    readonly secret: string | undefined
  }

/**
 * The recovery store of the configuration, or what is missing or wrong in it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const recovery = (conf: Conf.Conf<MasterKeys>): Either.Either<Recovery, Problem.InvalidConf> => {
  const missing = (key: string, reason: string) =>
    Either.left(new Problem.InvalidConf({ problems: [{ _tag: "MissingValue", key, reason }] }))
  const secret = conf.get(ProtocolConf.keys.authenticate)
    ? conf.get(ProtocolConf.keys.authenticateSecret)
    : undefined
  switch (conf.get(keys.recoveryMode)) {
    case "NONE":
      return Either.right({ _tag: "NONE" })
    case "FILESYSTEM": {
      const directory = conf.get(keys.recoveryDirectory)
      if (directory === "") return missing(keys.recoveryDirectory.name, `${keys.recoveryMode.name} is FILESYSTEM`)
      return Either.right({ _tag: "FILESYSTEM", directory, secret })
    }
    case "ZOOKEEPER": {
      const url = conf.get(keys.zooKeeperUrl)
      if (url === "") return missing(keys.zooKeeperUrl.name, `${keys.recoveryMode.name} is ZOOKEEPER`)
      const directory = conf.get(keys.zooKeeperDirectory).replace(/\/+$/, "")
      if (!directory.startsWith("/")) {
        return Either.left(
          new Problem.InvalidConf({
            problems: [{
              _tag: "InvalidValue",
              source: conf.entries.find((entry) => entry.key === keys.zooKeeperDirectory.name)?.source ?? "default",
              key: keys.zooKeeperDirectory.name,
              reason: `${JSON.stringify(directory)} is not a znode path (it starts with /)`
            }]
          })
        )
      }
      return Either.right({
        _tag: "ZOOKEEPER",
        url,
        directory,
        sessionTimeoutMillis: conf.get(keys.zooKeeperSessionTimeout),
        secret
      })
    }
  }
}
