/**
 * The SDK entry for a master's REST submission port: create, query and kill drivers over HTTP with Spark's REST
 * messages (`RestMessages`), given one or several masters, all asked at once (Spark's `RestSubmissionClient` tries
 * them in order, waiting on each): the first answer that settles the request wins. With the cluster secret, every
 * request carries a fresh bearer token (`RestAuth`). Requests go through web-standard `fetch` unless the client is
 * given another (the `kindling` command's trusts `kindling.ssl.trustStore`), so tools can use it wherever they run.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Schema from "effect/Schema"
import * as MasterUrl from "./MasterUrl.js"
import * as RestAuth from "./RestAuth.js"
import * as RestMessages from "./RestMessages.js"

/**
 * A request that got no answer of the expected kind: the master could not be reached, answered with an
 * `ErrorResponse` (its message is the reason), or answered something that is not a message of the protocol.
 *
 * @since 0.1.0
 * @category errors
 */
export class RestRequestFailed extends Data.TaggedError("RestRequestFailed")<{
  readonly url: string
  /** The HTTP status, when the master answered. */
  readonly status: number | undefined
  readonly reason: string
}> {
  override get message() {
    return `The REST request ${this.url} failed${this.status === undefined ? "" : ` (${this.status})`}: ${this.reason}`
  }
}

/**
 * An answer: its HTTP status and the message it carried.
 *
 * @since 0.1.0
 * @category models
 */
export interface Answer {
  readonly status: number
  readonly message: RestMessages.RestMessage
}

/**
 * @since 0.1.0
 * @category models
 */
export interface RestClient {
  /** The base URLs of the masters, `http://host:port`, in the URL's order (which settles ties between answers). */
  readonly masters: ReadonlyArray<string>
  /** One request to one master: `path` follows `/v1/submissions/`. */
  readonly send: (
    master: string,
    method: "GET" | "POST",
    path: string,
    body?: RestMessages.RestMessage
  ) => Effect.Effect<Answer, RestRequestFailed>
  /** Stops at the first master that accepts the driver. */
  readonly create: (
    request: RestMessages.CreateSubmissionRequest
  ) => Effect.Effect<RestMessages.CreateSubmissionResponse, RestRequestFailed>
  /** Stops at the first master that knows the driver. */
  readonly status: (submissionId: string) => Effect.Effect<RestMessages.SubmissionStatusResponse, RestRequestFailed>
  /** Skips masters that are not alive. */
  readonly kill: (submissionId: string) => Effect.Effect<RestMessages.KillSubmissionResponse, RestRequestFailed>
  /** Skips masters that are not alive. */
  readonly killAll: Effect.Effect<RestMessages.KillAllSubmissionResponse, RestRequestFailed>
  /** Stops at the first master that did it. */
  readonly clear: Effect.Effect<RestMessages.ClearResponse, RestRequestFailed>
  /** Stops at the first master that is ready; a master that is not answers with a 503. */
  readonly readyz: Effect.Effect<RestMessages.ReadyzResponse, RestRequestFailed>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The cluster secret: each request is sent with a token signed with it. */
  readonly secret?: string | undefined
  /** Per request; Spark's client waits 10 s. */
  readonly timeout?: Duration.DurationInput
  /**
   * What sends the requests: web-standard `fetch` unless given (the `kindling` command gives one that trusts
   * `kindling.ssl.trustStore`).
   */
  readonly fetch?: Fetch | undefined
}

/**
 * As much of `fetch` as the client uses.
 *
 * @since 0.1.0
 * @category models
 */
export type Fetch = (
  url: string,
  init: {
    readonly method: string
    readonly headers: Readonly<Record<string, string>>
    readonly signal: AbortSignal
    readonly body?: string
  }
) => Promise<{ readonly status: number; readonly text: () => Promise<string> }>

/**
 * The base URLs of a REST master URL: `http(s)://host:port`, or `kindling://host:port[,host:port…]` naming the
 * masters' REST ports.
 *
 * @since 0.1.0
 * @category parsing
 */
export const masters = (url: string): Either.Either<ReadonlyArray<string>, MasterUrl.InvalidMasterUrl> => {
  if (/^https?:\/\//i.test(url)) {
    try {
      const parsed = new URL(url)
      if (parsed.port !== "" && parsed.pathname.replace(/\/+$/, "") === "") return Either.right([parsed.origin])
    } catch {
      // reported below
    }
    return Either.left(new MasterUrl.InvalidMasterUrl({ url, reason: "a REST URL is http://host:port" }))
  }
  return Either.map(MasterUrl.parse(url), (addresses) => addresses.map((address) => `http://${address.hostPort}`))
}

// fetch says "fetch failed" and puts the reason (ECONNREFUSED, a timeout) in its cause.
const reasonOf = (error: unknown): string => {
  if (!(error instanceof Error)) return String(error)
  return error.cause instanceof Error ? `${error.message}: ${error.cause.message}` : error.message
}

const notAlive = (message: string | undefined) => message?.startsWith("Current state is not alive") === true

/**
 * A client for the given masters.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  url: string | ReadonlyArray<string>,
  options: Options = {}
): Effect.Effect<RestClient, MasterUrl.InvalidMasterUrl> =>
  Effect.gen(function*() {
    const bases = typeof url === "string" ? yield* masters(url) : url
    const timeout = Duration.toMillis(Duration.decode(options.timeout ?? "10 seconds"))
    const request: Fetch = options.fetch ?? fetch

    const send: RestClient["send"] = (master, method, path, body) =>
      Effect.gen(function*() {
        const target = `${master}/${RestMessages.protocolVersion}/submissions/${path}`
        const failed = (reason: string, status?: number) => new RestRequestFailed({ url: target, status, reason })
        const headers: Record<string, string> = {}
        if (body !== undefined) headers["content-type"] = "application/json;charset=utf-8"
        if (options.secret !== undefined) {
          headers["authorization"] = RestAuth.header(yield* RestAuth.sign(options.secret))
        }
        const response = yield* Effect.tryPromise({
          try: (signal) =>
            request(target, {
              method,
              headers,
              signal: AbortSignal.any([signal, AbortSignal.timeout(timeout)]),
              ...(body === undefined ? {} : { body: RestMessages.toJson(body) })
            }).then(async (answer) => ({ status: answer.status, text: await answer.text() })),
          catch: (error) => failed(reasonOf(error))
        })
        const parsed = RestMessages.parse(response.text)
        if (Either.isLeft(parsed)) {
          return yield* failed(`the answer is not a REST message: ${parsed.left.reason}`, response.status)
        }
        return { status: response.status, message: parsed.right.message }
      })

    // Every master at once; the first answer `accept`s wins. Else the first master's answer (in the URL's order),
    // or the first failure.
    const firstAnswer = <A extends RestMessages.RestResponse>(
      expected: Schema.Schema<A, any> & { readonly identifier: string },
      method: "GET" | "POST",
      path: string,
      accept: (answer: A) => boolean,
      body?: RestMessages.RestMessage
    ): Effect.Effect<A, RestRequestFailed> =>
      MasterUrl.firstAccepted(
        bases,
        (master) =>
          Effect.flatMap(send(master, method, path, body), ({ message, status }) => {
            if (message.action === expected.identifier) return Effect.succeed(message as A)
            const reason = message.action === "ErrorResponse" ? message.message : `unexpected ${message.action}`
            const target = `${master}/${RestMessages.protocolVersion}/submissions/${path}`
            return Effect.fail(new RestRequestFailed({ url: target, status, reason }))
          }),
        (outcome) => Either.isRight(outcome) && accept(outcome.right),
        (outcomes) => outcomes.find(Either.isRight) ?? outcomes[0]!
      )

    const id = (submissionId: string) => encodeURIComponent(submissionId)
    return {
      masters: bases,
      send,
      create: (request) =>
        firstAnswer(RestMessages.CreateSubmissionResponse, "POST", "create", (answer) => answer.success, request),
      status: (submissionId) =>
        firstAnswer(RestMessages.SubmissionStatusResponse, "GET", `status/${id(submissionId)}`, (a) => a.success),
      kill: (submissionId) =>
        firstAnswer(
          RestMessages.KillSubmissionResponse,
          "POST",
          `kill/${id(submissionId)}`,
          (a) => !notAlive(a.message)
        ),
      killAll: firstAnswer(RestMessages.KillAllSubmissionResponse, "POST", "killall", (a) => !notAlive(a.message)),
      clear: firstAnswer(RestMessages.ClearResponse, "POST", "clear", (answer) => answer.success),
      readyz: firstAnswer(RestMessages.ReadyzResponse, "GET", "readyz", (answer) => answer.success)
    }
  })
