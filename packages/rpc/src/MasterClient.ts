/**
 * The SDK entry for tools: submit, kill and query drivers, and read the master's state, given one or several
 * masters. Every master is asked at once and the leader's answer taken; one that answers "not alive" (a standby)
 * or cannot be reached is skipped, so the active master answers wherever it is in the list, and a master that is
 * down costs no more than the others' answers.
 *
 * @since 0.1.0
 */
import {
  type Descriptions,
  Endpoints,
  type Errors,
  type Ids,
  MasterUrl,
  QueryMessages,
  type RpcAddress,
  SubmissionMessages
} from "@kindling/protocol"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import { RpcEnv } from "./RpcEnv.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface MasterClient {
  readonly masters: ReadonlyArray<RpcAddress.RpcAddress>
  readonly submitDriver: (
    description: Descriptions.DriverDescription
  ) => Effect.Effect<
    SubmissionMessages.SubmitDriverResponse,
    Errors.MasterNotAlive | Errors.DriverLaunchFailed | Errors.RpcError
  >
  readonly killDriver: (
    driverId: Ids.DriverId
  ) => Effect.Effect<
    SubmissionMessages.KillDriverResponse,
    Errors.MasterNotAlive | Errors.DriverNotFound | Errors.RpcError
  >
  readonly driverStatus: (
    driverId: Ids.DriverId
  ) => Effect.Effect<
    SubmissionMessages.DriverStatusResponse,
    Errors.MasterNotAlive | Errors.DriverNotFound | Errors.RpcError
  >
  /**
   * Has every master pull an artifact from this node, which must serve it meanwhile (`NodeArtifacts.serve`): the
   * leader, and the standbys, which keep it for when they lead, so that a driver that names it can be launched again
   * after a failover. Answers the first master's answer (in the URL's order) that took it. The asks wait as long as
   * the RpcEnv's default ask timeout, as a master answers once it has the bytes.
   */
  readonly uploadArtifact: (
    artifact: { readonly name: string; readonly sha256: string; readonly size: number }
  ) => Effect.Effect<
    SubmissionMessages.UploadArtifactResponse,
    Errors.MasterNotAlive | Errors.ArtifactRejected | Errors.RpcError
  >
  /** The state of the ALIVE master, or of the first master of the list that answered when none is ALIVE. */
  readonly masterState: Effect.Effect<QueryMessages.MasterStateResponse, Errors.RpcError>
}

/**
 * @since 0.1.0
 * @category tags
 */
export const MasterClient: Context.Tag<MasterClient, MasterClient> = Context.GenericTag<MasterClient>(
  "@kindling/protocol/MasterClient"
)

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Per master; Spark's submission client uses 10 s. */
  readonly timeout?: Duration.DurationInput
}

// Errors after which the next master is worth trying: this one is standby, unreachable or unresponsive.
const isSkippable = (error: { readonly _tag: string }): boolean =>
  error._tag === "MasterNotAlive" ||
  error._tag === "ConnectFailed" ||
  error._tag === "ConnectionLost" ||
  error._tag === "AskTimeout" ||
  error._tag === "EndpointNotFound" ||
  error._tag === "AuthenticationFailed" ||
  error._tag === "ProtocolVersionMismatch"

// A master that is about to lead says more than a standby, and a standby more than silence; among equals the
// earlier master of the URL.
const mostTelling = <E extends { readonly _tag: string }>(outcomes: ReadonlyArray<Either.Either<unknown, E>>): E => {
  const rank = (error: E) =>
    error._tag !== "MasterNotAlive" ? 2 : (error as unknown as Errors.MasterNotAlive).state === "STANDBY" ? 1 : 0
  return outcomes.flatMap((outcome) => Either.isLeft(outcome) ? [outcome.left] : [])
    .reduce((best, error) => rank(error) < rank(best) ? error : best)
}

/**
 * A client for the given masters, on the RpcEnv in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  masters: string | ReadonlyArray<RpcAddress.RpcAddress>,
  options: Options = {}
): Effect.Effect<MasterClient, MasterUrl.InvalidMasterUrl, RpcEnv> =>
  Effect.gen(function*() {
    const rpc = yield* RpcEnv
    const addresses = typeof masters === "string" ? yield* MasterUrl.parse(masters) : masters
    const timeout = options.timeout ?? "10 seconds"

    // A real answer is final even when it is an error (DriverNotFound, say); when every master is skipped, the
    // most telling refusal is the answer.
    const firstAnswer = <A, E extends { readonly _tag: string }>(
      attempt: (master: RpcAddress.RpcAddress) => Effect.Effect<A, E>
    ): Effect.Effect<A, E> =>
      MasterUrl.firstAccepted(
        addresses,
        attempt,
        (outcome) => Either.isRight(outcome) || !isSkippable(outcome.left),
        (outcomes) => Effect.fail(mostTelling(outcomes))
      )

    const ref = (master: RpcAddress.RpcAddress) => Endpoints.ref(master, Endpoints.master)

    return MasterClient.of({
      masters: addresses,
      submitDriver: (driverDescription) =>
        firstAnswer((master) =>
          rpc.ask(ref(master), new SubmissionMessages.RequestSubmitDriver({ driverDescription }), { timeout })
        ),
      killDriver: (driverId) =>
        firstAnswer((master) =>
          rpc.ask(ref(master), new SubmissionMessages.RequestKillDriver({ driverId }), { timeout })
        ),
      driverStatus: (driverId) =>
        firstAnswer((master) =>
          rpc.ask(ref(master), new SubmissionMessages.RequestDriverStatus({ driverId }), { timeout })
        ),
      uploadArtifact: (artifact) =>
        Effect.forEach(
          addresses,
          (master) => Effect.either(rpc.ask(ref(master), new SubmissionMessages.RequestUploadArtifact(artifact))),
          { concurrency: "unbounded" }
        ).pipe(Effect.flatMap((outcomes) =>
          outcomes.find(Either.isRight) ??
            // A master's refusal of the artifact itself (too large, say) says more than any master's absence.
            outcomes.find((outcome) => Either.isLeft(outcome) && !isSkippable(outcome.left)) ??
            Effect.fail(mostTelling(outcomes))
        )),
      masterState: MasterUrl.firstAccepted(
        addresses,
        (master) => rpc.ask(ref(master), new QueryMessages.RequestMasterState(), { timeout }),
        (outcome) => Either.isRight(outcome) && outcome.right.status === "ALIVE",
        (outcomes) => {
          const answered = outcomes.find(Either.isRight)
          return answered === undefined
            ? Effect.fail(mostTelling(outcomes))
            : Effect.succeed(answered.right)
        }
      )
    })
  })

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  masters: string | ReadonlyArray<RpcAddress.RpcAddress>,
  options?: Options
): Layer.Layer<MasterClient, MasterUrl.InvalidMasterUrl, RpcEnv> => Layer.effect(MasterClient, make(masters, options))
