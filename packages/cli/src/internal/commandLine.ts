// The command line as @effect/cli is given it: read first here for what @effect/cli reads otherwise or not at all —
// an unknown option is named with the one it most likely meant (Spark's options Kindling lacks, with what to use
// instead), `--conf key` without a value is said in one line, `--log-level` is taken anywhere before the app, the
// app's own arguments are kept from being read as Kindling's, and repeated `--conf`s are put together.
import * as Options from "@effect/cli/Options"
import { Spelling } from "@kindling/conf"
import * as Option from "effect/Option"

/** What a command's options are called, and which of them take a value. */
export interface CommandOptions {
  readonly names: ReadonlySet<string>
  readonly withValue: ReadonlySet<string>
}

/** Read off the options themselves, so that an option added to a command is known here at once. */
export const commandOptions = (options: Record<string, Options.Options<unknown>>): CommandOptions => {
  const all = Object.values(options)
  const names = (list: ReadonlyArray<Options.Options<unknown>>) =>
    new Set(list.flatMap((option) => Option.toArray(Options.getIdentifier(option))))
  return { names: names(all), withValue: names(all.filter((option) => !Options.isBool(option))) }
}

/** The command line cannot be what was meant; `message` says why, in one line. */
export class CommandLineError {
  readonly _tag = "CommandLineError"
  constructor(readonly message: string) {}
}

// @effect/cli's own options, valid with every command.
const builtIns = new Set(["--help", "-h", "--version", "--wizard", "--completions", "--log-level"])
const builtInsWithValue = new Set(["--completions", "--log-level"])

// spark-submit's options that Kindling has no counterpart of, with what to do instead.
const sparkOnly: Record<string, string> = {
  "--num-executors": "is YARN's and Kubernetes': on a standalone cluster an app gets executors of " +
    "--executor-cores each, up to --total-executor-cores",
  "--class": "names a JVM main class: a Kindling app is its module's default export",
  "--jars": "ships JVM jars: a Kindling app is bundled with what it imports when it is submitted",
  "--packages": "ships JVM packages: a Kindling app is bundled with what it imports when it is submitted",
  "--py-files": "ships Python files: a Kindling app is bundled with what it imports when it is submitted",
  "--files": "ships files to executors: read them from a path every node sees, or broadcast their contents",
  "--queue": "is YARN's: a standalone cluster has no queues"
}

const unknownOption = (command: string, name: string, known: CommandOptions) => {
  const spark = sparkOnly[name]
  if (spark !== undefined) return new CommandLineError(`kindling ${command} has no ${name}: Spark's ${name} ${spark}`)
  const near = Spelling.nearest([...known.names, ...builtIns], name)
  return new CommandLineError(
    `kindling ${command} has no option ${name}` + (near === undefined ? "" : ` (did you mean ${near}?)`) +
      `; kindling ${command} --help lists its options`
  )
}

const isLogLevel = (token: string) => token === "--log-level" || token.startsWith("--log-level=")

/**
 * `argv` (as `process.argv`) made ready for @effect/cli, or what is wrong with it. `commands` holds the options of
 * each command; one not in it is left to @effect/cli to refuse.
 */
export const prepare = (
  argv: ReadonlyArray<string>,
  commands: Readonly<Record<string, CommandOptions>>
): ReadonlyArray<string> | CommandLineError => {
  const [node = "node", script = "kindling", ...tokens] = argv
  // `--log-level` goes before the command, where @effect/cli reads it: it may be given anywhere before the app.
  const levels: Array<string> = []
  const rest: Array<string> = []
  let at = 0
  for (; at < tokens.length && tokens[at]!.startsWith("-"); at++) {
    if (isLogLevel(tokens[at]!)) levels.push(tokens[at]!, ...(tokens[at]!.includes("=") ? [] : [tokens[++at] ?? ""]))
    else rest.push(tokens[at]!)
  }
  const command = tokens[at]
  const known = command === undefined ? undefined : commands[command]
  if (command === undefined || known === undefined) return argv
  const options: Array<string> = []
  const confs: Array<string> = []
  let end = at + 1
  // The options run to `--`, or for `submit` to its app: everything after APP is the app's, even what looks like
  // an option, as with spark-submit.
  for (; end < tokens.length; end++) {
    const token = tokens[end]!
    if (token === "--") break
    if (!token.startsWith("-") || token === "-") {
      if (command === "submit") break
      options.push(token)
      continue
    }
    const [name = token] = token.split("=", 1)
    const inline = token.length > name.length
    if (!known.names.has(name) && !builtIns.has(name)) return unknownOption(command, name, known)
    const takesValue = known.withValue.has(name) || builtInsWithValue.has(name)
    const value = takesValue && !inline ? tokens[++end] : undefined
    if (takesValue && !inline && value === undefined) return new CommandLineError(`${name} needs a value`)
    if (name === "--conf") {
      const setting = inline ? token.slice(name.length + 1) : value!
      if (!setting.includes("=")) {
        return new CommandLineError(`--conf ${setting} has no value: give it as --conf ${setting}=VALUE`)
      }
      // @effect/cli reads a repeated option only when its occurrences are next to each other
      // (Effect-TS/effect#3729), so every --conf goes first, as spark-submit reads them anywhere.
      confs.push("--conf", setting)
    } else if (isLogLevel(token)) {
      levels.push(...(inline ? [token] : [token, value!]))
    } else {
      options.push(...(value === undefined ? [token] : [token, value]))
    }
  }
  const app = command === "submit" && end < tokens.length && tokens[end] !== "--"
    // @effect/cli stops reading options at `--`: one goes in after APP.
    ? [tokens[end]!, "--", ...tokens.slice(end + 1)]
    : tokens.slice(end)
  return [node, script, ...levels, ...rest, command, ...confs, ...options, ...app]
}
