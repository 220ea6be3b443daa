/**
 * Kindling's configuration: Spark's keys with a `kindling.` prefix and Spark 3.3's defaults. Values come from,
 * lowest first, the built-in defaults, `conf/kindling-defaults.conf`, `KINDLING_*` environment variables, and
 * `--conf key=value` and flags. Everything here is pure: the caller reads the file and the environment, so the
 * same rules apply in a test, a role and the `kindling` command.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Either from "effect/Either"

/**
 * The unit of a bare number given to a duration key.
 *
 * @since 0.1.0
 * @category models
 */
export type TimeUnit = "ms" | "s"

/**
 * How a key's value is written.
 *
 * - `duration`: a Spark time string (`60s`, `500ms`, `5min`, `2h`, `1d`), read as milliseconds;
 * - `memory`: a Spark size string (`2g`, `512m`, `1024k`), read as whole MiB; a bare number is MiB;
 * - `cores-or-infinite`: an integer ≥ 1 or `infinite`, read as `Infinity`.
 *
 * @since 0.1.0
 * @category models
 */
export type Type =
  | { readonly _tag: "int"; readonly min?: number | undefined; readonly max?: number | undefined }
  | { readonly _tag: "boolean" }
  | { readonly _tag: "string" }
  | { readonly _tag: "enum"; readonly values: ReadonlyArray<string> }
  | { readonly _tag: "duration"; readonly unit: TimeUnit }
  | { readonly _tag: "memory" }
  | { readonly _tag: "cores-or-infinite" }

/**
 * A configuration key. `A` is what its accessor on {@link Conf} returns.
 *
 * @since 0.1.0
 * @category models
 */
export interface Key<Name extends string = string, A = unknown> {
  readonly name: Name
  readonly type: Type
  /** The value when no source sets it, as it would be written in a file; absent for optional keys. */
  readonly default: string | undefined
  /** The key whose value this one takes when no source sets it (Spark's fallback entries). */
  readonly fallback: string | undefined
  /** Shown redacted in {@link Conf.entries}. */
  readonly secret: boolean
  readonly description: string
  /** The typed value, or why the text is not one (to follow the key's name in a message). */
  readonly decode: (raw: string) => Either.Either<A, string>
}

interface Options {
  readonly description: string
  readonly default?: string
  readonly fallback?: string
  readonly secret?: boolean
}

type Decoded<T extends Type> = T extends { readonly _tag: "boolean" } ? boolean
  : T extends { readonly _tag: "string" } ? string
  : T extends { readonly _tag: "enum"; readonly values: ReadonlyArray<infer L> } ? L
  : number

type Value<A, O extends Options> = O extends { readonly default: string } | { readonly fallback: string } ? A
  : A | undefined

const unitNames: Record<TimeUnit, string> = { ms: "milliseconds", s: "seconds" }

// In microseconds, so that `us` converts exactly and every result is a whole number of milliseconds.
const timeUnits: Record<string, number> = { us: 1, ms: 1e3, s: 1e6, m: 6e7, min: 6e7, h: 3.6e9, d: 8.64e10 }

const byteUnits: Record<string, number> = {
  b: 1,
  k: 2 ** 10,
  kb: 2 ** 10,
  m: 2 ** 20,
  mb: 2 ** 20,
  g: 2 ** 30,
  gb: 2 ** 30,
  t: 2 ** 40,
  tb: 2 ** 40,
  p: 2 ** 50,
  pb: 2 ** 50
}

const decodeInt = (raw: string, min: number | undefined, max: number | undefined): Either.Either<number, string> => {
  const text = raw.trim()
  const value = Number(text)
  if (!/^-?\d+$/.test(text) || !Number.isSafeInteger(value)) {
    return Either.left(`${JSON.stringify(raw)} is not an integer`)
  }
  if (min !== undefined && value < min) return Either.left(`${value} is less than ${min}`)
  if (max !== undefined && value > max) return Either.left(`${value} is more than ${max}`)
  return Either.right(value)
}

const decodeDuration = (raw: string, unit: TimeUnit): Either.Either<number, string> => {
  const match = /^(\d+)([a-z]+)?$/.exec(raw.trim().toLowerCase())
  const factor = match === null ? undefined : timeUnits[match[2] ?? unit]
  if (match === null || factor === undefined) {
    return Either.left(
      `${JSON.stringify(raw)} is not a duration (a whole number and us, ms, s, m or min, h, d, as in 60s, 500ms or ` +
        `5min; a bare number is ${unitNames[unit]})`
    )
  }
  const micros = Number(match[1]) * factor
  if (!Number.isSafeInteger(micros)) return Either.left(`${JSON.stringify(raw)} is too long`)
  const millis = Math.floor(micros / 1e3)
  return millis < 1 ? Either.left(`${JSON.stringify(raw)} is shorter than 1ms`) : Either.right(millis)
}

/**
 * A Spark size string (`2g`, `512m`, `1024k`; a bare number is MiB) as whole MiB, or why it is not one. The
 * worker's `--memory` flag is read with it.
 *
 * @since 0.1.0
 * @category parsing
 */
export const decodeMemory = (raw: string): Either.Either<number, string> => {
  const text = raw.trim().toLowerCase()
  if (/^\d+\.\d+[a-z]*$/.test(text)) {
    return Either.left(`${JSON.stringify(raw)} is not a whole number (write 1536m, not 1.5g)`)
  }
  const match = /^(\d+)([a-z]+)?$/.exec(text)
  const factor = match === null ? undefined : match[2] === undefined ? byteUnits.m : byteUnits[match[2]]
  if (match === null || factor === undefined) {
    return Either.left(
      `${JSON.stringify(raw)} is not a size (a whole number and b, k, m, g, t or p, as in 512m or 2g; a bare ` +
        "number is MiB)"
    )
  }
  const bytes = Number(match[1]) * factor
  if (!Number.isSafeInteger(bytes)) return Either.left(`${JSON.stringify(raw)} is too large`)
  const mebibytes = Math.floor(bytes / 2 ** 20)
  return mebibytes < 1 ? Either.left(`${JSON.stringify(raw)} is less than 1 MiB`) : Either.right(mebibytes)
}

const decode = (type: Type, raw: string): Either.Either<unknown, string> => {
  switch (type._tag) {
    case "int":
      return decodeInt(raw, type.min, type.max)
    case "boolean": {
      const text = raw.trim().toLowerCase()
      return text === "true" || text === "false"
        ? Either.right(text === "true")
        : Either.left(`${JSON.stringify(raw)} is not a boolean (true or false)`)
    }
    case "string":
      return Either.right(raw)
    case "enum": {
      const value = type.values.find((v) => v.toLowerCase() === raw.trim().toLowerCase())
      return value === undefined
        ? Either.left(`${JSON.stringify(raw)} is not one of ${type.values.join(", ")}`)
        : Either.right(value)
    }
    case "duration":
      return decodeDuration(raw, type.unit)
    case "memory":
      return decodeMemory(raw)
    case "cores-or-infinite": {
      const text = raw.trim().toLowerCase()
      if (text === "infinite" || text === "infinity") return Either.right(Infinity)
      return Either.mapLeft(
        decodeInt(raw, 1, undefined),
        () => `${JSON.stringify(raw)} is not a number of cores (an integer ≥ 1, or infinite)`
      )
    }
  }
}

const key = <const N extends string, const T extends Type, const O extends Options>(
  name: N,
  type: T,
  options: O
): Key<N, Value<Decoded<T>, O>> => ({
  name,
  type,
  default: options.default,
  fallback: options.fallback,
  secret: options.secret ?? false,
  description: options.description,
  decode: (raw) => decode(type, raw) as Either.Either<Value<Decoded<T>, O>, string>
})

const seconds = { _tag: "duration", unit: "s" } as const
const millis = { _tag: "duration", unit: "ms" } as const
const flag = { _tag: "boolean" } as const
const text = { _tag: "string" } as const
const memory = { _tag: "memory" } as const
const port = { _tag: "int", min: 0, max: 65535 } as const
const atLeast = <const Min extends number>(min: Min) => ({ _tag: "int", min }) as const

/**
 * Every key Kindling reads. Each is read by the accessor of {@link Conf} of the same name, with the unit added
 * where there is one (`keys.workerTimeout` by `conf.workerTimeoutMillis`, `keys.driverMemory` by
 * `conf.driverMemoryMiB`).
 *
 * @since 0.1.0
 * @category keys
 */
export const keys = {
  workerTimeout: key("kindling.worker.timeout", seconds, {
    default: "60s",
    description: "Master: a worker with no heartbeat for this long is removed; workers send one every timeout/4."
  }),
  deadWorkerPersistence: key("kindling.dead.worker.persistence", atLeast(0), {
    default: "15",
    description: "Master: a DEAD worker stays listed until its last heartbeat is (this + 1) worker timeouts old."
  }),
  recoveryMode: key("kindling.deploy.recoveryMode", { _tag: "enum", values: ["NONE", "FILESYSTEM"] }, {
    default: "NONE",
    description: "Master: NONE forgets everything on restart; FILESYSTEM persists apps, drivers and workers."
  }),
  recoveryDirectory: key("kindling.deploy.recoveryDirectory", text, {
    default: "",
    description: "Master: the directory FILESYSTEM recovery writes to."
  }),
  recoveryTimeout: key("kindling.deploy.recoveryTimeout", seconds, {
    fallback: "kindling.worker.timeout",
    description: "Master: how long recovery waits for workers and apps to answer before dropping them (Spark 4.0)."
  }),
  retainedApplications: key("kindling.deploy.retainedApplications", atLeast(0), {
    default: "200",
    description: "Master: finished applications kept for the UI; when full, the oldest tenth is dropped."
  }),
  retainedDrivers: key("kindling.deploy.retainedDrivers", atLeast(0), {
    default: "200",
    description: "Master: finished drivers kept for the UI; when full, the oldest tenth is dropped."
  }),
  spreadOut: key("kindling.deploy.spreadOut", flag, {
    default: "true",
    description: "Master: spread an application's executors over as many workers as possible instead of packing."
  }),
  defaultCores: key("kindling.deploy.defaultCores", { _tag: "cores-or-infinite" }, {
    default: "infinite",
    description: "Master: the cores an application may use when it does not set kindling.cores.max."
  }),
  maxExecutorRetries: key("kindling.deploy.maxExecutorRetries", { _tag: "int" }, {
    default: "10",
    description: "Master: an app with no running executor fails after this many executor failures; negative disables."
  }),
  masterUiPort: key("kindling.master.ui.port", port, {
    default: "8080",
    description: "Master: port of the web UI."
  }),
  restEnabled: key("kindling.master.rest.enabled", flag, {
    default: "false",
    description: "Master: run the REST submission server."
  }),
  restPort: key("kindling.master.rest.port", port, {
    default: "6066",
    description: "Master: port of the REST submission server."
  }),
  workerUiPort: key("kindling.worker.ui.port", port, {
    default: "8081",
    description: "Worker: port of the web UI."
  }),
  cleanupEnabled: key("kindling.worker.cleanup.enabled", flag, {
    default: "false",
    description: "Worker: periodically delete the work directories of applications that have stopped."
  }),
  cleanupInterval: key("kindling.worker.cleanup.interval", seconds, {
    default: "1800s",
    description: "Worker: how often the cleanup runs (the first run is one interval after start)."
  }),
  cleanupAppDataTtl: key("kindling.worker.cleanup.appDataTtl", seconds, {
    default: "604800s",
    description: "Worker: the cleanup deletes an application's directory once no file in it is newer than this."
  }),
  workerUiRetainedExecutors: key("kindling.worker.ui.retainedExecutors", atLeast(0), {
    default: "1000",
    description: "Worker: finished executors kept for the UI; when full, the oldest tenth is dropped."
  }),
  workerUiRetainedDrivers: key("kindling.worker.ui.retainedDrivers", atLeast(0), {
    default: "1000",
    description: "Worker: finished drivers kept for the UI; when full, the oldest tenth is dropped."
  }),
  driverTerminateTimeout: key("kindling.worker.driverTerminateTimeout", millis, {
    default: "10s",
    description: "Worker: how long a killed driver may take to exit before it is killed forcibly."
  }),
  executorTerminateTimeout: key("kindling.worker.executorTerminateTimeout", millis, {
    default: "10s",
    description: "Worker: how long a killed executor may take to exit before it is killed forcibly (fixed in Spark)."
  }),
  executorStateSyncMaxAttempts: key("kindling.worker.executorStateSync.maxAttempts", atLeast(1), {
    default: "5",
    description: "Worker: tries to tell the master an executor's state before the worker exits."
  }),
  registerInitialInterval: key("kindling.worker.register.initialInterval", seconds, {
    default: "10s",
    description: "Worker: interval of the first registration retries, times a random 0.5–1.5 (fixed in Spark)."
  }),
  registerInitialAttempts: key("kindling.worker.register.initialAttempts", atLeast(1), {
    default: "6",
    description: "Worker: registration attempts at the initial interval before the prolonged one (fixed in Spark)."
  }),
  registerProlongedInterval: key("kindling.worker.register.prolongedInterval", seconds, {
    default: "60s",
    description: "Worker: interval of the later registration retries, times the same random factor (fixed in Spark)."
  }),
  registerMaxAttempts: key("kindling.worker.register.maxAttempts", atLeast(1), {
    default: "16",
    description: "Worker: registration attempts in all before the worker gives up and exits (fixed in Spark)."
  }),
  superviseInitialBackoff: key("kindling.worker.supervise.initialBackoff", seconds, {
    default: "1s",
    description: "Worker: first wait before restarting a failed supervised driver; it doubles (fixed in Spark)."
  }),
  authenticate: key("kindling.authenticate", flag, {
    default: "false",
    description: "Every connection must prove it knows kindling.authenticate.secret before anything else."
  }),
  authenticateSecret: key("kindling.authenticate.secret", text, {
    secret: true,
    description: "The secret shared by every process of the cluster; required when kindling.authenticate is on."
  }),
  networkTimeout: key("kindling.network.timeout", seconds, {
    default: "120s",
    description: "The default of the RPC timeouts."
  }),
  askTimeout: key("kindling.rpc.askTimeout", seconds, {
    fallback: "kindling.network.timeout",
    description: "How long an RPC ask waits for its reply."
  }),
  lookupTimeout: key("kindling.rpc.lookupTimeout", seconds, {
    fallback: "kindling.network.timeout",
    description: "How long connecting to a remote endpoint may take."
  }),
  rpcMessageMaxSize: key("kindling.rpc.message.maxSize", { _tag: "int", min: 1, max: 2047 }, {
    default: "128",
    description: "The largest RPC message, in MiB."
  }),
  master: key("kindling.master", text, {
    description: "Submission: the master URL, kindling://host:port[,host:port…] (--master)."
  }),
  appName: key("kindling.app.name", text, {
    description: "Submission: the application's name (--name)."
  }),
  deployMode: key("kindling.submit.deployMode", { _tag: "enum", values: ["client", "cluster"] }, {
    default: "client",
    description: "Submission: run the driver in the submitting process (client) or on a worker (cluster)."
  }),
  waitAppCompletion: key("kindling.standalone.submit.waitAppCompletion", flag, {
    default: "false",
    description: "Submission, cluster mode: wait until the driver finishes, not only until it is accepted."
  }),
  driverMemory: key("kindling.driver.memory", memory, {
    default: "1g",
    description: "Cluster mode: memory of the driver, charged against its worker's."
  }),
  driverCores: key("kindling.driver.cores", atLeast(1), {
    default: "1",
    description: "Cluster mode: cores of the driver, charged against its worker's."
  }),
  driverSupervise: key("kindling.driver.supervise", flag, {
    default: "false",
    description: "Cluster mode: restart the driver when it exits with a non-zero code."
  }),
  executorMemory: key("kindling.executor.memory", memory, {
    default: "1g",
    description: "Memory of each executor, charged against its worker's."
  }),
  executorCores: key("kindling.executor.cores", atLeast(1), {
    description: "Cores of each executor; unset, an app gets one executor per worker with all its free cores."
  }),
  coresMax: key("kindling.cores.max", atLeast(1), {
    description: "The most cores an application uses across the cluster; unset, kindling.deploy.defaultCores."
  }),
  executorHeartbeatInterval: key("kindling.executor.heartbeatInterval", millis, {
    default: "10s",
    description: "Executor: how often it reports to the driver that it is alive, with task metrics."
  }),
  reviveInterval: key("kindling.scheduler.revive.interval", millis, {
    default: "1s",
    description: "Driver: how often free executor cores are offered to waiting tasks."
  }),
  taskMaxFailures: key("kindling.task.maxFailures", atLeast(1), {
    default: "4",
    description: "Driver: a task failing this many times fails its job."
  }),
  taskCpus: key("kindling.task.cpus", atLeast(1), {
    default: "1",
    description: "Driver: cores each task takes on its executor."
  })
} as const

/**
 * The name of a configuration key.
 *
 * @since 0.1.0
 * @category keys
 */
export type Name = (typeof keys)[keyof typeof keys]["name"]

/**
 * Every key, in the order of {@link keys} (grouped by the role that reads them).
 *
 * @since 0.1.0
 * @category keys
 */
export const all: ReadonlyArray<Key<Name>> = Object.values(keys)

const byName: ReadonlyMap<string, Key<Name>> = new Map(all.map((k) => [k.name, k]))

const envPrefix = "KINDLING_"

const dotted = (variable: string) => variable.toLowerCase().replace(/_/g, ".")

const byDottedName: ReadonlyMap<string, Key<Name>> = new Map(all.map((k) => [k.name.toLowerCase(), k]))

const envName = (name: string) => name.toUpperCase().replace(/\./g, "_")

/**
 * `KINDLING_*` environment variables that the `kindling` command reads itself (as Spark's scripts read their
 * `SPARK_*` counterparts) and that are therefore not configuration keys.
 *
 * @since 0.1.0
 * @category environment
 */
export const launcherVariables: ReadonlyArray<string> = [
  "KINDLING_HOME",
  "KINDLING_CONF_DIR",
  "KINDLING_LOG_DIR",
  "KINDLING_PID_DIR",
  "KINDLING_LOCAL_IP",
  "KINDLING_PUBLIC_DNS",
  "KINDLING_MASTER_HOST",
  "KINDLING_MASTER_PORT",
  "KINDLING_MASTER_WEBUI_PORT",
  "KINDLING_WORKER_CORES",
  "KINDLING_WORKER_MEMORY",
  "KINDLING_WORKER_PORT",
  "KINDLING_WORKER_WEBUI_PORT",
  "KINDLING_WORKER_DIR"
]

/**
 * One reason a configuration is refused. `source` names where the value came from (a file, `environment`,
 * `--conf`, …) and `line` the line of a file.
 *
 * @since 0.1.0
 * @category errors
 */
export type Problem =
  | {
    readonly _tag: "UnknownKey"
    readonly source: string
    readonly line?: number
    readonly key: string
    readonly suggestion?: string
  }
  | {
    readonly _tag: "InvalidValue"
    readonly source: string
    readonly line?: number
    readonly key: string
    readonly reason: string
  }
  | { readonly _tag: "MalformedEntry"; readonly source: string; readonly line?: number; readonly text: string }

const formatProblem = (problem: Problem): string => {
  const where = problem.line === undefined ? problem.source : `${problem.source} line ${problem.line}`
  switch (problem._tag) {
    case "UnknownKey": {
      const what = problem.key.startsWith(envPrefix) ? "variable" : "key"
      const hint = problem.suggestion === undefined ? "" : ` (did you mean ${problem.suggestion}?)`
      return `${where}: ${problem.key} is not a Kindling configuration ${what}${hint}`
    }
    case "InvalidValue":
      return `${where}: ${problem.key}: ${problem.reason}`
    case "MalformedEntry":
      return `${where}: ${JSON.stringify(problem.text)} is not of the form key=value`
  }
}

/**
 * Unknown keys and ill-typed values, all of them, each with where it was set.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidConf extends Data.TaggedError("InvalidConf")<{ readonly problems: ReadonlyArray<Problem> }> {
  override get message(): string {
    return ["Invalid configuration:", ...this.problems.map((problem) => `  ${formatProblem(problem)}`)].join("\n")
  }
}

const distance = (a: string, b: string): number => {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    previous = current
  }
  return previous[b.length]!
}

// Compared in the registry's own spelling, so that Spark's name, a missing prefix, the wrong case and an
// environment variable's underscores cost nothing and only real misspellings count.
const suggest = (unknown: string): string | undefined => {
  const isEnv = unknown.startsWith(envPrefix)
  const lower = isEnv ? dotted(unknown) : unknown.toLowerCase()
  const wanted = lower.startsWith("spark.")
    ? `kindling.${lower.slice("spark.".length)}`
    : lower.startsWith("kindling.")
    ? lower
    : `kindling.${lower}`
  let best: Key<Name> | undefined
  let bestDistance = Infinity
  for (const candidate of all) {
    const d = distance(wanted, candidate.name.toLowerCase())
    if (d < bestDistance) {
      best = candidate
      bestDistance = d
    }
  }
  if (best === undefined || bestDistance > Math.max(2, Math.floor(wanted.length / 4))) return undefined
  return isEnv ? envName(best.name) : best.name
}

const unknownKey = (source: string, line: number | undefined, key: string): Problem => {
  const suggestion = suggest(key)
  return {
    _tag: "UnknownKey",
    source,
    key,
    ...(line === undefined ? {} : { line }),
    ...(suggestion === undefined ? {} : { suggestion })
  }
}

const check = (
  source: string,
  line: number | undefined,
  name: string,
  raw: string
): Either.Either<unknown, Problem> => {
  const found = byName.get(name)
  if (found === undefined) return Either.left(unknownKey(source, line, name))
  return Either.mapLeft(found.decode(raw), (reason): Problem => ({
    _tag: "InvalidValue",
    source,
    key: name,
    reason,
    ...(line === undefined ? {} : { line })
  }))
}

/**
 * Reads a file in Spark's `spark-defaults.conf` format: one `key value` or `key=value` per line (`key: value`
 * too, as in Java properties); blank lines and lines starting with `#` or `!` are ignored; keys and values are
 * trimmed. Keys and values are checked here, so that problems carry their line.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseProperties = (
  text: string,
  sourceName: string
): Either.Either<Record<string, string>, InvalidConf> => {
  const values: Record<string, string> = {}
  const problems: Array<Problem> = []
  text.split(/\r?\n/).forEach((line, index) => {
    const trimmed = line.trim()
    if (trimmed === "" || trimmed.startsWith("#") || trimmed.startsWith("!")) return
    const match = /^([^\s=:]+)\s*[=:]?\s*(.*)$/.exec(trimmed)
    if (match === null) {
      problems.push({ _tag: "MalformedEntry", source: sourceName, line: index + 1, text: trimmed })
      return
    }
    const name = match[1]!
    const raw = match[2]!
    Either.match(check(sourceName, index + 1, name, raw), {
      onLeft: (problem) => problems.push(problem),
      onRight: () => values[name] = raw
    })
  })
  return problems.length > 0 ? Either.left(new InvalidConf({ problems })) : Either.right(values)
}

/**
 * The configuration in an environment. A key's variable is `KINDLING_` and the key in upper case with dots as
 * underscores (`KINDLING_WORKER_TIMEOUT` is `kindling.worker.timeout`); since keys have camelCase parts, a
 * variable is matched case-insensitively (`KINDLING_DEPLOY_RECOVERYMODE` is `kindling.deploy.recoveryMode`).
 * {@link launcherVariables} are skipped; any other `KINDLING_` variable is kept under its own name, so that
 * {@link resolve} reports it as unknown together with every other problem.
 *
 * @since 0.1.0
 * @category parsing
 */
export const fromEnv = (env: Readonly<Record<string, string | undefined>>): Record<string, string> => {
  const values: Record<string, string> = {}
  for (const [variable, value] of Object.entries(env)) {
    if (value === undefined || !variable.startsWith(envPrefix) || launcherVariables.includes(variable)) continue
    values[byDottedName.get(dotted(variable))?.name ?? variable] = value
  }
  return values
}

/**
 * Splits the argument of `--conf` at its first `=`.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseConfFlag = (flag: string): Either.Either<readonly [key: string, value: string], InvalidConf> => {
  const at = flag.indexOf("=")
  if (at <= 0) {
    return Either.left(new InvalidConf({ problems: [{ _tag: "MalformedEntry", source: "--conf", text: flag }] }))
  }
  return Either.right([flag.slice(0, at).trim(), flag.slice(at + 1).trim()] as const)
}

/**
 * Values from one place, named for messages and {@link Conf.entries}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Source {
  readonly name: string
  readonly values: Readonly<Record<string, string>>
}

/**
 * An effective value and the source that set it (`default` for a built-in default).
 *
 * @since 0.1.0
 * @category models
 */
export interface Entry {
  readonly key: Name
  readonly value: string
  readonly source: string
}

interface Setting {
  readonly raw: string
  readonly source: string
  readonly value: unknown
}

const redacted = "*********(redacted)"

// A default its own key refuses is a bug in the registry; failing on import shows it in the first test.
const defaults: ReadonlyMap<string, Setting> = new Map(
  all.flatMap((k) =>
    k.default === undefined
      ? []
      : [[k.name, { raw: k.default, source: "default", value: Either.getOrThrow(k.decode(k.default)) }]]
  )
)

/**
 * A resolved configuration: one typed accessor per key (durations in milliseconds, sizes in MiB, optional keys
 * `undefined` when unset), `get` for a key's text and `entries` for what is in effect and why.
 *
 * @since 0.1.0
 * @category models
 */
class Conf {
  readonly #settings: ReadonlyMap<string, Setting>

  constructor(settings: ReadonlyMap<string, Setting>) {
    this.#settings = settings
  }

  #setting(name: string): Setting | undefined {
    const own = this.#settings.get(name)
    if (own !== undefined) return own
    const fallback = byName.get(name)?.fallback
    return fallback === undefined ? undefined : this.#setting(fallback)
  }

  #value<A>(key: Key<string, A>): A {
    return this.#setting(key.name)?.value as A
  }

  /** The text of a key's effective value, after defaults and fallbacks; `undefined` for an unset optional key. */
  get(key: Name): string | undefined {
    return this.#setting(key)?.raw
  }

  /** Every key that has a value, in the order of {@link keys}, with the source that set it; secrets redacted. */
  get entries(): ReadonlyArray<Entry> {
    return all.flatMap((k) => {
      const own = this.#settings.get(k.name)
      const setting = own ?? this.#setting(k.name)
      if (setting === undefined) return []
      const source = own === undefined ? `${setting.source}, via ${k.fallback}` : setting.source
      return [{ key: k.name, value: k.secret ? redacted : setting.raw, source }]
    })
  }

  get workerTimeoutMillis() {
    return this.#value(keys.workerTimeout)
  }
  get deadWorkerPersistence() {
    return this.#value(keys.deadWorkerPersistence)
  }
  get recoveryMode() {
    return this.#value(keys.recoveryMode)
  }
  get recoveryDirectory() {
    return this.#value(keys.recoveryDirectory)
  }
  /** `kindling.deploy.recoveryTimeout`, or the worker timeout when unset. */
  get recoveryTimeoutMillis() {
    return this.#value(keys.recoveryTimeout)
  }
  get retainedApplications() {
    return this.#value(keys.retainedApplications)
  }
  get retainedDrivers() {
    return this.#value(keys.retainedDrivers)
  }
  get spreadOut() {
    return this.#value(keys.spreadOut)
  }
  /** `Infinity` unless set. */
  get defaultCores() {
    return this.#value(keys.defaultCores)
  }
  get maxExecutorRetries() {
    return this.#value(keys.maxExecutorRetries)
  }
  get masterUiPort() {
    return this.#value(keys.masterUiPort)
  }
  get restEnabled() {
    return this.#value(keys.restEnabled)
  }
  get restPort() {
    return this.#value(keys.restPort)
  }
  get workerUiPort() {
    return this.#value(keys.workerUiPort)
  }
  get cleanupEnabled() {
    return this.#value(keys.cleanupEnabled)
  }
  get cleanupIntervalMillis() {
    return this.#value(keys.cleanupInterval)
  }
  get cleanupAppDataTtlMillis() {
    return this.#value(keys.cleanupAppDataTtl)
  }
  get workerUiRetainedExecutors() {
    return this.#value(keys.workerUiRetainedExecutors)
  }
  get workerUiRetainedDrivers() {
    return this.#value(keys.workerUiRetainedDrivers)
  }
  get driverTerminateTimeoutMillis() {
    return this.#value(keys.driverTerminateTimeout)
  }
  get executorTerminateTimeoutMillis() {
    return this.#value(keys.executorTerminateTimeout)
  }
  get executorStateSyncMaxAttempts() {
    return this.#value(keys.executorStateSyncMaxAttempts)
  }
  get registerInitialIntervalMillis() {
    return this.#value(keys.registerInitialInterval)
  }
  get registerInitialAttempts() {
    return this.#value(keys.registerInitialAttempts)
  }
  get registerProlongedIntervalMillis() {
    return this.#value(keys.registerProlongedInterval)
  }
  get registerMaxAttempts() {
    return this.#value(keys.registerMaxAttempts)
  }
  get superviseInitialBackoffMillis() {
    return this.#value(keys.superviseInitialBackoff)
  }
  get authenticate() {
    return this.#value(keys.authenticate)
  }
  get authenticateSecret() {
    return this.#value(keys.authenticateSecret)
  }
  get networkTimeoutMillis() {
    return this.#value(keys.networkTimeout)
  }
  /** `kindling.rpc.askTimeout`, or the network timeout when unset. */
  get askTimeoutMillis() {
    return this.#value(keys.askTimeout)
  }
  /** `kindling.rpc.lookupTimeout`, or the network timeout when unset. */
  get lookupTimeoutMillis() {
    return this.#value(keys.lookupTimeout)
  }
  get rpcMessageMaxSizeMiB() {
    return this.#value(keys.rpcMessageMaxSize)
  }
  get master() {
    return this.#value(keys.master)
  }
  get appName() {
    return this.#value(keys.appName)
  }
  get deployMode() {
    return this.#value(keys.deployMode)
  }
  get waitAppCompletion() {
    return this.#value(keys.waitAppCompletion)
  }
  get driverMemoryMiB() {
    return this.#value(keys.driverMemory)
  }
  get driverCores() {
    return this.#value(keys.driverCores)
  }
  get driverSupervise() {
    return this.#value(keys.driverSupervise)
  }
  get executorMemoryMiB() {
    return this.#value(keys.executorMemory)
  }
  get executorCores() {
    return this.#value(keys.executorCores)
  }
  get coresMax() {
    return this.#value(keys.coresMax)
  }
  get executorHeartbeatIntervalMillis() {
    return this.#value(keys.executorHeartbeatInterval)
  }
  get reviveIntervalMillis() {
    return this.#value(keys.reviveInterval)
  }
  get taskMaxFailures() {
    return this.#value(keys.taskMaxFailures)
  }
  get taskCpus() {
    return this.#value(keys.taskCpus)
  }
}

// Only the type is exported: a Conf comes from `resolve`, which has checked every value it holds.
export type { Conf }

/**
 * Merges sources given lowest first over the built-in defaults: a later source's value wins. Every unknown key
 * and ill-typed value of every source is reported at once.
 *
 * @since 0.1.0
 * @category resolving
 */
export const resolve = (sources: ReadonlyArray<Source>): Either.Either<Conf, InvalidConf> => {
  const settings = new Map(defaults)
  const problems: Array<Problem> = []
  for (const source of sources) {
    for (const [name, raw] of Object.entries(source.values)) {
      Either.match(check(source.name, undefined, name, raw), {
        onLeft: (problem) => problems.push(problem),
        onRight: (value) => settings.set(name, { raw, source: source.name, value })
      })
    }
  }
  return problems.length > 0 ? Either.left(new InvalidConf({ problems })) : Either.right(new Conf(settings))
}

const typeText = (type: Type): string => {
  switch (type._tag) {
    case "int":
      return type.min === undefined
        ? "int"
        : type.max === undefined
        ? `int ≥ ${type.min}`
        : `int ${type.min}–${type.max}`
    case "enum":
      return type.values.map((value) => `\`${value}\``).join(" \\| ")
    case "duration":
      return `duration (bare number: ${type.unit})`
    case "memory":
      return "size (bare number: MiB)"
    case "cores-or-infinite":
      return "int ≥ 1 or `infinite`"
    default:
      return type._tag
  }
}

const defaultText = (k: Key): string =>
  k.default !== undefined
    ? `\`${k.default === "" ? "\"\"" : k.default}\``
    : k.fallback !== undefined
    ? `\`${k.fallback}\``
    : "unset"

/**
 * The configuration reference in markdown: the sources and formats, then a table of every key with its type,
 * default and description. `docs/configuration.md` is this text.
 *
 * @since 0.1.0
 * @category documentation
 */
export const describe = (): string =>
  [
    "# Kindling configuration",
    "",
    "Generated from `packages/protocol/src/Conf.ts` by `pnpm docs`; do not edit by hand.",
    "",
    "The keys are Spark's with a `kindling.` prefix, and the defaults are Spark 3.3's. Each process reads them",
    "from these sources, lowest first; a later one wins:",
    "",
    "1. the defaults below;",
    "2. `conf/kindling-defaults.conf`: one `key value` or `key=value` per line; blank lines and lines starting",
    "   with `#` (or `!`) are ignored;",
    "3. environment variables: `KINDLING_` and the key in upper case with dots as underscores, matched",
    "   case-insensitively (`KINDLING_WORKER_TIMEOUT` is `kindling.worker.timeout`,",
    "   `KINDLING_DEPLOY_RECOVERYMODE` is `kindling.deploy.recoveryMode`);",
    "4. `--conf key=value` and the command's flags.",
    "",
    "The `kindling` command reads these `KINDLING_` variables itself; they are not configuration:",
    `${launcherVariables.map((v) => `\`${v}\``).join(", ")}.`,
    "",
    "An unknown key (or `KINDLING_` variable) or a value of the wrong type stops the process, with every problem",
    "and where it was set listed.",
    "",
    "Durations are whole numbers with a unit: `us`, `ms`, `s`, `m` or `min`, `h`, `d` (`60s`, `500ms`, `5min`);",
    "a bare number is in the unit shown with the key's type. Sizes are whole numbers with `b`, `k`, `m`, `g`,",
    "`t` or `p` (or `kb`, `mb`, …) in powers of 1024 (`512m`, `2g`); a bare number is MiB. Booleans are `true`",
    "or `false`. A default naming another key means that key's value.",
    "",
    "| Key | Type | Default | Description |",
    "|---|---|---|---|",
    ...all.map((k) =>
      `| \`${k.name}\` | ${typeText(k.type)} | ${defaultText(k)} | ${k.description.replace(/\|/g, "\\|")} |`
    ),
    ""
  ].join("\n")
