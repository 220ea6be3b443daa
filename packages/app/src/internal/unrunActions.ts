// The actions an app made and never ran. An action is an Effect: `ds.saveAsTextFile(dir)` without `yield*` writes
// nothing, and nothing fails — the driver reports such actions when the app's main ends (`KindlingContext.unrunActions`).
//
// Actions are told apart by their call sites (`count at app.ts:12`), and a call site is reported only when none of
// the actions made there ran: an action the API makes inside another one the app called (`takeSample` counts, and
// collects only when it must) is named after the app's call, and so is the one that ran; and a loop that runs the
// action it makes on some turns only is not a mistake.
import type { CallSite } from "../CallSites.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface UnrunActions {
  /** An action is made where `site` says: returns what to call when it starts running. */
  readonly made: (site: () => CallSite) => () => void
  /** The call sites where actions were made and none has run, in the order they were made. */
  readonly neverRun: () => ReadonlyArray<string>
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const make = (): UnrunActions => {
  const pending = new Set<() => CallSite>()
  const ran = new Set<string>()
  return {
    made: (site) => {
      pending.add(site)
      return () => {
        if (!pending.delete(site)) return
        const short = site().short
        if (short !== undefined) ran.add(short)
      }
    },
    neverRun: () => {
      const sites = [...pending].map((site) => site().short)
      return [...new Set(sites)].filter((short): short is string => short !== undefined && !ran.has(short))
    }
  }
}
