/**
 * The leadership lease of recovery mode ZOOKEEPER as a pure state machine: one round of the election, from the
 * moment this master's latch node exists until the round ends, and what the master may believe about its own
 * leadership at each instant.
 *
 * A ZooKeeper session expires at the earliest the session timeout after the server last heard from it, so a
 * request sent at `t` and answered proves the session alive until `t` plus the timeout. The lease runs to two
 * thirds of that past the latest such proof (the latch node created, a check of it answered), and a check is sent
 * every third of the timeout, so that a healthy leader renews its lease twice before it could lapse. A check that
 * finds the node gone, a check unanswered when the lease ends, or any failure of the session ends the round; a
 * leader steps down at that moment. `mayLead` reads the lease against the clock, so it turns false when the lease
 * ends even if the process was paused and has not stepped since.
 *
 * The shell (`ZooKeeperRecovery`) feeds it what ZooKeeper answered and when, and does what it says; the model test
 * drives it with random answers, delays, failures and pauses and checks its invariants after every step.
 *
 * @since 0.1.0
 */
import { ZooKeeperError } from "./ZooKeeper.js"

/**
 * The share of the session timeout the lease runs past the latest proof that the session was alive.
 *
 * @since 0.1.0
 * @category constants
 */
export const leaseShare = 2 / 3

/**
 * The share of the session timeout between two checks of the latch node.
 *
 * @since 0.1.0
 * @category constants
 */
export const checkShare = 1 / 3

/**
 * @since 0.1.0
 * @category models
 */
export interface State {
  /** This master's node in the election. */
  readonly latch: string
  /** The session timeout the server granted. */
  readonly timeoutMillis: number
  /** When the latest request that proved the session alive was sent; the lease runs from there (`leaseEnd`). */
  readonly provenAt: number
  readonly leading: boolean
  /** Why the round ended, once it has: nothing that arrives after changes it. */
  readonly ended: ZooKeeperError | undefined
}

/**
 * What the shell tells the lease.
 *
 * @since 0.1.0
 * @category models
 */
export type Input =
  /** This master's node is the first in line. */
  | { readonly _tag: "FirstInLine" }
  /** A check of the latch node sent at `sentAt` was answered: the node is there or not. */
  | { readonly _tag: "CheckAnswered"; readonly sentAt: number; readonly present: boolean }
  /** A check was not answered by the end of the lease it was sent under. */
  | { readonly _tag: "CheckUnanswered" }
  /** The session or one of its requests failed (the connection dropped, the node could not be found, …). */
  | { readonly _tag: "Failed"; readonly error: ZooKeeperError }

/**
 * What the lease tells the shell to do, in order.
 *
 * @since 0.1.0
 * @category models
 */
export type Command =
  | { readonly _tag: "Elected" }
  | { readonly _tag: "Revoked" }
  /** The round is over: the shell closes its session and joins the election again as a new candidate. */
  | { readonly _tag: "EndRound"; readonly error: ZooKeeperError }

/**
 * A round that has just created its latch node with a request sent at `sentAt`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const start = (options: {
  readonly latch: string
  readonly timeoutMillis: number
  readonly sentAt: number
}): State => ({
  latch: options.latch,
  timeoutMillis: options.timeoutMillis,
  provenAt: options.sentAt,
  leading: false,
  ended: undefined
})

/**
 * The instant after which the master no longer leads, whatever else it has heard.
 *
 * @since 0.1.0
 * @category accessors
 */
export const leaseEnd = (state: State): number => state.provenAt + state.timeoutMillis * leaseShare

/**
 * Whether the master may act as leader at `now`.
 *
 * @since 0.1.0
 * @category accessors
 */
export const mayLead = (state: State, now: number): boolean =>
  state.leading && state.ended === undefined && now < leaseEnd(state)

/**
 * How long after `sentAt` a check must be answered: until the lease it was sent under ends.
 *
 * @since 0.1.0
 * @category accessors
 */
export const checkTimeoutMillis = (state: State, sentAt: number): number => Math.max(0, leaseEnd(state) - sentAt)

/**
 * The time between two checks.
 *
 * @since 0.1.0
 * @category accessors
 */
export const checkEveryMillis = (state: State): number => state.timeoutMillis * checkShare

const end = (state: State, error: ZooKeeperError): readonly [State, ReadonlyArray<Command>] => [
  { ...state, leading: false, ended: error },
  state.leading ? [{ _tag: "Revoked" }, { _tag: "EndRound", error }] : [{ _tag: "EndRound", error }]
]

const checkFailed = (state: State, reason: string) =>
  end(state, new ZooKeeperError({ operation: "check", path: state.latch, reason }))

/**
 * @since 0.1.0
 * @category transitions
 */
export const step = (state: State, input: Input): readonly [State, ReadonlyArray<Command>] => {
  // Answers and failures still on their way when the round ended belong to it: they change nothing.
  if (state.ended !== undefined) return [state, []]
  switch (input._tag) {
    case "FirstInLine":
      return state.leading ? [state, []] : [{ ...state, leading: true }, [{ _tag: "Elected" }]]
    case "CheckAnswered": {
      if (!input.present) return checkFailed(state, "the node is gone")
      // An answer to an older check than the latest proof proves less: the lease never shrinks.
      if (input.sentAt <= state.provenAt) return [state, []]
      return [{ ...state, provenAt: input.sentAt }, []]
    }
    case "CheckUnanswered":
      return checkFailed(state, "the leadership lease lapsed")
    case "Failed":
      return end(state, input.error)
  }
}

/**
 * The invariants: the lease ends before ZooKeeper could expire the session it was proved on, and a round that
 * ended leads no more. Returns the broken ones.
 *
 * @since 0.1.0
 * @category invariants
 */
export const validate = (state: State): ReadonlyArray<string> => {
  const problems: Array<string> = []
  if (!(state.timeoutMillis > 0)) problems.push(`the session timeout ${state.timeoutMillis} is not positive`)
  if (leaseEnd(state) >= state.provenAt + state.timeoutMillis) {
    problems.push("the lease outlasts the session it was proved on")
  }
  if (state.ended !== undefined && state.leading) problems.push("the round ended but the master still leads")
  return problems
}
