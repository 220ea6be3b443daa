/**
 * What every `kindling` command shares: the registry of every role's keys and the configuration loaded with it,
 * the errors a command reports, and the log format.
 *
 * @since 0.1.0
 */
import { type Conf, type Key, type Problem, Registry } from "@kindling/conf"
import { NodeLoader } from "@kindling/conf/node"
import { DriverConf } from "@kindling/driver"
import { KernelConf, TlsConf } from "@kindling/kernel"
import { MasterConf } from "@kindling/master"
import { HistoryConf } from "@kindling/monitoring"
import { ProtocolConf } from "@kindling/rpc"
import { NodeExposure } from "@kindling/rpc/node"
import { WorkerConf } from "@kindling/worker"
import * as Data from "effect/Data"
import type * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
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
  HistoryConf.group,
  KernelConf.group,
  TlsConf.group
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

/**
 * Refuses to open the RPC port of `service` (a master, a worker) on `host` beyond loopback without `secret`,
 * the one the RpcEnv will use, unless `kindling.authenticate=false` was set explicitly (`NodeExposure`).
 *
 * @since 0.1.0
 * @category checks
 */
export const checkRpcExposure = (
  conf: Conf.Conf<Keys>,
  service: string,
  host: string,
  secret: string | undefined
): Effect.Effect<void, NodeExposure.Unprotected> =>
  NodeExposure.check({
    service,
    host,
    hostSetting: "--host",
    secret,
    secretSetting: `${ProtocolConf.keys.authenticate.name}=true with ${ProtocolConf.keys.authenticateSecret.name}`,
    optedOut: NodeExposure.optedOut(conf)
  })
