/**
 * Waiting for something that happens on its own: a process starts, a message arrives, a state settles. Tests
 * of sockets and processes run in real time, so this waits in real time even under a TestClock, and always
 * within a bound: a condition that never holds fails the test with the last value seen rather than hanging.
 *
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Deadlines from "./Deadlines.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options<A> {
  /** How long to keep trying on an idle machine (default 10 s), scaled by `Deadlines.slowdown`. */
  readonly timeout?: Duration.DurationInput
  /** How long to wait between tries (default 20 ms). */
  readonly interval?: Duration.DurationInput
  /** What to say about the last value when the condition was not reached. */
  readonly describe?: (last: A | undefined) => string
}

const realSleep = (millis: number) => Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, millis)))

/**
 * Runs `check` until `until` holds for its value, and gives that value; dies with a description of the last
 * value once the timeout has passed.
 *
 * @since 0.1.0
 * @category combinators
 */
export const eventually = <A, E, R>(
  check: Effect.Effect<A, E, R>,
  until: (value: A) => boolean,
  options: Options<A> = {}
): Effect.Effect<A, E, R> =>
  Effect.gen(function*() {
    const deadline = Date.now() + Deadlines.scaled(Duration.toMillis(options.timeout ?? "10 seconds"))
    const interval = Duration.toMillis(options.interval ?? "20 millis")
    let last: A | undefined
    for (;;) {
      last = yield* check
      if (until(last)) return last
      if (Date.now() >= deadline) break
      yield* realSleep(interval)
    }
    const described = options.describe?.(last) ?? `last value: ${String(JSON.stringify(last)).slice(0, 500)}`
    return yield* Effect.dieMessage(
      `condition not reached within ${options.timeout ?? "10 seconds"} (×${Deadlines.slowdown}); ${described}`
    )
  })
