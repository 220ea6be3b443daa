/**
 * Loads a process's configuration from its sources, lowest first: the registry's defaults, the
 * properties file, `KINDLING_*` environment variables, `--conf key=value` flags and the command's own flags.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Conf from "./Conf.js"
import type * as Key from "./Key.js"
import { InvalidConf } from "./Problem.js"
import type { Registry } from "./Registry.js"
import * as Source from "./Source.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Read this file (`--properties-file`) instead of the defaults file; unlike that one, it must exist. */
  readonly propertiesFile?: string | undefined
  /** The arguments of the `--conf` flags, `key=value` each. */
  readonly conf?: ReadonlyArray<string>
  /** The values of the command's own flags by key name; `undefined` for a flag that was not given. */
  readonly flags?: Readonly<Record<string, string | undefined>>
  /** `fail` (the default) for the `kindling` command; see {@link Conf.UnknownKeys}. */
  readonly unknownKeys?: Conf.UnknownKeys
  /** The environment to read (default: the process's). */
  readonly env?: Readonly<Record<string, string | undefined>>
}

/**
 * Where Kindling is installed: `KINDLING_HOME`, else the current directory, as Spark uses `SPARK_HOME`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const home = (env: Readonly<Record<string, string | undefined>> = process.env): string =>
  env.KINDLING_HOME ?? process.cwd()

/**
 * `kindling-defaults.conf` in `KINDLING_CONF_DIR`, else in `conf/` under {@link home}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const defaultsFile = (env: Readonly<Record<string, string | undefined>> = process.env): string =>
  Path.join(env.KINDLING_CONF_DIR ?? Path.join(home(env), "conf"), "kindling-defaults.conf")

const isMissing = (error: unknown) => (error as NodeJS.ErrnoException | undefined)?.code === "ENOENT"

// The file as a source; nothing when it is the defaults file and it does not exist.
const readProperties = (
  file: string,
  required: boolean
): Effect.Effect<ReadonlyArray<Either.Either<Source.Source, InvalidConf>>> =>
  Effect.try(() => Fs.readFileSync(file, "utf8")).pipe(
    Effect.map((text) => [Source.parseProperties(text, file)]),
    Effect.catchAll(({ error }) =>
      Effect.succeed(
        isMissing(error) && !required ? [] : [
          Either.left(
            new InvalidConf({
              problems: [{
                _tag: "UnreadableFile",
                source: file,
                reason: isMissing(error) ? "it does not exist" : error instanceof Error ? error.message : String(error)
              }]
            })
          )
        ]
      )
    )
  )

/**
 * The configuration of the registry's keys. Every problem of every source (a missing or malformed file, a
 * malformed `--conf`, an unknown key, a value of the wrong type) is reported together.
 *
 * @since 0.1.0
 * @category constructors
 */
export const load = <K extends Key.Any>(
  registry: Registry<K>,
  options: Options = {}
): Effect.Effect<Conf.Conf<K>, InvalidConf> =>
  Effect.gen(function*() {
    const env = options.env ?? process.env
    const flags: Record<string, string> = {}
    for (const [key, value] of Object.entries(options.flags ?? {})) if (value !== undefined) flags[key] = value
    const sources = [
      ...yield* readProperties(options.propertiesFile ?? defaultsFile(env), options.propertiesFile !== undefined),
      Either.right(Source.fromEnv(registry, env)),
      Source.parseConfFlags(options.conf ?? []),
      Either.right({ name: "command-line flags", values: flags })
    ]
    const problems = sources.flatMap((source) => Either.isLeft(source) ? source.left.problems : [])
    if (problems.length > 0) return yield* new InvalidConf({ problems })
    return yield* Conf.resolve(
      registry,
      sources.flatMap((source) => Either.isRight(source) ? [source.right] : []),
      { unknownKeys: options.unknownKeys }
    )
  })
