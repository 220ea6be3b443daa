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
import * as CommandLine from "./internal/commandLine.js"
import * as Help from "./internal/help.js"
import { loaded } from "./internal/loaded.js"
import * as Release from "./Release.js"
import * as Settings from "./Settings.js"
import * as SubmitCommands from "./SubmitCommands.js"

/**
 * @since 0.1.0
 * @category constants
 */
export const version: string = Release.describe(Release.current())

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

// A service (master, worker, history server) runs until it is stopped: stopped by a signal, it has done what it was
// asked and exits 0, where a command stopped half-way exits with the signal's code (bin.ts).
const service = <E extends Settings.Failure>(effect: Effect.Effect<number | void, E>): Effect.Effect<void> =>
  exitCode(effect).pipe(Effect.onInterrupt(() =>
    Effect.sync(() => {
      process.exitCode = 0
    })
  ))

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

const masterOptions = {
  host,
  port: Options.integer("port").pipe(
    Options.withDescription("The port to listen on (0: any free port)"),
    Options.withDefault(7077)
  ),
  webuiPort,
  propertiesFile,
  conf
}

const master = Command.make(
  "master",
  masterOptions,
  (args) =>
    service(
      loaded(() => import("./MasterCommand.js"), (command) => command.run({ ...args, conf: confList(args.conf) }))
    )
).pipe(Command.withDescription("Start a master"))

const historyOptions = {
  host,
  port: Options.integer("port").pipe(
    Options.withDescription("The port of the UI and API (default: kindling.history.ui.port, 18080; 0: any)"),
    Options.optional
  ),
  propertiesFile,
  conf
}

const history = Command.make(
  "history",
  {
    ...historyOptions,
    logDirectory: Args.text({ name: "log-dir" }).pipe(
      Args.withDescription("The folder of event logs (default: kindling.history.fs.logDirectory)"),
      Args.optional
    )
  },
  (args) =>
    service(
      loaded(() => import("./HistoryCommand.js"), (command) => command.run({ ...args, conf: confList(args.conf) }))
    )
).pipe(Command.withDescription("Start a history server over a folder of event logs"))

const workerOptions = {
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
}

const worker = Command.make(
  "worker",
  {
    master: Args.text({ name: "master-url" }).pipe(Args.withDescription("kindling://host:port[,host2:port2]")),
    ...workerOptions
  },
  (args) =>
    service(
      loaded(() => import("./WorkerCommand.js"), (command) => command.run({ ...args, conf: confList(args.conf) }))
    )
).pipe(Command.withDescription("Start a worker and register it with the masters"))

const masterUrl = Options.text("master").pipe(
  Options.withDescription("kindling://host:port[,host2:port2], or a REST server's http://host:port"),
  Options.optional
)

const submitOptions = {
  master: Options.text("master").pipe(
    Options.withDescription(
      "Where the app runs: local (one task thread), local[N] (N threads), local[*] (a thread per core: the " +
        "default), local[N,F] (a task may fail F times), local-cluster[W,C,M] (a master and W workers of C cores " +
        "and M MiB in this process, executors as processes), kindling://host:port[,host2:port2] (a cluster: the " +
        "driver runs here, or on a worker with --deploy-mode cluster), or a REST server's http://host:port " +
        "(cluster deploy mode)"
    ),
    Options.optional
  ),
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
  check: Options.boolean("check").pipe(
    Options.withDescription(
      "Type-check the app first, with TypeScript and the Effect language service (an Effect never run, …); " +
        "submit it only if it has no error"
    )
  ),
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
      Args.withDescription(
        "The app: a TypeScript or JavaScript module whose default export is App.make(main), bundled here with what " +
          "it imports; in cluster deploy mode also a file://, http:// or https:// URL of a bundled one"
      ),
      Args.optional
    ),
    args: Args.text({ name: "args" }).pipe(
      Args.withDescription("The app's arguments (kindling's options go before the app)"),
      Args.repeated
    )
  },
  (args) =>
    exitCode(
      Effect.zipRight(warnMisplacedOptions(args.args), SubmitCommands.submit({ ...args, conf: confList(args.conf) }))
    )
).pipe(
  Command.withDescription(
    "Run an app: in this process (local modes, and client deploy mode on a cluster), its output on stdout and its " +
      "logs on stderr; or as a driver on a worker (--deploy-mode cluster), printing the driver's id. E.g. " +
      "kindling submit --master 'local[4]' app.ts input.txt"
  )
)

const driverOptions = { master: masterUrl, propertiesFile, conf }

const driverCommand = (name: string, description: string, run: typeof SubmitCommands.status) =>
  Command.make(
    name,
    { ...driverOptions, driverId: Args.text({ name: "driver-id" }) },
    (args) => exitCode(run({ ...args, conf: confList(args.conf) }))
  ).pipe(Command.withDescription(description))

// `kindling status [DRIVER_ID]`: a driver's status, or without one every master's state.
const status = Command.make(
  "status",
  {
    ...driverOptions,
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

// `kindling decommission WORKER...`: workers taken out of service, by id or host.
const decommission = Command.make(
  "decommission",
  { ...driverOptions, workers: Args.text({ name: "worker-id-or-host" }).pipe(Args.atLeast(1)) },
  (args) => exitCode(SubmitCommands.decommission({ ...args, conf: confList(args.conf) }))
).pipe(
  Command.withDescription(
    "Decommission workers, by id (worker-…) or host: they take no new work, their executors finish their tasks " +
      "and move their shuffle outputs and cached blocks to other executors, and each exits once empty"
  )
)

const conformanceOptions = {
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
}

const conformance = Command.make(
  "conformance",
  conformanceOptions,
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
    decommission,
    history,
    conformance
  ])
)

// What each command's options are called, for the command line to be checked against before it is parsed.
const options = {
  master: CommandLine.commandOptions(masterOptions),
  worker: CommandLine.commandOptions(workerOptions),
  submit: CommandLine.commandOptions(submitOptions),
  status: CommandLine.commandOptions(driverOptions),
  kill: CommandLine.commandOptions(driverOptions),
  decommission: CommandLine.commandOptions(driverOptions),
  history: CommandLine.commandOptions(historyOptions),
  conformance: CommandLine.commandOptions(conformanceOptions)
}

// As with spark-submit, what follows APP is the app's; a Kindling option there is most likely a mistake, so say so.
const warnMisplacedOptions = (appArgs: ReadonlyArray<string>) =>
  Effect.forEach(
    appArgs.filter((arg) => options.submit.names.has(arg.split("=")[0]!)),
    (arg) =>
      Effect.logWarning(
        `${arg} comes after the app, so it is passed to the app as an argument; kindling's options go before the app`
      ),
    { discard: true }
  )

const runKindling = Command.run(kindling, { name: "kindling", version })

/**
 * Parses `argv` (as `process.argv`: node, script, then the arguments) and runs the command. A command line that
 * cannot be what was meant is said in one line, with exit code 2.
 *
 * @since 0.1.0
 * @category running
 */
export const run = (argv: ReadonlyArray<string>): ReturnType<typeof runKindling> => {
  const prepared = CommandLine.prepare(argv, options)
  if (prepared instanceof CommandLine.CommandLineError) {
    return Effect.zipRight(
      Console.error(`kindling: ${prepared.message}`),
      Effect.sync(() => {
        process.exitCode = 2
      })
    )
  }
  const end = prepared.includes("--") ? prepared.indexOf("--") : prepared.length
  const help = prepared.slice(2, end).some((token) => token === "--help" || token === "-h")
  return help ? tidyHelp(runKindling(prepared)) : runKindling(prepared)
}

// @effect/cli colours its help whatever it is written to (into a file or a pipe the codes are only noise), and
// fills it with boilerplate: `Help.tidy`.
const tidyHelp = <A, E, R>(effect: Effect.Effect<A, E, R>) => {
  const colours = process.stdout.isTTY === true && process.env["NO_COLOR"] === undefined
  return Effect.flatMap(Effect.console, (console) =>
    Effect.withConsole(effect, {
      ...console,
      log: (...args: ReadonlyArray<unknown>) =>
        console.log(...args.map((arg) => (typeof arg === "string" ? Help.tidy(arg, colours, "kindling") : arg)))
    }))
}
