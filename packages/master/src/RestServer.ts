/**
 * The master's REST submission server (Spark's `StandaloneRestServer`, on `kindling.master.rest.port`, 6066):
 * Spark's REST protocol (`RestMessages`) on an HTTP port of its own, with Spark's paths, status codes and error
 * texts — `POST /v1/submissions/create`, `GET …/status/<id>`, `POST …/kill/<id>`, `POST …/killall`,
 * `POST …/clear` and `GET …/readyz`. Each request becomes one of the master's own asks on its RpcEnv
 * (`RequestSubmitDriver`, `RequestDriverStatus`, …), so a REST client gets what an RPC client gets.
 *
 * Safer than Spark's (CVE-2018-11770): with a cluster secret, every request must carry a bearer token signed with
 * it (`RestAuth`), checked before the request is read; without a secret the server does not start on an address
 * other than loopback unless unauthenticated access is asked for; and app locations can be restricted to
 * patterns. What a create request runs is decided by the `Submissions` given to `serve`; a request it cannot run
 * is refused with `success: false`, never accepted to fail later. A request that breaks anything is answered
 * with a 500; the master goes on.
 *
 * @since 0.1.0
 */
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { WebServer } from "@kindling/kernel/web"
import {
  type Descriptions,
  Endpoints,
  Ids,
  RestAuth,
  RestMessages,
  type RpcAddress,
  SubmissionMessages
} from "@kindling/protocol"
import { RpcEnv } from "@kindling/rpc"
import { NodeExposure } from "@kindling/rpc/node"
import * as Cause from "effect/Cause"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly host: string
  /** 0 picks a free port; a taken one, the next free one. */
  readonly port: number
  readonly maxRetries: number
  /** The cluster secret: with one, every request must carry a token signed with it. */
  readonly secret: string | undefined
  /** Start without a secret on an address other than loopback (`kindling.authenticate=false` set explicitly). */
  readonly allowUnauthenticated: boolean
  /** When not empty, an app resource must match one of these. */
  readonly allowedAppResourcePatterns: ReadonlyArray<RegExp>
  /** The largest request body, in bytes. */
  readonly maxRequestBodySize: number
  /** What answers carry as `serverSparkVersion`. */
  readonly serverVersion: string
  /** Serve HTTPS with this certificate (`kindling.ssl.*`). */
  readonly tls?: WebServer.Tls | undefined
}

/**
 * The driver a create request runs, and what the answer's message should add (what was ignored).
 *
 * @since 0.1.0
 * @category models
 */
export interface Submission {
  readonly description: Descriptions.DriverDescription
  readonly notes: ReadonlyArray<string>
}

/**
 * A create request that cannot run; the reason is the answer's message.
 *
 * @since 0.1.0
 * @category errors
 */
export class SubmissionRefused extends Data.TaggedError("SubmissionRefused")<{ readonly reason: string }> {
  override get message() {
    return this.reason
  }
}

/**
 * What the server runs for a create request.
 *
 * @since 0.1.0
 * @category models
 */
export interface Submissions {
  readonly describe: (request: RestMessages.CreateSubmissionRequest) => Effect.Effect<Submission, SubmissionRefused>
}

/**
 * A bound REST port.
 *
 * @since 0.1.0
 * @category models
 */
export interface RestServer {
  readonly port: number
  /** `http://host:port`. */
  readonly url: string
  /** Answers requests for the master at `master` (on the RpcEnv in context) until the scope closes. */
  readonly serve: (
    master: { readonly address: RpcAddress.RpcAddress },
    submissions: Submissions
  ) => Effect.Effect<void, never, RpcEnv.RpcEnv | Scope.Scope>
}

const actions = ["create", "kill", "killall", "status", "clear", "readyz"] as const
type Action = (typeof actions)[number]
const methods: Record<Action, string> = {
  create: "POST",
  kill: "POST",
  killall: "POST",
  status: "GET",
  clear: "POST",
  readyz: "GET"
}

const base = `/${RestMessages.protocolVersion}/submissions`

interface Reply {
  readonly status: number
  readonly body: RestMessages.RestResponse
  readonly headers?: Record<string, string>
}

const decode = (segment: string) => {
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}

/**
 * Checks that the server may start, and binds its port (or the next free one).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: Options
): Effect.Effect<RestServer, NodeExposure.Unprotected | WebServer.WebPortUnavailable, Scope.Scope> =>
  Effect.gen(function*() {
    yield* NodeExposure.check({
      service: "The REST server",
      host: options.host,
      hostSetting: "kindling.master.rest.host",
      secret: options.secret,
      secretSetting: "kindling.authenticate.secret (clients then sign a token with it)",
      optedOut: options.allowUnauthenticated
    })
    if (options.secret !== undefined && RestAuth.key(options.secret).length < 32) {
      yield* Effect.logWarning(
        `kindling.authenticate.secret has ${RestAuth.key(options.secret).length} bytes; an HS256 key should have at ` +
          "least 32 (RFC 7518), or the secret can be guessed from a token the REST server accepted"
      )
    }
    const web = yield* WebServer.bind({
      name: "REST server",
      host: options.host,
      port: options.port,
      maxRetries: options.maxRetries,
      tls: options.tls
    })
    return {
      port: web.port,
      url: web.url,
      serve: (master, submissions) =>
        Effect.gen(function*() {
          const rpc = yield* RpcEnv.RpcEnv
          const handle = handler(options, submissions, rpc, Endpoints.ref(master.address, Endpoints.master))
          yield* web.serveApp(Effect.gen(function*() {
            const request = yield* HttpServerRequest.HttpServerRequest
            const reply = yield* handle(request).pipe(
              Effect.catchAllCause((cause) =>
                Effect.logError("The REST server failed to answer a request", cause).pipe(
                  Effect.as(
                    errorReply(options, 500, `Internal server error: ${Cause.squash(cause)}`)
                  )
                )
              )
            )
            return HttpServerResponse.text(RestMessages.toJson(reply.body), {
              status: reply.status,
              contentType: "application/json;charset=utf-8",
              ...(reply.headers === undefined ? {} : { headers: reply.headers })
            })
          }))
        })
    }
  })

const errorReply = (
  options: Options,
  status: number,
  message: string,
  extra: { readonly highestProtocolVersion?: string } = {}
): Reply => ({
  status,
  body: RestMessages.ErrorResponse.make({ message, serverSparkVersion: options.serverVersion, ...extra })
})

// The paths no action serves, answered as Spark's error servlet answers them.
const pathError = (options: Options, path: string): Reply => {
  const parts = path.split("/").filter((part) => part !== "").map(decode)
  const version = RestMessages.protocolVersion
  const known = parts[0] === version
  const reason = parts.length === 0
    ? "Missing protocol version."
    : known && parts.length === 1
    ? "Missing the /submissions prefix."
    : known && parts[1] === "submissions"
    ? "Missing an action: please specify one of /create, /kill, /killall, /clear, /status, or /readyz."
    : `Unknown protocol version '${parts[0]}'.`
  const message = `${reason} Please submit requests through http://[host]:[port]/${version}/submissions/...`
  return reason.startsWith("Unknown protocol version")
    ? errorReply(options, RestMessages.unknownProtocolVersionStatus, message, { highestProtocolVersion: version })
    : errorReply(options, 400, message)
}

const handler = (
  options: Options,
  submissions: Submissions,
  rpc: RpcEnv.RpcEnv,
  master: RpcAddress.Ref<Endpoints.Inbound["Master"]>
) =>
(request: HttpServerRequest.HttpServerRequest): Effect.Effect<Reply> =>
  Effect.gen(function*() {
    const serverSparkVersion = options.serverVersion
    if (options.secret !== undefined) {
      const authorized = yield* Effect.either(RestAuth.verify(options.secret, request.headers["authorization"]))
      if (Either.isLeft(authorized)) {
        yield* Effect.logInfo(
          `REST request ${request.method} ${request.url} from ${Option.getOrElse(request.remoteAddress, () => "?")} ` +
            `refused: ${authorized.left.reason}`
        )
        return { ...errorReply(options, 401, authorized.left.message), headers: { "www-authenticate": "Bearer" } }
      }
    }
    const path = request.url.replace(/[?#].*$/s, "")
    const action = actions.find((name) => path === `${base}/${name}` || path.startsWith(`${base}/${name}/`))
    if (action === undefined) return pathError(options, path)
    if (request.method !== methods[action]) {
      return errorReply(options, 405, `HTTP method ${request.method} is not supported by this URL`)
    }
    const submissionId = decode(path.slice(`${base}/${action}/`.length).split("/")[0] ?? "")
    const missingId = () => errorReply(options, 400, `Submission ID is missing in ${action} request.`)
    switch (action) {
      case "create":
        return yield* create(options, submissions, rpc, master, request)
      case "kill": {
        if (submissionId === "") return missingId()
        const answer = yield* rpc.ask(
          master,
          new SubmissionMessages.RequestKillDriver({ driverId: Ids.DriverId.make(submissionId) })
        ).pipe(
          Effect.map((response) => ({ message: response.message, success: response.success })),
          Effect.catchTags({
            DriverNotFound: (error) => Effect.succeed({ message: error.message, success: false }),
            MasterNotAlive: (error) => Effect.succeed({ message: error.message, success: false })
          })
        )
        return {
          status: 200,
          body: RestMessages.KillSubmissionResponse.make({ ...answer, serverSparkVersion, submissionId })
        }
      }
      case "status": {
        if (submissionId === "") return missingId()
        const answer = yield* rpc.ask(
          master,
          new SubmissionMessages.RequestDriverStatus({ driverId: Ids.DriverId.make(submissionId) })
        ).pipe(
          Effect.map((response) => ({
            success: response.found,
            ...Option.match(response.state, { onNone: () => ({}), onSome: (driverState) => ({ driverState }) }),
            ...Option.match(response.workerId, { onNone: () => ({}), onSome: (workerId) => ({ workerId }) }),
            ...Option.match(response.workerHostPort, {
              onNone: () => ({}),
              onSome: (workerHostPort) => ({ workerHostPort })
            }),
            ...Option.match(response.exception, {
              onNone: () => ({}),
              onSome: (exception) => ({
                message: `Exception from the cluster:\n${exception.name}: ${exception.message}`
              })
            })
          })),
          Effect.catchTags({
            DriverNotFound: () => Effect.succeed({ success: false }),
            MasterNotAlive: (error) =>
              Effect.succeed({
                success: false,
                message: `Exception from the cluster:\n${error._tag}: ${error.message}`
              })
          })
        )
        return {
          status: 200,
          body: RestMessages.SubmissionStatusResponse.make({ ...answer, serverSparkVersion, submissionId })
        }
      }
      case "killall": {
        const answer = yield* rpc.ask(master, new SubmissionMessages.RequestKillAllDrivers()).pipe(
          Effect.map((response) => ({ message: response.message, success: response.success })),
          Effect.catchTag("MasterNotAlive", (error) => Effect.succeed({ message: error.message, success: false }))
        )
        return { status: 200, body: RestMessages.KillAllSubmissionResponse.make({ ...answer, serverSparkVersion }) }
      }
      case "clear": {
        const answer = yield* rpc.ask(master, new SubmissionMessages.RequestClearCompletedDriversAndApps()).pipe(
          Effect.map((success) => ({ message: "", success })),
          Effect.catchTag("MasterNotAlive", (error) => Effect.succeed({ message: error.message, success: false }))
        )
        return { status: 200, body: RestMessages.ClearResponse.make({ ...answer, serverSparkVersion }) }
      }
      case "readyz": {
        const ready = yield* rpc.ask(master, new SubmissionMessages.RequestReadyz())
        return ready
          ? { status: 200, body: RestMessages.ReadyzResponse.make({ message: "", serverSparkVersion, success: true }) }
          : errorReply(options, 503, "Master is not ready.")
      }
    }
  }).pipe(Effect.orDie)

const create = (
  options: Options,
  submissions: Submissions,
  rpc: RpcEnv.RpcEnv,
  master: RpcAddress.Ref<Endpoints.Inbound["Master"]>,
  request: HttpServerRequest.HttpServerRequest
) =>
  Effect.gen(function*() {
    const serverSparkVersion = options.serverVersion
    const tooLarge = errorReply(
      options,
      413,
      `The request body exceeds the maximum allowed size (${options.maxRequestBodySize} bytes). Adjust ` +
        "kindling.master.rest.maxRequestBodySize to change the limit."
    )
    if (Number(request.headers["content-length"]) > options.maxRequestBodySize) return tooLarge
    const body = yield* request.text.pipe(
      HttpIncomingMessage.withMaxBodySize(Option.some(options.maxRequestBodySize)),
      Effect.either
    )
    if (Either.isLeft(body)) {
      return String(body.left.cause).includes("maxBytes exceeded")
        ? tooLarge
        : errorReply(options, 400, `Malformed request: the body could not be read: ${body.left.message}`)
    }
    const parsed = RestMessages.parse(body.right)
    if (Either.isLeft(parsed)) return errorReply(options, 400, parsed.left.message)
    const { message, unknownFields } = parsed.right
    if (message.action !== "CreateSubmissionRequest") {
      return errorReply(options, 400, `Received message of unexpected type ${message.action}.`)
    }
    const answer = (success: boolean, text: string, submissionId?: string): Reply => ({
      status: 200,
      body: RestMessages.CreateSubmissionResponse.make({
        message: text,
        serverSparkVersion,
        success,
        ...(submissionId === undefined ? {} : { submissionId }),
        ...(unknownFields.length === 0 ? {} : { unknownFields })
      })
    })
    const refuse = (reason: string) =>
      Effect.logInfo(`REST submission of ${message.appResource} refused: ${reason}`).pipe(
        Effect.as(answer(false, reason))
      )
    const patterns = options.allowedAppResourcePatterns
    if (patterns.length > 0 && !patterns.some((pattern) => pattern.test(message.appResource))) {
      return yield* refuse(
        `The app resource ${message.appResource} is not allowed: it matches none of ` +
          "kindling.master.rest.allowedAppResourcePatterns."
      )
    }
    const submission = yield* Effect.either(submissions.describe(message))
    if (Either.isLeft(submission)) return yield* refuse(submission.left.reason)
    const { description, notes } = submission.right
    const submitted = yield* Effect.either(
      rpc.ask(master, new SubmissionMessages.RequestSubmitDriver({ driverDescription: description }))
    )
    if (Either.isLeft(submitted)) {
      const refused = submitted.left._tag === "MasterNotAlive" || submitted.left._tag === "DriverLaunchFailed"
      if (refused) return answer(false, submitted.left.message)
      return yield* Effect.fail(submitted.left)
    }
    const response = submitted.right
    const text = notes.length === 0 ? response.message : `${response.message.replace(/\.?$/, ".")} ${notes.join(" ")}`
    return answer(response.success, text, Option.getOrUndefined(response.driverId))
  })
