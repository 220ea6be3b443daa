/**
 * The configuration of the role kernel, which every role's shell runs on.
 *
 * @since 0.1.0
 */
import { Key, Registry, ValueType } from "@kindling/conf"

/**
 * @since 0.1.0
 * @category keys
 */
export const keys = {
  validateState: Key.make("kindling.debug.validateState", ValueType.boolean, {
    default: "false",
    description: "Run each role core's validate(state) after every step and stop the node on a violation (for " +
      "debugging and tests)."
  }),
  portMaxRetries: Key.make("kindling.port.maxRetries", ValueType.int({ min: 0 }), {
    default: "16",
    description: "A web UI whose port is taken tries the next ports, this many (as Spark's spark.port.maxRetries)."
  }),
  uiKillEnabled: Key.make("kindling.ui.killEnabled", ValueType.boolean, {
    default: "true",
    description: "The master UI shows kill buttons for apps and drivers, an app's UI for its running jobs (and " +
      "they accept the kills from their own pages only)."
  })
}

/**
 * @since 0.1.0
 * @category keys
 */
export const group = Registry.group({
  title: "Role kernel",
  description: "Read by every role's shell.",
  keys
})
