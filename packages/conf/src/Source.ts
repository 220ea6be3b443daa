/**
 * The places configuration comes from, read into named sets of `key → text`: a properties file in Spark's
 * `spark-defaults.conf` format, `KINDLING_*` environment variables and `--conf key=value` flags. Only the syntax
 * is checked here; keys and values are checked when the sources are resolved, so that every problem of every
 * source is reported together. Nothing here reads a file or the process's environment: the caller passes the
 * text, so the same rules apply in a test, a role and the `kindling` command.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import { dotted, envPrefix } from "./internal/names.js"
import type * as Key from "./Key.js"
import { InvalidConf, type Problem } from "./Problem.js"
import type * as Registry from "./Registry.js"

/**
 * Values from one place, named for messages and for the entries of a `Conf`; `lines` says where each key was set
 * when the place is a file.
 *
 * @since 0.1.0
 * @category models
 */
export interface Source {
  readonly name: string
  readonly values: Readonly<Record<string, string>>
  readonly lines?: Readonly<Record<string, number>>
}

/**
 * Reads a file in Spark's `spark-defaults.conf` format: one `key value` or `key=value` per line (`key: value`
 * too, as in Java properties); blank lines and lines starting with `#` or `!` are ignored; keys and values are
 * trimmed; a key set twice takes its last value.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseProperties = (text: string, name: string): Either.Either<Source, InvalidConf> => {
  const values: Record<string, string> = {}
  const lines: Record<string, number> = {}
  const problems: Array<Problem> = []
  text.split(/\r?\n/).forEach((line, index) => {
    const trimmed = line.trim()
    if (trimmed === "" || trimmed.startsWith("#") || trimmed.startsWith("!")) return
    const match = /^([^\s=:]+)\s*[=:]?\s*(.*)$/.exec(trimmed)
    if (match === null) {
      problems.push({ _tag: "MalformedEntry", source: name, line: index + 1, text: trimmed })
      return
    }
    values[match[1]!] = match[2]!
    lines[match[1]!] = index + 1
  })
  return problems.length > 0 ? Either.left(new InvalidConf({ problems })) : Either.right({ name, values, lines })
}

/**
 * `KINDLING_*` environment variables that the `kindling` command and the distribution's launch scripts (`sbin/`)
 * read themselves (as Spark's scripts read their `SPARK_*` counterparts) and that are therefore not configuration
 * keys. The scripts export what `conf/kindling-env.sh` sets, so every variable they read is here.
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
  "KINDLING_WORKER_DIR",
  "KINDLING_LOG_MAX_FILES",
  "KINDLING_IDENT_STRING",
  "KINDLING_NICENESS",
  "KINDLING_STOP_TIMEOUT",
  "KINDLING_NO_DAEMONIZE",
  "KINDLING_WORKERS",
  "KINDLING_SSH_OPTS"
]

/**
 * The configuration in an environment, as the source `environment`. A key's variable is `KINDLING_` and the key
 * in upper case with dots as underscores (`KINDLING_WORKER_TIMEOUT` is `kindling.worker.timeout`); since keys
 * have camelCase parts, a variable is matched case-insensitively (`KINDLING_DEPLOY_RECOVERYMODE` is
 * `kindling.deploy.recoveryMode`). {@link launcherVariables} are skipped; any other `KINDLING_` variable is kept
 * under its own name, so that resolving reports it as unknown together with every other problem.
 *
 * @since 0.1.0
 * @category parsing
 */
export const fromEnv = (
  registry: Registry.Registry<Key.Any>,
  env: Readonly<Record<string, string | undefined>>
): Source => {
  const byDottedName = new Map(registry.keys.map((key) => [key.name.toLowerCase(), key.name]))
  const values: Record<string, string> = {}
  for (const [variable, value] of Object.entries(env)) {
    if (value === undefined || !variable.startsWith(envPrefix) || launcherVariables.includes(variable)) continue
    values[byDottedName.get(dotted(variable)) ?? variable] = value
  }
  return { name: "environment", values }
}

/**
 * The arguments of `--conf` flags, as the source `--conf`, each split at its first `=`; a later flag for the same
 * key wins.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseConfFlags = (flags: ReadonlyArray<string>): Either.Either<Source, InvalidConf> => {
  const values: Record<string, string> = {}
  const problems: Array<Problem> = []
  for (const flag of flags) {
    const at = flag.indexOf("=")
    if (at <= 0) problems.push({ _tag: "MalformedEntry", source: "--conf", text: flag })
    else values[flag.slice(0, at).trim()] = flag.slice(at + 1).trim()
  }
  return problems.length > 0 ? Either.left(new InvalidConf({ problems })) : Either.right({ name: "--conf", values })
}
