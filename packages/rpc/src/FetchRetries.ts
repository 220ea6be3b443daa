/**
 * When a fetch of a block whose attempt broke (a lost connection, a stalled server, a corrupt chunk) is tried
 * again, and when it gives up: the data fetcher's policy, pure, so that its properties are tested apart from
 * sockets and clocks. An attempt that got further than the one before resets the count, so that a long transfer
 * survives any number of blips that each let it progress; `maxRetries` attempts in a row that got nowhere, or a
 * failure that would fail the same way every time (a failed handshake), end the fetch. The wait doubles with each
 * failure in a row: `retryWaitMillis`, twice that, four times… (Spark's `spark.shuffle.io.maxRetries` and
 * `retryWait`, with its back-off).
 *
 * @since 0.1.0
 */

/**
 * @since 0.1.0
 * @category models
 */
export interface Settings {
  readonly maxRetries: number
  readonly retryWaitMillis: number
}

/**
 * What the fetcher does after an attempt broke: try again after `waitMillis`, or give up.
 *
 * @since 0.1.0
 * @category models
 */
export type Decision =
  | { readonly _tag: "Retry"; readonly failures: number; readonly waitMillis: number }
  | { readonly _tag: "GiveUp"; readonly failures: number }

/**
 * The decision after a broken attempt, given the failures in a row before it, whether it got further than where
 * it started, and whether its error is final; `failures` is the count to keep for the next.
 *
 * @since 0.1.0
 */
export const afterBroken = (
  settings: Settings,
  failuresBefore: number,
  progressed: boolean,
  final: boolean
): Decision => {
  const failures = progressed ? 1 : failuresBefore + 1
  return final || failures > settings.maxRetries
    ? { _tag: "GiveUp", failures }
    : { _tag: "Retry", failures, waitMillis: settings.retryWaitMillis * 2 ** (failures - 1) }
}
