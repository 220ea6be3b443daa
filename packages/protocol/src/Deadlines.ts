/**
 * How long a test waits before it calls something that has not happened a failure. Tests of sockets and processes
 * run in real time, and a machine busy with other work runs them slower: every deadline of the suite is a figure for
 * an idle machine multiplied by one factor, `TEST_SLOWDOWN` (the suite's configuration measures it from the
 * machine's load when it is not set; not a `KINDLING_*` name, which the processes under test would refuse). A
 * deadline only bounds how long a failing test takes to fail; a test that passes takes as long as its work,
 * whatever the factor.
 *
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"

const fromEnvironment = (): number => {
  const text = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env
    ?.TEST_SLOWDOWN
  const factor = Number(text)
  return text !== undefined && Number.isFinite(factor) && factor >= 1 ? factor : 1
}

/**
 * The factor every deadline is multiplied by: `TEST_SLOWDOWN`, at least 1.
 *
 * @since 0.1.0
 * @category constants
 */
export const slowdown: number = fromEnvironment()

/**
 * A deadline of `millis` on an idle machine, on this one.
 *
 * @since 0.1.0
 * @category constructors
 */
export const scaled = (millis: number): number => Math.round(millis * slowdown)

/**
 * `scaled` for a duration.
 *
 * @since 0.1.0
 * @category constructors
 */
export const scaledDuration = (duration: Duration.DurationInput): Duration.Duration =>
  Duration.millis(scaled(Duration.toMillis(duration)))
