/**
 * The configuration the history server reads (`kindling history`); it replays logs with the app UI's retention
 * (`kindling.ui.retained*`).
 *
 * @since 0.1.0
 */
import { Key, Registry, ValueType } from "@kindling/conf"

/**
 * @since 0.1.0
 * @category keys
 */
export const keys = {
  uiPort: Key.make("kindling.history.ui.port", ValueType.port, {
    default: "18080",
    description: "Port of the history server's web UI and API; when taken, the next free one."
  }),
  logDirectory: Key.make("kindling.history.fs.logDirectory", ValueType.string, {
    default: "file:/tmp/kindling-events",
    description: "The folder of event logs the history server reads (a path or a file: URL)."
  }),
  updateInterval: Key.make("kindling.history.fs.update.interval", ValueType.duration("s"), {
    default: "10s",
    description: "How often the history server reads the log folder again for new and growing logs."
  }),
  retainedApplications: Key.make("kindling.history.retainedApplications", ValueType.int({ min: 1 }), {
    default: "50",
    description: "Finished apps whose replayed status the history server keeps in memory, those viewed last; " +
      "the others stay listed, and their log is read again when one of their pages is asked for."
  })
}

/**
 * @since 0.1.0
 * @category keys
 */
export const group = Registry.group({
  title: "History server",
  description: "Read by `kindling history`.",
  keys
})
