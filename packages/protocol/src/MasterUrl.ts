/**
 * Master URLs: `kindling://host:port`, or `kindling://h1:7077,h2:7077` for several masters (standby masters
 * behind a leader), tried in the order given.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { RpcAddress } from "./RpcAddress.js"

/**
 * @since 0.1.0
 * @category constants
 */
export const scheme = "kindling://"

/**
 * @since 0.1.0
 * @category constants
 */
export const defaultPort = 7077

/**
 * @since 0.1.0
 * @category errors
 */
export class InvalidMasterUrl extends Data.TaggedError("InvalidMasterUrl")<{
  readonly url: string
  readonly reason: string
}> {
  override get message(): string {
    return `Invalid master URL ${JSON.stringify(this.url)}: ${this.reason} (expected kindling://host:port[,host:port…])`
  }
}

const parseHostPort = (url: string, part: string): Either.Either<RpcAddress, InvalidMasterUrl> => {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+))(?::(\d+))?$/.exec(part)
  if (match === null) {
    return Either.left(new InvalidMasterUrl({ url, reason: `cannot read host and port in "${part}"` }))
  }
  const host = match[1] ?? match[2]!
  const port = match[3] === undefined ? defaultPort : Number(match[3])
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    return Either.left(new InvalidMasterUrl({ url, reason: `port ${match[3]} is not between 1 and 65535` }))
  }
  return Either.right(new RpcAddress({ host, port }))
}

/**
 * The masters of a URL, in order. A missing port means 7077.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parse = (url: string): Either.Either<ReadonlyArray<RpcAddress>, InvalidMasterUrl> => {
  if (!url.startsWith(scheme)) return Either.left(new InvalidMasterUrl({ url, reason: `it must start with ${scheme}` }))
  const rest = url.slice(scheme.length).replace(/\/+$/, "")
  if (rest.length === 0) return Either.left(new InvalidMasterUrl({ url, reason: "no master is given" }))
  return Either.all(rest.split(",").map((part) => parseHostPort(url, part.trim())))
}

/**
 * The URL of one or several masters.
 *
 * @since 0.1.0
 * @category formatting
 */
export const format = (masters: ReadonlyArray<RpcAddress>): string =>
  `${scheme}${masters.map((master) => master.hostPort).join(",")}`

/**
 * How a client talks to the masters of a URL: it asks every one at once, takes the first outcome `accept` takes
 * (the leader's answer) and interrupts the rest, so a master that is down or cut off costs nothing once another
 * has answered. When no outcome is taken, `settle` makes the answer from all of them, in the masters' order.
 *
 * @since 0.1.0
 * @category clients
 */
export const firstAccepted = <M, A, E, R>(
  masters: ReadonlyArray<M>,
  attempt: (master: M) => Effect.Effect<A, E, R>,
  accept: (outcome: Either.Either<A, E>) => boolean,
  settle: (outcomes: ReadonlyArray<Either.Either<A, E>>) => Effect.Effect<A, E>
): Effect.Effect<A, E, R> =>
  Effect.suspend(() => {
    const outcomes: Array<Either.Either<A, E>> = []
    const racers = masters.map((master, i) =>
      Effect.either(attempt(master)).pipe(Effect.flatMap((outcome) => {
        outcomes[i] = outcome
        return accept(outcome) ? Effect.succeed(outcome) : Effect.fail(outcome)
      }))
    )
    return Effect.raceAll(racers).pipe(Effect.matchEffect({
      onSuccess: (outcome): Effect.Effect<A, E> => outcome,
      onFailure: () => settle(outcomes)
    }))
  })
