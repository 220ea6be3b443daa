/**
 * The SDK entry for tools: submit, kill and query drivers, and read the master's state, given one or several
 * masters. Masters are tried in order; one that answers "not alive" (a standby) or cannot be reached is
 * skipped, so the active master answers wherever it is in the list.
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
   * Has the leading master pull an artifact from this node, which must serve it meanwhile
   * (`NodeArtifacts.serve`). The ask waits as long as the RpcEnv's default ask timeout, as the master answers
   * once it has the bytes.
   */
  readonly uploadArtifact: (
    artifact: { readonly name: string; readonly sha256: string; readonly size: number }
  ) => Effect.Effect<
    SubmissionMessages.UploadArtifactResponse,
    Errors.MasterNotAlive | Errors.ArtifactRejected | Errors.RpcError
  >
  /** The state of the first ALIVE master, or of the first master that answered when none is ALIVE. */
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
  error._tag === "ConnectionLost" ||
  error._tag === "AskTimeout" ||
  error._tag === "EndpointNotFound" ||
  error._tag === "AuthenticationFailed" ||
  error._tag === "ProtocolVersionMismatch"

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

    // Tries each master in turn; the last error is the answer when none gives another.
    const firstAnswer = <A, E extends { readonly _tag: string }>(
      attempt: (master: RpcAddress.RpcAddress) => Effect.Effect<A, E>
    ): Effect.Effect<A, E> =>
      addresses.slice(1).reduce(
        (previous, master) => previous.pipe(Effect.catchIf(isSkippable, () => attempt(master))),
        attempt(addresses[0]!)
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
        firstAnswer((master) => rpc.ask(ref(master), new SubmissionMessages.RequestUploadArtifact(artifact))),
      masterState: Effect.gen(function*() {
        let fallback: QueryMessages.MasterStateResponse | undefined
        let lastError: Errors.RpcError | undefined
        for (const master of addresses) {
          const answer = yield* Effect.either(rpc.ask(ref(master), new QueryMessages.RequestMasterState(), { timeout }))
          if (answer._tag === "Left") {
            lastError = answer.left
            continue
          }
          if (answer.right.status === "ALIVE") return answer.right
          fallback ??= answer.right
        }
        return fallback ?? (yield* Effect.fail(lastError!))
      })
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
