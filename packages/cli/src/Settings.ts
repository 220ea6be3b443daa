/**
 * What every `kindling` command shares: the registry of every role's keys and the configuration loaded with it,
 * the errors a command reports, and the log format.
 *
 * @since 0.1.0
 */
import { type Conf, type Key, type Problem, Registry } from "@kindling/conf"
import { NodeLoader } from "@kindling/conf/node"
import { DriverConf } from "@kindling/driver"
import { KernelConf } from "@kindling/kernel"
import { MasterConf } from "@kindling/master"
import { ProtocolConf } from "@kindling/protocol"
import { WorkerConf } from "@kindling/worker"
import * as Cause from "effect/Cause"
import * as Data from "effect/Data"
import type * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"

/**
 * A command line that cannot be carried out: a missing file, a bad value, an unsupported mode.
 *
 * @since 0.1.0
 * @category errors
 */
export class UsageError extends Data.TaggedError("UsageError")<{ readonly message: string }> {}

/**
 * What a command can fail with: one of the typed errors of the packages, each with a readable message.
 *
 * @since 0.1.0
 * @category errors
 */
export interface Failure {
  readonly _tag: string
  readonly message: string
}

// Every role's keys, listed once: the registry and the type of its keys both come from here.
const groups = [
  ProtocolConf.group,
  MasterConf.group,
  WorkerConf.group,
  DriverConf.group,
  KernelConf.group
] as const satisfies ReadonlyArray<Registry.Group<Key.Any>>

/**
 * The keys of every role.
 *
 * @since 0.1.0
 * @category models
 */
export type Keys = Registry.KeyOf<(typeof groups)[number]>

/**
 * Every role's keys: the command is the front door of the cluster, so it refuses a key that no role knows before
 * anything starts.
 *
 * @since 0.1.0
 * @category constants
 */
export const registry: Registry.Registry<Keys> = Registry.make(...groups)

/**
 * Loads the configuration of {@link registry}: built-in defaults < the properties file (`--properties-file`,
 * else `conf/kindling-defaults.conf` when it exists) < `KINDLING_*` variables < `--conf` < the command's own
 * flags, given by key name.
 *
 * @since 0.1.0
 * @category constructors
 */
export const load = (options: {
  readonly propertiesFile: Option.Option<string>
  readonly conf: ReadonlyArray<string>
  readonly flags: Readonly<Record<string, string | undefined>>
}): Effect.Effect<Conf.Conf<Keys>, Problem.InvalidConf> =>
  NodeLoader.load(registry, {
    propertiesFile: Option.getOrUndefined(options.propertiesFile),
    conf: options.conf,
    flags: options.flags
  })

/**
 * The `--conf k=v` flags as the @effect/cli option gives them.
 *
 * @since 0.1.0
 * @category constructors
 */
export const confFlags = (map: HashMap.HashMap<string, string>): ReadonlyArray<string> =>
  [...HashMap.entries(map)].map(([key, value]) => `${key}=${value}`)

const pad = (n: number, width = 2) => String(n).padStart(width, "0")

/**
 * Logs as `yyyy-MM-dd HH:mm:ss.SSS LEVEL message` on stderr, like Spark's daemons, so stdout is left to what a
 * command prints for scripts (a driver id, a status).
 *
 * @since 0.1.0
 * @category layers
 */
export const logging = Logger.replace(
  Logger.defaultLogger,
  Logger.make(({ cause, date, logLevel, message }) => {
    const stamp = `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ` +
      `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`
    const text = Array.isArray(message) ? message.map(String).join(" ") : String(message)
    const detail = Cause.isEmpty(cause) ? "" : `\n${Cause.pretty(cause)}`
    process.stderr.write(`${stamp} ${logLevel.label.padEnd(5)} ${text}${detail}\n`)
  })
)
