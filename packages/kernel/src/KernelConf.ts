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
