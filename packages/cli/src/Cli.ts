/**
 * The `kindling` command. Subcommands (`master`, `worker`, `submit`, `status`, `kill`) are added by the
 * control-plane issue; this module holds the root command and its metadata.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Console from "effect/Console"
import packageJson from "../package.json" with { type: "json" }

/**
 * @since 0.1.0
 * @category constants
 */
export const version: string = packageJson.version

/**
 * @since 0.1.0
 * @category commands
 */
export const kindling = Command.make("kindling", {}, () =>
  Console.log(
    [
      `kindling ${version}: a typed reimplementation of Apache Spark's standalone cluster.`,
      "Run `kindling --help` for the commands and options."
    ].join("\n")
  )).pipe(Command.withDescription("Kindling: master, worker and submission commands for a Spark-like cluster"))

/**
 * Parses `argv` (as `process.argv`: node, script, then the arguments) and runs the command.
 *
 * @since 0.1.0
 * @category running
 */
export const run = Command.run(kindling, { name: "kindling", version })
