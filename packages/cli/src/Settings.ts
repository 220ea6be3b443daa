/**
 * What every `kindling` command shares: its configuration, resolved from the four sources of DESIGN §6, the
 * RpcEnv options that follow from it, and the log format.
 *
 * @since 0.1.0
 */
import { Conf } from "@kindling/protocol"
import type { RpcEnv } from "@kindling/protocol"
import * as Cause from "effect/Cause"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as HashMap from "effect/HashMap"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Fs from "node:fs"
import * as Path from "node:path"

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

/**
 * Where Kindling is installed (`KINDLING_HOME`, else the current directory), as Spark uses `SPARK_HOME`.
 *
 * @since 0.1.0
 * @category constants
 */
export const home = (): string => process.env.KINDLING_HOME ?? process.cwd()

const defaultsFile = () =>
  Path.join(process.env.KINDLING_CONF_DIR ?? Path.join(home(), "conf"), "kindling-defaults.conf")

/**
 * Resolves the configuration: built-in defaults < the properties file (`--properties-file`, else
 * `conf/kindling-defaults.conf` when it exists) < `KINDLING_*` variables < `--conf` < the command's own flags.
 *
 * @since 0.1.0
 * @category constructors
 */
export const load = (options: {
  readonly propertiesFile: Option.Option<string>
  readonly conf: ReadonlyArray<string>
  readonly flags?: Readonly<Record<string, string | undefined>>
}): Effect.Effect<Conf.Conf, UsageError | Conf.InvalidConf> =>
  Effect.gen(function*() {
    const file = Option.getOrElse(options.propertiesFile, defaultsFile)
    const sources: Array<Conf.Source> = []
    if (Fs.existsSync(file)) {
      const text = yield* Effect.try({
        try: () => Fs.readFileSync(file, "utf8"),
        catch: (error) => new UsageError({ message: `Cannot read ${file}: ${String(error)}` })
      })
      sources.push({ name: file, values: yield* Conf.parseProperties(text, file) })
    } else if (Option.isSome(options.propertiesFile)) {
      return yield* new UsageError({ message: `Properties file ${file} does not exist` })
    }
    sources.push({ name: "environment", values: Conf.fromEnv(process.env) })
    const confValues: Record<string, string> = {}
    for (const flag of options.conf) {
      const [key, value] = yield* Conf.parseConfFlag(flag)
      confValues[key] = value
    }
    sources.push({ name: "--conf", values: confValues })
    const flags: Record<string, string> = {}
    for (const [key, value] of Object.entries(options.flags ?? {})) if (value !== undefined) flags[key] = value
    sources.push({ name: "command-line flags", values: flags })
    return yield* Either.match(Conf.resolve(sources), { onLeft: Effect.fail, onRight: Effect.succeed })
  })

/**
 * The RpcEnv settings every node takes from the configuration: the shared secret, the frame limit and the
 * ask timeout.
 *
 * @since 0.1.0
 * @category constructors
 */
export const rpcOptions = (conf: Conf.Conf): Effect.Effect<RpcEnv.Options, UsageError> =>
  Effect.gen(function*() {
    if (conf.authenticate && conf.authenticateSecret === undefined) {
      return yield* new UsageError({
        message: "kindling.authenticate is true but no kindling.authenticate.secret is set"
      })
    }
    return {
      maxFrameSize: conf.rpcMessageMaxSizeMiB * 1024 * 1024,
      askTimeout: conf.askTimeoutMillis,
      ...(conf.authenticate && conf.authenticateSecret !== undefined ? { secret: conf.authenticateSecret } : {})
    }
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
