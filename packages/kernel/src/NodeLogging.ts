/**
 * How a Kindling process logs: `yyyy-MM-dd HH:mm:ss.SSS LEVEL message` on stderr, like Spark's daemons, so that
 * stdout is left to what a command prints for scripts (a driver id, a status) and to an app's own output.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Logger from "effect/Logger"

const pad = (n: number, width = 2) => String(n).padStart(width, "0")

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = Logger.replace(
  Logger.defaultLogger,
  Logger.make(({ cause, date, logLevel, message }) => {
    const stamp = `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ` +
      `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`
    const text = Array.isArray(message) ? message.map(String).join(" ") : String(message)
    const detail = Cause.isEmpty(cause) ? "" : `\n${Cause.pretty(cause)}`
    process.stderr.write(`${stamp} ${logLevel.label.padEnd(5)} ${text}${detail}\n`)
  })
)
