/**
 * The `kindling` command: `master`, `worker`, `submit`, `status`, `kill` and `history`, with Spark's flags, and
 * `conformance`, which checks a node against the wire protocol.
 *
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import type * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import packageJson from "../package.json" with { type: "json" }
import * as Settings from "./Settings.js"
import * as SubmitCommands from "./SubmitCommands.js"

/**
 * @since 0.1.0
 * @category constants
 */
export const version: string = packageJson.version

// A command's module is loaded when the command runs: `kindling submit` does not load the master's, the workers'
// or the history server's code, a good part of what the CLI would otherwise load before it does anything.
const loaded = <M, A, E>(load: () => Promise<M>, run: (module: M) => Effect.Effect<A, E>): Effect.Effect<A, E> =>
  Effect.flatMap(Effect.promise(load), run)

// A command's result is the process's exit code; a failure is printed as its message and exits 1.
const exitCode = <E extends Settings.Failure>(effect: Effect.Effect<number | void, E>): Effect.Effect<void> =>
  effect.pipe(
    Effect.map((code) => code ?? 0),
    Effect.catchAll((error) => Console.error(`kindling: ${error.message}`).pipe(Effect.as(1))),
    Effect.flatMap((code) =>
      Effect.sync(() => {
        process.exitCode = code
      })
    )
  )

const propertiesFile = Options.file("properties-file").pipe(
  Options.withDescription("Read configuration from this file instead of conf/kindling-defaults.conf"),
  Options.optional
)
const conf = Options.keyValueMap("conf").pipe(
  Options.withDescription("Set a configuration key, as key=value (repeatable)"),
  Options.optional
)
const confList = (option: Option.Option<HashMap.HashMap<string, string>>) =>
  option._tag === "Some" ? Settings.confFlags(option.value) : []
const host = Options.text("host").pipe(Options.withDescription("The host to listen on"), Options.optional)
const webuiPort = Options.integer("webui-port").pipe(Options.withDescription("The web UI's port"), Options.optional)

const master = Command.make(
  "master",
  {
    host,
    port: Options.integer("port").pipe(
      Options.withDescription("The port to listen on (0: any free port)"),
      Options.withDefault(7077)
    ),
    webuiPort,
    propertiesFile,
    conf
  },
  (args) =>
    exitCode(
      loaded(() => import("./MasterCommand.js"), (command) => command.run({ ...args, conf: confList(args.conf) }))
    )
).pipe(Command.withDescription("Start a master"))

const history = Command.make(
  "history",
  {
    host,
    port: Options.integer("port").pipe(
      Options.withDescription("The port of the UI and API (default: kindling.history.ui.port, 18080; 0: any)"),
      Options.optional
    ),
    propertiesFile,
    conf,
    logDirectory: Args.text({ name: "log-dir" }).pipe(
      Args.withDescription("The folder of event logs (default: kindling.history.fs.logDirectory)"),
      Args.optional
    )
  },
  (args) =>
    exitCode(
      loaded(() => import("./HistoryCommand.js"), (command) => command.run({ ...args, conf: confList(args.conf) }))
    )
).pipe(Command.withDescription("Start a history server over a folder of event logs"))

const worker = Command.make(
  "worker",
  {
    master: Args.text({ name: "master-url" }).pipe(Args.withDescription("kindling://host:port[,host2:port2]")),
    cores: Options.integer("cores").pipe(Options.withDescription("Cores to offer (default: all)"), Options.optional),
    memory: Options.text("memory").pipe(
      Options.withDescription("Memory to offer, e.g. 2g or 512m (default: RAM minus 1 GiB, at least 1 GiB)"),
      Options.optional
    ),
    workDir: Options.directory("work-dir").pipe(
      Options.withDescription("Where drivers and executors run"),
      Options.optional
    ),
    host,
    port: Options.integer("port").pipe(
      Options.withDescription("The port to listen on (default: any)"),
      Options.withDefault(0)
    ),
    webuiPort,
    propertiesFile,
    conf
  },
  (args) =>
    exitCode(
      loaded(() => import("./WorkerCommand.js"), (command) => command.run({ ...args, conf: confList(args.conf) }))
    )
).pipe(Command.withDescription("Start a worker and register it with the masters"))

const masterUrl = Options.text("master").pipe(
  Options.withDescription("kindling://host:port[,host2:port2], or a REST server's http://host:port"),
  Options.optional
)

const submitOptions = {
  master: masterUrl,
  deployMode: Options.choice("deploy-mode", ["client", "cluster"]).pipe(
    Options.withDescription("Where the driver runs: client (here, the default) or cluster (on a worker)"),
    Options.optional
  ),
  executorCores: Options.integer("executor-cores").pipe(
    Options.withDescription("Cores of each executor (default: all a worker has free)"),
    Options.optional
  ),
  executorMemory: Options.text("executor-memory").pipe(
    Options.withDescription("Memory of each executor, e.g. 2g (default 1g)"),
    Options.optional
  ),
  totalExecutorCores: Options.integer("total-executor-cores").pipe(
    Options.withDescription("The most cores the app uses across the cluster"),
    Options.optional
  ),
  name: Options.text("name").pipe(Options.withDescription("The application's name"), Options.optional),
  driverCores: Options.integer("driver-cores").pipe(
    Options.withDescription("Cores for the driver (default 1)"),
    Options.optional
  ),
  driverMemory: Options.text("driver-memory").pipe(
    Options.withDescription("Memory for the driver, e.g. 1g (default 1g)"),
    Options.optional
  ),
  supervise: Options.boolean("supervise").pipe(Options.withDescription("Restart the driver if it fails")),
  wait: Options.boolean("wait").pipe(
    Options.withDescription("Follow the driver to its end; exit 0 only if FINISHED")
  ),
  status: Options.text("status").pipe(
    Options.withDescription("Print this driver's status instead of submitting (as kindling status)"),
    Options.optional
  ),
  kill: Options.text("kill").pipe(
    Options.withDescription("Kill this driver instead of submitting (as kindling kill)"),
    Options.optional
  ),
  propertiesFile,
  conf
}

const submit = Command.make(
  "submit",
  {
    ...submitOptions,
    app: Args.text({ name: "app" }).pipe(
      Args.withDescription("The app: a path, or a file://, http:// or https:// URL"),
      Args.optional
    ),
    args: Args.text({ name: "args" }).pipe(Args.repeated)
  },
  (args) =>
    exitCode(
      Effect.zipRight(warnMisplacedOptions(args.args), SubmitCommands.submit({ ...args, conf: confList(args.conf) }))
    )
).pipe(Command.withDescription("Submit an app to run as a driver on the cluster; prints the driver id"))

// As with spark-submit, what follows APP is the app's; a Kindling option there is most likely a mistake, so say so.
const warnMisplacedOptions = (appArgs: ReadonlyArray<string>) =>
  Effect.forEach(
    appArgs.filter((arg) => submitOptionNames.has(arg.split("=")[0]!)),
    (arg) =>
      Effect.logWarning(
        `${arg} comes after the app, so it is passed to the app as an argument; kindling's options go before the app`
      ),
    { discard: true }
  )

const driverCommand = (name: string, description: string, run: typeof SubmitCommands.status) =>
  Command.make(
    name,
    { master: masterUrl, propertiesFile, conf, driverId: Args.text({ name: "driver-id" }) },
    (args) => exitCode(run({ ...args, conf: confList(args.conf) }))
  ).pipe(Command.withDescription(description))

// `kindling status [DRIVER_ID]`: a driver's status, or without one every master's state.
const status = Command.make(
  "status",
  {
    master: masterUrl,
    propertiesFile,
    conf,
    driverId: Args.text({ name: "driver-id" }).pipe(Args.optional)
  },
  (args) =>
    exitCode(
      Option.match(args.driverId, {
        onNone: () => SubmitCommands.masters({ ...args, conf: confList(args.conf) }),
        onSome: (driverId) => SubmitCommands.status({ ...args, driverId, conf: confList(args.conf) })
      })
    )
).pipe(
  Command.withDescription(
    "Print a driver's status as JSON; without a driver id, the state of each master of --master " +
      "(ALIVE, STANDBY, RECOVERING, COMPLETING_RECOVERY)"
  )
)

const conformance = Command.make(
  "conformance",
  {
    target: Options.text("target").pipe(Options.withDescription("The node to check, as kindling://host:port")),
    role: Options.choice("role", ["master", "worker"]).pipe(Options.withDescription("What the node is")),
    secret: Options.text("secret").pipe(
      Options.withDescription("The cluster's shared secret (default: kindling.authenticate.secret, when on)"),
      Options.optional
    ),
    timeout: Options.integer("timeout").pipe(
      Options.withDescription("Seconds to wait for each answer"),
      Options.withDefault(5)
    ),
    propertiesFile,
    conf
  },
  (args) =>
    exitCode(
      loaded(() => import("./ConformanceCommand.js"), (command) => command.run({ ...args, conf: confList(args.conf) }))
    )
).pipe(
  Command.withDescription(
    "Check that a master or worker speaks the wire protocol: the handshake, every ask of its role, framing and " +
      "dropped peers, a line per check (exit 1 if any fails). Use a node set aside for it: on a master it submits " +
      "and kills drivers."
  )
)

/**
 * @since 0.1.0
 * @category commands
 */
export const kindling = Command.make(
  "kindling",
  {},
  () => Console.log(`kindling ${version}: run \`kindling --help\` for the commands.`)
).pipe(
  Command.withDescription("Kindling: master, worker and submission commands for a Spark-like cluster"),
  Command.withSubcommands([
    master,
    worker,
    submit,
    status,
    driverCommand("kill", "Kill a driver", SubmitCommands.kill),
    history,
    conformance
  ])
)

// Read off the options themselves, so that an option added to `submit` is never taken for APP.
const submitOptionList = Object.values<Options.Options<unknown>>(submitOptions)
const submitOptionNames: ReadonlySet<string> = new Set(
  submitOptionList.flatMap((option) => Option.toArray(Options.getIdentifier(option)))
)
const submitOptionsWithValue: ReadonlySet<string> = new Set(
  submitOptionList.flatMap((option) => (Options.isBool(option) ? [] : Option.toArray(Options.getIdentifier(option))))
)

// `kindling submit [options] APP [ARGS…]`: everything after APP belongs to the app, even what looks like an
// option, as with spark-submit. @effect/cli stops reading options at `--`, so one goes in after APP.
const separateAppArgs = (argv: ReadonlyArray<string>): ReadonlyArray<string> => {
  const command = argv.indexOf("submit", 2)
  if (command !== 2 || argv.includes("--")) return argv
  for (let i = command + 1; i < argv.length; i++) {
    const token = argv[i]!
    if (submitOptionsWithValue.has(token)) i++
    else if (!token.startsWith("-")) return [...argv.slice(0, i + 1), "--", ...argv.slice(i + 1)]
  }
  return argv
}

// `--conf` may be given any number of times, between any other options, as spark-submit allows; @effect/cli only
// reads a repeated option whose occurrences are next to each other (Effect-TS/effect#3729), so they are moved
// together, right after the command, before parsing. What follows `--` (an app's arguments) is left alone.
const gatherConfFlags = (argv: ReadonlyArray<string>): ReadonlyArray<string> => {
  const end = argv.includes("--") ? argv.indexOf("--") : argv.length
  const confs: Array<string> = []
  const rest: Array<string> = []
  for (let i = 3; i < end; i++) {
    const token = argv[i]!
    if (token === "--conf" && i + 1 < end) confs.push(token, argv[++i]!)
    else if (token.startsWith("--conf=")) confs.push(token)
    else rest.push(token)
  }
  return [...argv.slice(0, 3), ...confs, ...rest, ...argv.slice(end)]
}

const runKindling = Command.run(kindling, { name: "kindling", version })

/**
 * Parses `argv` (as `process.argv`: node, script, then the arguments) and runs the command.
 *
 * @since 0.1.0
 * @category running
 */
export const run = (argv: ReadonlyArray<string>) => runKindling(gatherConfFlags(separateAppArgs(argv)))
