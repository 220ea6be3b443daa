/**
 * A conformance kit for the wire protocol: scripted conversations played against a running master or worker
 * over real connections, each a check that passes or fails with the reason. They cover the handshake (with and
 * without a shared secret), every ask the role's endpoint accepts with a valid and an invalid body, framing
 * (split frames, frames over the limit, garbage, 64-bit integers) and peers that drop their connection half-way.
 * Built on the documented protocol, it is meant for third-party nodes as much as for Kindling's own; `kindling
 * conformance` runs it from the command line.
 *
 * Play it against a node set aside for it: the master's checks submit a driver that can never be placed and kill
 * it, kill every driver and forget completed drivers and apps. The master must be ALIVE.
 *
 * This module holds the kit's options, the list of checks and their running; each group of checks (handshake,
 * asks of each role, envelopes, framing, 64-bit integers, disconnects) is an internal module of its own.
 *
 * @since 0.1.0
 */
import { EndpointNames, Envelope, QueryMessages } from "@kindling/protocol"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Scope from "effect/Scope"
import { askChecks, masterOnly, masterScripts, workerScripts } from "./internal/conformanceAsks.js"
import type { Target } from "./internal/conformanceConversation.js"
import { disconnectChecks } from "./internal/conformanceDisconnect.js"
import { envelopeChecks } from "./internal/conformanceEnvelopes.js"
import { framingChecks } from "./internal/conformanceFraming.js"
import { handshakeChecks } from "./internal/conformanceHandshake.js"
import { integerChecks } from "./internal/conformanceIntegers.js"
import { CheckFailed } from "./internal/conformanceSession.js"
import * as Handshake from "./internal/handshake.js"
import type { Transport } from "./Transport.js"

/**
 * @since 0.1.0
 * @category models
 */
export type Role = "master" | "worker"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly host: string
  readonly port: number
  readonly role: Role
  /** The cluster's shared secret. Without one, the node is expected to accept connections that prove nothing. */
  readonly secret?: string | undefined
  /** How long to wait for each answer (default 5 s). */
  readonly timeout?: Duration.DurationInput | undefined
  /** The node's frame limit, in bytes (default 128 MiB). */
  readonly maxFrameSize?: number | undefined
}

/**
 * One check's outcome; `detail` says what went wrong.
 *
 * @since 0.1.0
 * @category models
 */
export interface Result {
  readonly name: string
  readonly passed: boolean
  readonly detail: string
}

/**
 * A named conversation with the node.
 *
 * @since 0.1.0
 * @category models
 */
export interface Check {
  readonly name: string
  /** @internal */
  readonly run: (target: Target) => Effect.Effect<void, CheckFailed, Transport | Scope.Scope>
}

/**
 * The checks for a node of `role`; which handshake checks depends on whether a secret is given. The first one
 * is the plain handshake: when it fails, the others are not run.
 *
 * @since 0.1.0
 * @category constructors
 */
export const checks = (options: Pick<Options, "role" | "secret">): ReadonlyArray<Check> => [
  ...handshakeChecks(options.secret !== undefined),
  ...envelopeChecks,
  ...framingChecks,
  ...integerChecks(options.role),
  ...askChecks(options.role === "master" ? masterScripts : workerScripts),
  ...(options.role === "master" ? masterOnly : []),
  ...disconnectChecks
]

/**
 * Runs every check against the node, one after the other, and answers their results; `report` sees each result
 * as it comes.
 *
 * @since 0.1.0
 * @category running
 */
export const run = (
  options: Options,
  report: (result: Result) => Effect.Effect<void> = () => Effect.void
): Effect.Effect<ReadonlyArray<Result>, never, Transport> =>
  Effect.gen(function*() {
    const secret = options.secret
    let id = 0
    const target: Target = {
      host: options.host,
      port: options.port,
      key: secret === undefined ? undefined : yield* Effect.promise(() => Handshake.importSecret(secret)),
      timeout: Duration.decode(options.timeout ?? "5 seconds"),
      maxFrameSize: options.maxFrameSize ?? Envelope.defaultMaxFrameSize,
      endpoint: options.role === "master" ? EndpointNames.master : EndpointNames.worker,
      probe: options.role === "master"
        ? new QueryMessages.RequestMasterState()
        : new QueryMessages.RequestWorkerState(),
      nextId: () => ++id
    }
    const all = checks(options)
    const results: Array<Result> = []
    let blocked: string | undefined
    for (const [index, { name, run }] of all.entries()) {
      const outcome = blocked !== undefined
        ? Either.left(new CheckFailed({ message: `not run: ${blocked}` }))
        : yield* run(target).pipe(
          Effect.scoped,
          // Each step waits at most the timeout; a conversation has a few of them.
          Effect.timeoutFail({
            duration: Duration.times(target.timeout, 4),
            onTimeout: () => new CheckFailed({ message: "the conversation did not end in time" })
          }),
          Effect.either
        )
      const result: Result = Either.isRight(outcome)
        ? { name, passed: true, detail: "" }
        : { name, passed: false, detail: outcome.left.message }
      if (index === 0 && !result.passed) blocked = "the node did not complete the handshake"
      results.push(result)
      yield* report(result)
    }
    return results
  })

/**
 * A result as one line: `pass  <check>` or `FAIL  <check>: <why>`.
 *
 * @since 0.1.0
 * @category formatting
 */
export const format = (result: Result): string =>
  result.passed ? `pass  ${result.name}` : `FAIL  ${result.name}: ${result.detail}`
