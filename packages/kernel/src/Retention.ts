/**
 * Bounded histories, as Spark keeps its finished drivers, apps and executors for the UIs: when a list grows
 * past its bound, the oldest tenth of the bound goes at once (at least one), so trimming is rare and cheap.
 *
 * @since 0.1.0
 */

/**
 * Appends `item` to `history` (oldest first) and trims it to at most `max` entries.
 *
 * @since 0.1.0
 * @category combinators
 */
export const append = <A>(history: Array<A>, item: A, max: number): void => {
  history.push(item)
  if (history.length > max) history.splice(0, Math.min(history.length, Math.max(Math.floor(max / 10), 1)))
}
