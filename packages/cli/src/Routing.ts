/**
 * Which of the command's two builds runs a command line (`bin.ts`): the bundle serves every command that runs no
 * app in this process. One that may — `submit` in local mode or client deploy mode, where the app's artifact
 * imports `effect` and `@kindling/*` from the installation and must share them with the driver — runs the modules
 * as they are built. A submission counts as cluster mode only when its command line says so (`--deploy-mode
 * cluster`): set in a file or the environment instead, it runs unbundled, slower but the same.
 *
 * This module imports nothing: `bin.ts` decides before anything else is loaded.
 *
 * @since 0.1.0
 */

const bundled = new Set(["status", "kill", "decommission", "--help", "-h", "help"])

/**
 * The options of `kindling submit` that take no value (the rest take one, given as `--name value` or
 * `--name=value`): what tells the app, submit's first argument that is no option or option's value, from the rest.
 *
 * @since 0.1.0
 * @category routing
 */
export const submitFlags: ReadonlySet<string> = new Set([
  "--supervise",
  "--check",
  "--wait",
  "--help",
  "-h",
  "--wizard"
])

/**
 * Whether the bundle serves the command line `args` (without `node` and the script).
 *
 * @since 0.1.0
 * @category routing
 */
export const bundleServes = (args: ReadonlyArray<string>): boolean => {
  const [command] = args
  if (command === undefined) return true
  if (bundled.has(command)) return true
  if (command !== "submit") return false
  // submit's own options come before the app; what follows it is the app's.
  for (let i = 1; i < args.length; i++) {
    const arg = args[i]!
    if (arg === "--deploy-mode=cluster" || (arg === "--deploy-mode" && args[i + 1] === "cluster")) return true
    if (!arg.startsWith("-")) return false
    if (!submitFlags.has(arg) && !arg.includes("=")) i++
  }
  return false
}
